package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

// Scopes are the scopes a client takes, its default first.
func Scopes(n client.Name) []Scope {
	switch n {
	case client.Claude:
		return []Scope{Project, Local, User}
	case client.Codex:
		// A project's .codex layer loads only when the user trusted the
		// project; the user's layer always does.
		return []Scope{User, Project}
	}
	return []Scope{Project, User}
}

// Files are where a client's hooks and MCP server live for a scope.
type Files struct {
	// Hooks is the settings file holding the hooks; for opencode the
	// plugin file, for Cline the hooks directory.
	Hooks string
	// MCP is the file holding the MCP server, and MCPKeys where in it the
	// server entry's parent object is (JSON files).
	MCP     string
	MCPKeys []string
}

// Locate is where o's client keeps its hooks and MCP server for o's scope.
func Locate(o Options) (Files, error) {
	n := o.Client
	if n == "" {
		n = client.Claude
	}
	if !slices.Contains(Scopes(n), o.Scope) {
		var s []string
		for _, sc := range Scopes(n) {
			s = append(s, string(sc))
		}
		return Files{}, fmt.Errorf("scope %q: %s takes %s", o.Scope, n.Title(), strings.Join(s, " or "))
	}
	project := o.Scope == Project
	servers := []string{"mcpServers"}
	switch n {
	case client.Claude:
		switch o.Scope {
		case Project:
			return Files{filepath.Join(o.Dir, ".claude", "settings.json"), filepath.Join(o.Dir, ".mcp.json"), servers}, nil
		case Local:
			return Files{filepath.Join(o.Dir, ".claude", "settings.local.json"), filepath.Join(o.Home, ".claude.json"), []string{"projects", o.Dir, "mcpServers"}}, nil
		}
		return Files{filepath.Join(o.Home, ".claude", "settings.json"), filepath.Join(o.Home, ".claude.json"), servers}, nil
	case client.Qwen, client.Gemini:
		dir := ".qwen"
		if n == client.Gemini {
			dir = ".gemini"
		}
		base := filepath.Join(o.Home, dir)
		if project {
			base = filepath.Join(o.Dir, dir)
		}
		f := filepath.Join(base, "settings.json")
		return Files{f, f, servers}, nil
	case client.Codex:
		base := CodexHome(o)
		if project {
			base = filepath.Join(o.Dir, ".codex")
		}
		return Files{Hooks: filepath.Join(base, "hooks.json"), MCP: filepath.Join(base, "config.toml")}, nil
	case client.OpenCode:
		base := filepath.Join(configHome(o), "opencode")
		if project {
			base = filepath.Join(o.Dir, ".opencode")
		}
		return Files{filepath.Join(base, "plugin", "laserbrain.js"), filepath.Join(base, "opencode.json"), []string{"mcp"}}, nil
	case client.Cline:
		hooks := filepath.Join(clineDir(o), "hooks")
		if project {
			hooks = filepath.Join(o.Dir, ".clinerules", "hooks")
		}
		return Files{hooks, clineMCPSettings(o), servers}, nil
	case client.Copilot:
		home := copilotHome(o)
		hooks := filepath.Join(home, "settings.json")
		if project {
			hooks = filepath.Join(o.Dir, ".github", "hooks", "laserbrain.json")
		}
		return Files{hooks, filepath.Join(home, "mcp-config.json"), servers}, nil
	}
	return Files{}, fmt.Errorf("unknown client %q", n)
}

// CodexHome is Codex's home: $CODEX_HOME, else ~/.codex.
func CodexHome(o Options) string { return o.dirOr("CODEX_HOME", ".codex") }

func configHome(o Options) string { return o.dirOr("XDG_CONFIG_HOME", ".config") }

func clineDir(o Options) string { return o.dirOr("CLINE_DIR", ".cline") }

// clineMCPSettings is Cline's MCP settings file (Cline 3.0.65:
// $CLINE_MCP_SETTINGS_PATH, else $CLINE_DATA_DIR or ~/.cline/data, then
// settings/cline_mcp_settings.json).
func clineMCPSettings(o Options) string {
	if p := o.getenv("CLINE_MCP_SETTINGS_PATH"); p != "" {
		return p
	}
	data := o.getenv("CLINE_DATA_DIR")
	if data == "" {
		data = filepath.Join(clineDir(o), "data")
	}
	return filepath.Join(data, "settings", "cline_mcp_settings.json")
}

func copilotHome(o Options) string { return o.dirOr("COPILOT_HOME", ".copilot") }

// dirOr is the directory env names in o's environment, else dot in o's
// home.
func (o Options) dirOr(env, dot string) string {
	if d := o.getenv(env); d != "" {
		return d
	}
	return filepath.Join(o.Home, dot)
}

// MCPEntry is the MCP server entry client n reads, as a JSON value (Codex's
// is TOML: codexServerTable).
func MCPEntry(n client.Name, self string) orderedMap {
	switch n {
	case client.Claude:
		return orderedMap{{"type", "stdio"}, {"command", self}, {"args", []string{"mcp"}}}
	case client.Gemini, client.Qwen:
		// trust: laserbrain's tools are reporting; a confirmation for
		// each would stand between the agent and its check.
		return orderedMap{{"command", self}, {"args", []string{"mcp"}}, {"trust", true}}
	case client.OpenCode:
		return orderedMap{{"type", "local"}, {"command", []string{self, "mcp"}}, {"enabled", true}}
	case client.Cline:
		return orderedMap{{"command", self}, {"args", []string{"mcp"}}, {"disabled", false}}
	case client.Copilot:
		return orderedMap{{"type", "local"}, {"command", self}, {"args", []string{"mcp"}}, {"tools", []string{"*"}}}
	}
	return nil
}

// Plan computes the changes that install (or remove) laserbrain for o's
// client and scope. Nothing is written; Apply writes them. (Codex's hooks
// also need trusting after they are written: TrustCodex.)
func Plan(o Options) ([]Change, error) {
	if !filepath.IsAbs(o.Self) {
		return nil, fmt.Errorf("the laserbrain path %q is not absolute (hooks must not depend on PATH)", o.Self)
	}
	n := o.Client
	if n == "" || n == client.Claude {
		return Claude(o)
	}
	f, err := Locate(o)
	if err != nil {
		return nil, err
	}
	switch n {
	case client.Qwen, client.Gemini:
		c, err := edit(f.Hooks, func(root *node) error {
			if err := mergeGroupedHooks(root, n, o.Self, o.Remove, f.Hooks); err != nil {
				return err
			}
			if n == client.Gemini {
				if err := mergeRedactionAllowed(root, o.Remove, f.Hooks); err != nil {
					return err
				}
			}
			return mergeServer(root, f.MCPKeys, fromValue(MCPEntry(n, o.Self)), o.Self, o.Remove, f.Hooks)
		})
		if err != nil {
			return nil, err
		}
		return []Change{removeEmpty(c, o.Remove && o.Scope == Project)}, nil
	case client.Codex:
		return codexChanges(o, f)
	case client.OpenCode:
		plugin, err := ownFile(f.Hooks, pluginMarker, renderPlugin(o.Self), 0o644, o.Remove)
		if err != nil {
			return nil, err
		}
		mcp, err := mcpServer(f, n, o)
		if err != nil {
			return nil, err
		}
		return []Change{plugin, removeEmpty(mcp, o.Remove && o.Scope == Project)}, nil
	case client.Cline:
		var out []Change
		for _, h := range client.Hooks(client.Cline) {
			c, err := ownFile(filepath.Join(f.Hooks, h.ClientEvent), clineMarker, clineScript(o.Self, h), 0o755, o.Remove)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		mcp, err := mcpServer(f, n, o)
		if err != nil {
			return nil, err
		}
		return append(out, mcp), nil
	case client.Copilot:
		hooks, err := edit(f.Hooks, func(root *node) error {
			if o.Scope == Project && !o.Remove && root.get("version") == nil {
				root.set("version", &node{kind: 's', scalar: 1})
			}
			return mergeFlatHooks(root, o.Self, o.Remove, f.Hooks)
		})
		if err != nil {
			return nil, err
		}
		if o.Remove && o.Scope == Project {
			hooks = dropIfOnly(hooks, "version")
		}
		mcp, err := mcpServer(f, n, o)
		if err != nil {
			return nil, err
		}
		return []Change{hooks, mcp}, nil
	}
	return nil, fmt.Errorf("unknown client %q", n)
}

// mcpServer is the change that adds (or removes) laserbrain's MCP server
// in the file f.MCP.
func mcpServer(f Files, n client.Name, o Options) (Change, error) {
	return edit(f.MCP, func(root *node) error {
		return mergeServer(root, f.MCPKeys, fromValue(MCPEntry(n, o.Self)), o.Self, o.Remove, f.MCP)
	})
}

// codexChanges are Codex's hooks file and its config.toml with the MCP server
// and the sandbox settings laserbrain needs (under a project, mindful of
// the user's own sandbox mode).
func codexChanges(o Options, f Files) ([]Change, error) {
	n := client.Codex
	hooks, err := edit(f.Hooks, func(root *node) error { return mergeGroupedHooks(root, n, o.Self, o.Remove, f.Hooks) })
	if err != nil {
		return nil, err
	}
	cfg, err := editCodexConfig(f.MCP, o.Self, o.Remove)
	if err != nil {
		return nil, err
	}
	var userMode string
	if o.Scope == Project {
		sb, err := CodexSandboxOf(filepath.Join(CodexHome(o), "config.toml"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the user's Codex config: %w", err)
		}
		userMode = sb.Mode
	}
	if cfg, _, err = editCodexSandbox(cfg, o, userMode); err != nil {
		return nil, err
	}
	return []Change{removeEmpty(hooks, o.Remove), cfg}, nil
}

func removeEmpty(c Change, drop bool) Change {
	if !drop {
		return c
	}
	return dropIfEmpty(c)
}

// dropIfOnly removes a file an uninstall left holding only keys.
func dropIfOnly(c Change, keys ...string) Change {
	if c.After == nil {
		return c
	}
	root, err := parseJSON(c.After)
	if err != nil || root.kind != '{' {
		return c
	}
	for _, m := range root.members {
		if !slices.Contains(keys, m.key) {
			return c
		}
	}
	c.After, c.Delete = nil, true
	return c
}

// mergeRedactionAllowed lists our variables in Gemini CLI's
// security.environmentVariableRedaction.allowed: with redaction on (and
// always under GitHub Actions, where Gemini CLI keeps only what is
// allowed) hooks and MCP servers would otherwise lose LASERBRAIN_RUN and
// the rest. Remove takes them out again.
func mergeRedactionAllowed(root *node, remove bool, path string) error {
	keys := []string{"security", "environmentVariableRedaction"}
	chain, err := root.objectsAt(keys, path, remove)
	if chain == nil {
		return err
	}
	cur := chain[2]
	if remove && cur.get("allowed") == nil {
		return nil
	}
	_, empty, err := mergeStrings(cur, "allowed", client.MCPEnv, remove, "security.environmentVariableRedaction.allowed", path)
	if err != nil {
		return err
	}
	if remove {
		if empty {
			cur.del("allowed")
		}
		dropEmptied(chain, keys)
	}
	return nil
}

// ownFile is a file laserbrain writes whole (the opencode plugin, Cline's
// hook scripts), recognised by a marker in its first lines: a file there
// that is not ours is refused, never overwritten.
func ownFile(path, marker string, content []byte, mode fs.FileMode, remove bool) (Change, error) {
	c, err := current(path)
	switch {
	case err != nil:
		return c, err
	case c.Before == nil:
		c.Mode = mode
	case !bytes.Contains(firstLines(c.Before, 3), []byte(marker)):
		if remove {
			c.After = c.Before // not ours: left alone
			return c, nil
		}
		return c, fmt.Errorf("%s is there and is not laserbrain's; move it aside or merge it by hand (nothing was changed)", path)
	default:
		c.Mode |= mode & 0o111
	}
	if remove {
		c.Delete = true
		return c, nil
	}
	c.After = content
	return c, nil
}

func firstLines(data []byte, n int) []byte {
	end := 0
	for i := 0; i < n && end < len(data); i++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			return data
		}
		end += j + 1
	}
	return data[:end]
}

// clineMarker marks a Cline hook script as laserbrain's.
const clineMarker = "laserbrain hook for Cline"

// IsClineHook reports whether data is one of laserbrain's Cline hook
// scripts, and the command it runs (its last line).
func IsClineHook(data []byte) (command string, ok bool) {
	if !bytes.Contains(firstLines(data, 3), []byte(clineMarker)) {
		return "", false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1], true
}

// clineScript is the executable Cline runs for one hook: the guarded
// command, so a moved binary still cancels the call.
func clineScript(self string, h client.Hook) []byte {
	return []byte("#!/bin/sh\n# " + clineMarker + " (" + h.ClientEvent + "): written by laserbrain install cline; reinstall rather than edit.\n" +
		client.HookCommand(self, client.Cline, h.Event) + "\n")
}

// HeldFile is a client's settings or hook file that an agent must not
// write, and what it is.
type HeldFile struct {
	Path, What string
}

// HeldFiles are every client's settings and hook files for the project in
// dir and the user's home, whether they exist yet or not, and the
// system-wide policy files that rule every user's sessions: what the
// kernel's confinement holds under laserbrain run (supercode/confine). The
// project's .claude directory is held whole (settings.local.json, hook
// scripts), and so are the other clients' project directories.
func HeldFiles(dir, home string, getenv func(string) string) []HeldFile {
	var out []HeldFile
	seen := map[string]bool{}
	add := func(p, what string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, HeldFile{p, what})
		}
	}
	add(filepath.Join(dir, ".claude"), "Claude Code's project settings and hooks")
	add(filepath.Join(dir, ".codex"), "Codex's project settings and hooks")
	add(filepath.Join(dir, ".gemini"), "Gemini CLI's project settings")
	add(filepath.Join(dir, ".qwen"), "Qwen Code's project settings")
	add(filepath.Join(dir, ".opencode"), "opencode's project settings and plugins")
	add(filepath.Join(dir, ".clinerules"), "Cline's project rules and hooks")
	add(filepath.Join(dir, ".cline"), "Cline's project hooks")
	add(filepath.Join(dir, ".github", "hooks"), "Copilot CLI's project hooks")
	add(filepath.Join(dir, "opencode.json"), "opencode's project settings")
	add(filepath.Join(dir, "opencode.jsonc"), "opencode's project settings")
	add(filepath.Join(home, ".claude.json"), "Claude Code's user state (its MCP servers)")
	for _, n := range client.Names {
		for _, scope := range Scopes(n) {
			f, err := Locate(Options{Client: n, Scope: scope, Dir: dir, Home: home, Getenv: getenv})
			if err != nil {
				continue
			}
			what := n.Title() + "'s " + string(scope) + " settings"
			add(f.Hooks, what+" (its hooks)")
			add(f.MCP, what+" (its MCP servers)")
		}
	}
	o := Options{Dir: dir, Home: home, Getenv: getenv}
	add(filepath.Join(configHome(o), "opencode", "opencode.jsonc"), "opencode's user settings")
	add(filepath.Join(configHome(o), "opencode", "plugin"), "opencode's user plugins")
	for _, f := range SystemFiles(getenv) {
		add(f.Path, f.What)
	}
	return out
}

// SystemFiles are the clients' system-wide policy files: written by root,
// they rule every user's sessions (a managed setting can switch every
// hook off).
func SystemFiles(getenv func(string) string) []HeldFile {
	out := []HeldFile{
		{"/etc/claude-code/managed-settings.json", "Claude Code's managed settings (every user)"},
		{"/etc/claude-code/managed-mcp.json", "Claude Code's managed MCP servers (every user)"},
		{"/etc/codex/config.toml", "Codex's system settings (every user)"},
		{"/etc/codex/requirements.toml", "Codex's system requirements (every user)"},
		{"/etc/gemini-cli/settings.json", "Gemini CLI's system settings (every user)"},
		{"/etc/gemini-cli/system-defaults.json", "Gemini CLI's system defaults (every user)"},
		{"/etc/qwen-code/settings.json", "Qwen Code's system settings (every user)"},
		{"/etc/opencode/opencode.json", "opencode's system settings (every user)"},
	}
	for _, v := range []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "QWEN_CODE_SYSTEM_SETTINGS_PATH"} {
		if p := getenv(v); filepath.IsAbs(p) {
			out = append(out, HeldFile{p, "a system settings layer ($" + v + ")"})
		}
	}
	return out
}
