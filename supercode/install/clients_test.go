package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/laserkit/laserkit/supercode/client"
)

// userJSON is what a user already has in a JSON settings file, rendered as
// the clients write them: every key must survive an install, and an
// uninstall must give it back byte for byte.
const userJSON = `{
  "theme": "dark",
  "n": 1.50,
  "hooks": {
    "Mine": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "my-own-hook"
          }
        ]
      }
    ]
  },
  "mcpServers": {
    "other": {
      "command": "/usr/bin/other"
    }
  },
  "mcp": {
    "other": {
      "type": "local",
      "command": [
        "/usr/bin/other"
      ]
    }
  }
}
`

// userTOML is a Codex config.toml with comments and a table after where
// ours goes.
const userTOML = `# my codex settings
model = "o3" # the model

[mcp_servers.other]
command = "/usr/bin/other"
args = ["--x"]

[projects."/src/shop"]
trust_level = "trusted"
`

type clientCase struct {
	n     client.Name
	scope Scope
}

func everyClientAndScope() []clientCase {
	var out []clientCase
	for _, n := range client.Names {
		for _, s := range Scopes(n) {
			out = append(out, clientCase{n, s})
		}
	}
	return out
}

// seed puts the user's own settings in every file an install would edit
// (not in the files laserbrain owns whole: the plugin, Cline's scripts).
func seed(t *testing.T, o Options) map[string][]byte {
	t.Helper()
	f, err := Locate(o)
	if err != nil {
		t.Fatal(err)
	}
	seeded := map[string][]byte{}
	put := func(path, content string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		seeded[path] = []byte(content)
	}
	switch o.Client {
	case client.Codex:
		put(f.Hooks, userJSON)
		put(f.MCP, userTOML)
	case client.OpenCode:
		put(f.MCP, userJSON)
	case client.Cline:
		put(f.MCP, userJSON)
	case client.Copilot:
		if o.Scope == User {
			put(f.Hooks, userJSON)
		}
		put(f.MCP, userJSON)
	default:
		put(f.Hooks, userJSON)
		put(f.MCP, userJSON)
	}
	return seeded
}

func plan(t *testing.T, o Options) []Change {
	t.Helper()
	cs, err := Plan(o)
	if err != nil {
		t.Fatalf("%s %s: %v", o.Client, o.Scope, err)
	}
	return cs
}

// installedCommands reads back every hook command the install wrote for
// its client, by event name as the client spells it.
func installedCommands(t *testing.T, o Options) map[string]string {
	t.Helper()
	f, _ := Locate(o)
	out := map[string]string{}
	switch o.Client {
	case client.Cline:
		for _, h := range client.Hooks(client.Cline) {
			data, err := os.ReadFile(filepath.Join(f.Hooks, h.ClientEvent))
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(filepath.Join(f.Hooks, h.ClientEvent)); fi.Mode()&0o111 == 0 {
				t.Errorf("Cline hook %s is not executable", h.ClientEvent)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			out[h.ClientEvent] = lines[len(lines)-1]
		}
		return out
	case client.OpenCode:
		data, err := os.ReadFile(f.Hooks)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(pluginMarker)) || bytes.Contains(data, []byte("/*ARGV*/")) {
			t.Errorf("the plugin was not rendered:\n%s", data)
		}
		return out
	}
	var v struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	data, _ := os.ReadFile(f.Hooks)
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", f.Hooks, err)
	}
	for ev, list := range v.Hooks {
		for _, g := range list {
			if o.Client == client.Copilot {
				if c, _ := g["bash"].(string); c != "" {
					out[ev] = c
				}
				continue
			}
			inner, _ := g["hooks"].([]any)
			for _, h := range inner {
				if c, _ := h.(map[string]any)["command"].(string); strings.Contains(c, "laserbrain") {
					out[ev] = c
				}
			}
		}
	}
	return out
}

// Every client, every scope: our hooks and server go in, the user's keys
// stay, a second install changes no byte, and uninstall gives back the
// user's files as they were (and removes the ones install created).
func TestEveryClientInstallsAndUninstalls(t *testing.T) {
	for _, c := range everyClientAndScope() {
		t.Run(string(c.n)+"/"+string(c.scope), func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			o := Options{Client: c.n, Scope: c.scope, Dir: dir, Home: home, Self: self}
			seeded := seed(t, o)
			if err := Apply(plan(t, o)); err != nil {
				t.Fatal(err)
			}
			for path := range seeded {
				data, _ := os.ReadFile(path)
				for _, want := range []string{"my-own-hook", `"/usr/bin/other"`} {
					if filepath.Ext(path) == ".json" && !bytes.Contains(data, []byte(want)) {
						t.Errorf("%s lost the user's %s:\n%s", path, want, data)
					}
				}
				if filepath.Ext(path) == ".toml" && !bytes.Contains(data, []byte("# my codex settings\nmodel = \"o3\" # the model\n")) {
					t.Errorf("%s lost the user's lines:\n%s", path, data)
				}
			}
			cmds := installedCommands(t, o)
			for _, h := range client.Hooks(c.n) {
				if c.n == client.OpenCode {
					break
				}
				p, ok := client.ParseCommand(cmds[h.ClientEvent], self)
				if !ok || p.Event != h.Event || p.Client != c.n || !p.Guarded {
					t.Errorf("%s: hook %s = %q (%+v)", c.n, h.ClientEvent, cmds[h.ClientEvent], p)
				}
			}
			if err := checkServer(o); err != nil {
				t.Error(err)
			}
			for _, ch := range plan(t, o) {
				if ch.Changed() {
					t.Errorf("a second install changes %s:\n%s", ch.Path, ch.Diff())
				}
			}
			o.Remove = true
			if err := Apply(plan(t, o)); err != nil {
				t.Fatal(err)
			}
			for path, want := range seeded {
				if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
					t.Errorf("uninstall left %s as\n%s\nwant\n%s", path, got, want)
				}
			}
			f, _ := Locate(o)
			for _, p := range []string{f.Hooks, f.MCP} {
				if _, ok := seeded[p]; ok {
					continue
				}
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
					data, _ := os.ReadFile(p)
					t.Errorf("uninstall left %s, which install created:\n%s", p, data)
				}
				if c.n == client.Cline {
					entries, _ := os.ReadDir(p)
					if len(entries) > 0 {
						t.Errorf("uninstall left Cline hooks: %v", entries)
					}
				}
			}
		})
	}
}

// checkServer reads our MCP server back from the file install wrote.
func checkServer(o Options) error {
	f, _ := Locate(o)
	data, err := os.ReadFile(f.MCP)
	if err != nil {
		return err
	}
	if o.Client == client.Codex {
		cmd, vars, ok, err := CodexServerVars(data)
		if err != nil || !ok || cmd != self || !slices.Equal(vars, client.MCPEnv) {
			return &serverErr{f.MCP, string(data)}
		}
		var v map[string]any
		if _, err := toml.Decode(string(data), &v); err != nil {
			return err
		}
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	var cur any = v
	for _, k := range f.MCPKeys {
		cur = cur.(map[string]any)[k]
	}
	entry, _ := cur.(map[string]any)[client.ServerName].(map[string]any)
	got := entry["command"]
	if list, ok := got.([]any); ok && len(list) > 0 {
		got = list[0]
	}
	if got != self {
		return &serverErr{f.MCP, string(data)}
	}
	return nil
}

type serverErr struct{ path, data string }

func (e *serverErr) Error() string { return e.path + " has no laserbrain server:\n" + e.data }

// Gemini CLI keeps only allowed variables under GitHub Actions (and with
// redaction on): install lists ours, uninstall takes them out, the user's
// own entries stay.
func TestGeminiAllowsOurVariables(t *testing.T) {
	dir := t.TempDir()
	o := Options{Client: client.Gemini, Scope: Project, Dir: dir, Home: t.TempDir(), Self: self}
	path := filepath.Join(dir, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	user := "{\n  \"security\": {\n    \"environmentVariableRedaction\": {\n      \"allowed\": [\n        \"MY_VAR\"\n      ]\n    }\n  }\n}\n"
	if err := os.WriteFile(path, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Apply(plan(t, o)); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Security struct {
			Redaction struct {
				Allowed []string `json:"allowed"`
			} `json:"environmentVariableRedaction"`
		} `json:"security"`
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if want := append([]string{"MY_VAR"}, client.MCPEnv...); !slices.Equal(v.Security.Redaction.Allowed, want) {
		t.Errorf("allowed %v, want %v", v.Security.Redaction.Allowed, want)
	}
	o.Remove = true
	if err := Apply(plan(t, o)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != user {
		t.Errorf("uninstall left\n%s", got)
	}
}

// What cannot be edited safely is refused, with nothing written.
func TestRefusedWithNothingWritten(t *testing.T) {
	for _, c := range []struct {
		n       client.Name
		scope   Scope
		file    func(f Files) string
		content string
		want    string
	}{
		{client.Gemini, Project, func(f Files) string { return f.Hooks }, `{"hooks": [}`, "is not valid JSON"},
		{client.Qwen, User, func(f Files) string { return f.Hooks }, `["a list"]`, "does not hold a JSON object"},
		{client.Copilot, Project, func(f Files) string { return f.Hooks }, `{"version":1,"hooks":{"preToolUse":{}}}`, "hooks.preToolUse is not a list"},
		{client.Codex, User, func(f Files) string { return f.MCP }, "model = \n", "is not valid TOML (fix it by hand; nothing was changed): line 1, column"},
		{client.Codex, User, func(f Files) string { return f.MCP }, "mcp_servers.laserbrain.command = \"/x\"\n", "other than as a [mcp_servers.laserbrain] table"},
		{client.Codex, User, func(f Files) string { return f.MCP }, "[mcp_servers]\nlaserbrain = { command = \"/x\" }\n", "other than as a [mcp_servers.laserbrain] table"},
		{client.OpenCode, Project, func(f Files) string { return f.Hooks }, "export const Mine = async () => ({})\n", "is not laserbrain's"},
		{client.Cline, Project, func(f Files) string { return filepath.Join(f.Hooks, "PreToolUse") }, "#!/bin/sh\necho mine\n", "is not laserbrain's"},
	} {
		dir, home := t.TempDir(), t.TempDir()
		o := Options{Client: c.n, Scope: c.scope, Dir: dir, Home: home, Self: self}
		f, _ := Locate(o)
		path := c.file(f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Plan(o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", c.n, c.content, err, c.want)
		}
		if got, _ := os.ReadFile(path); string(got) != c.content {
			t.Errorf("%s: the file changed", c.n)
		}
	}
}

// Codex's config.toml: ours replaces an older entry of ours in place
// (a reinstall from a new path), the rest untouched.
func TestCodexConfigReplacedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	old := "model = \"o3\"\n\n[mcp_servers.laserbrain]\ncommand = \"/old/laserbrain\"\nargs = [\"mcp\"]\n\n[mcp_servers.laserbrain.env]\nX = \"1\"\n\n# about the next table\n[tui]\ntheme = \"dark\"\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := editCodexConfig(path, self, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "model = \"o3\"\n\n" + codexServerTable(self) + "\n# about the next table\n[tui]\ntheme = \"dark\"\n"
	if string(c.After) != want {
		t.Errorf("got\n%s\nwant\n%s", c.After, want)
	}
	c, err = editCodexConfig(path, self, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "model = \"o3\"\n\n# about the next table\n[tui]\ntheme = \"dark\"\n"; string(c.After) != want {
		t.Errorf("removed: got\n%s\nwant\n%s", c.After, want)
	}
}
