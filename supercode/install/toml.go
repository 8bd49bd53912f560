package install

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/laserkit/laserkit/supercode/client"
)

// codexServerTable is our MCP server in Codex's config.toml. Codex starts
// MCP servers with a scrubbed environment: env_vars lists what ours must
// keep (the run, the agent, the fleet, the home, the store).
func codexServerTable(self string) string {
	vars := make([]string, len(client.MCPEnv))
	for i, v := range client.MCPEnv {
		vars[i] = tomlString(v)
	}
	return "[mcp_servers." + client.ServerName + "]\n" +
		"command = " + tomlString(self) + "\n" +
		"args = [\"mcp\"]\n" +
		"env_vars = [" + strings.Join(vars, ", ") + "]\n"
}

// decodeTOML reads a TOML document into v, with an error naming the line
// and column: the one TOML reader install and doctor use (go-toml v2,
// which does no work at package init; every laserbrain process links it).
func decodeTOML(doc string, v any) error {
	err := toml.Unmarshal([]byte(doc), v)
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("line %d, column %d: %v", row, col, de)
	}
	return err
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ourHeader matches the header of our server's table or one of its
// subtables: [mcp_servers.laserbrain], [mcp_servers."laserbrain".env], …
var ourHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(?:"` + client.ServerName + `"|'` + client.ServerName + `'|` + client.ServerName + `)\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$`)
})

// anyHeader matches a table or array-of-tables header.
var anyHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[`) })

// editCodexConfig puts our MCP server in Codex's config.toml (or takes it
// out), as text: every other line of the user's file stays as it was,
// comments included. Our server is the [mcp_servers.laserbrain] table
// (and its subtables); one defined any other way (an inline table, dotted
// keys) is refused. The result is read back: if anything but our server
// changed meaning, nothing is written.
func editCodexConfig(path, self string, remove bool) (Change, error) {
	c, err := current(path)
	if err != nil {
		return c, err
	}
	data := c.Before
	before := map[string]any{}
	if err := decodeTOML(string(data), &before); err != nil {
		return c, fmt.Errorf("%s is not valid TOML (fix it by hand; nothing was changed): %w", path, err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start, end, split := ourBlock(lines)
	if split {
		return c, fmt.Errorf("%s: the %s server's tables are split apart; put them together or edit it by hand (nothing was changed)", path, client.ServerName)
	}
	defined := hasServer(before)
	if defined && start < 0 {
		return c, fmt.Errorf("%s defines mcp_servers.%s other than as a [mcp_servers.%s] table; edit it by hand (nothing was changed)", path, client.ServerName, client.ServerName)
	}
	ours := codexServerTable(self)
	var out strings.Builder
	switch {
	case start >= 0:
		out.WriteString(strings.Join(lines[:start], ""))
		if !remove {
			out.WriteString(ours)
		}
		rest := lines[end:]
		if remove {
			// Do not leave two blank lines where the table was, nor a
			// blank line at the end where it was last (install put it
			// there).
			for len(rest) > 0 && strings.TrimSpace(rest[0]) == "" && (start == 0 || strings.TrimSpace(lines[start-1]) == "") {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				head := strings.TrimRight(out.String(), "\n")
				out.Reset()
				if head != "" {
					out.WriteString(head + "\n")
				}
			}
		}
		out.WriteString(strings.Join(rest, ""))
	case remove:
		c.After = c.Before
		return c, nil
	default:
		text := string(data)
		out.WriteString(text)
		if text != "" {
			if !strings.HasSuffix(text, "\n") {
				out.WriteString("\n")
			}
			out.WriteString("\n")
		}
		out.WriteString(ours)
	}
	after := out.String()
	// Read it back: the user's settings mean what they meant, ours is
	// there (or gone).
	got := map[string]any{}
	if err := decodeTOML(after, &got); err != nil {
		return c, fmt.Errorf("%s: adding the %s server would not leave valid TOML (%v); add it by hand:\n%s", path, client.ServerName, err, ours)
	}
	if hasServer(got) == remove || !reflect.DeepEqual(withoutServer(before), withoutServer(got)) {
		return c, fmt.Errorf("%s: the %s server could not be changed without touching the rest; edit it by hand:\n%s", path, client.ServerName, ours)
	}
	if c.Before == nil && remove {
		return c, nil
	}
	c.After = []byte(after)
	if strings.TrimSpace(after) == "" && c.Before != nil {
		c.After, c.Delete = nil, true
	}
	return c, nil
}

// ourBlock finds our server's tables among lines: from our header to the
// next header that is not ours, without the blank and comment lines just
// before that header (start -1 when there is none). split: our tables
// stand apart, with another's between them.
func ourBlock(lines []string) (start, end int, split bool) {
	start, end, next := -1, -1, -1
	for i := 0; i < len(lines); i++ {
		if !ourHeader().MatchString(strings.TrimRight(lines[i], "\r\n")) {
			continue
		}
		if start >= 0 && next != i {
			return start, end, true
		}
		if start < 0 {
			start = i
		}
		j := i + 1
		for j < len(lines) && !anyHeader().MatchString(lines[j]) {
			j++
		}
		end, next = j, j
		for end > i+1 {
			t := strings.TrimSpace(lines[end-1])
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			end--
		}
		i = j - 1
	}
	return start, end, false
}

func hasServer(m map[string]any) bool {
	s, _ := m["mcp_servers"].(map[string]any)
	_, ok := s[client.ServerName]
	return ok
}

// withoutServer is the config without our server (and without an
// mcp_servers table left empty by taking it out).
func withoutServer(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	if s, ok := out["mcp_servers"].(map[string]any); ok {
		rest := map[string]any{}
		for k, v := range s {
			if k != client.ServerName {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			delete(out, "mcp_servers")
		} else {
			out["mcp_servers"] = rest
		}
	}
	return out
}

// CodexServerVars reads our server from a Codex config.toml: its command
// and the variables its env_vars lists (doctor checks them against
// client.MCPEnv); ok is false when the config has no server of ours.
func CodexServerVars(data []byte) (command string, vars []string, ok bool, err error) {
	var cfg struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if err := decodeTOML(string(data), &cfg); err != nil {
		return "", nil, false, err
	}
	s, ok := cfg.MCPServers[client.ServerName]
	if !ok {
		return "", nil, false, nil
	}
	command, _ = s["command"].(string)
	list, _ := s["env_vars"].([]any)
	for _, v := range list {
		if name, ok := v.(string); ok {
			vars = append(vars, name)
		}
	}
	return command, vars, true, nil
}
