package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/client"
)

const self = "/opt/laser kit/bin/laserbrain"

// apply plans the install (or, with o.Remove, the uninstall) o says, of
// Claude Code's hooks when o names no client, and applies it.
func apply(t *testing.T, o Options) []Change {
	t.Helper()
	cs := plan(t, o)
	if err := Apply(cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func decode(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// The user's settings keep every key and value, in order; ours are added;
// a second install changes no byte; uninstall gives the user's back.
func TestProjectInstallPreservesAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	user := `{"model":"opus","permissions":{"allow":["Bash(ls *)"],"deny":[]},` +
		`"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"my-own-hook"}]}]},` +
		`"n":1.50,"big":12345678901234567890,"text":"<b>é</b>"}`
	if err := os.WriteFile(settings, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Scope: Project, Dir: dir, Home: t.TempDir(), Self: self}
	apply(t, o)
	first, _ := os.ReadFile(settings)
	// The user's file is on one line: it stays so, ours added in its style.
	for _, want := range []string{`"n":1.50`, `"big":12345678901234567890`, `"text":"<b>é</b>"`, `"command":"my-own-hook"`,
		`"'/opt/laser kit/bin/laserbrain' hook pre-tool-use --format json --ok-status 86; [ $? = 86 ] || exit 2"`, `"timeout":30`, `"enabledMcpjsonServers":[`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("installed settings lack %s:\n%s", want, first)
		}
	}
	if i, j := bytes.Index(first, []byte(`"model"`)), bytes.Index(first, []byte(`"text"`)); i < 0 || j < i {
		t.Error("the user's keys changed order")
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
	v := decode(t, settings)
	hooks := v["hooks"].(map[string]any)
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"} {
		if hooks[ev] == nil {
			t.Errorf("no %s hook", ev)
		}
	}
	if n := len(hooks["PreToolUse"].([]any)); n != 2 {
		t.Errorf("PreToolUse has %d groups, want the user's and ours", n)
	}
	mcp := decode(t, filepath.Join(dir, ".mcp.json"))
	if mcp["mcpServers"].(map[string]any)["laserbrain"].(map[string]any)["command"] != self {
		t.Errorf(".mcp.json = %v", mcp)
	}

	// Byte-idempotent, and --dry-run has nothing to show.
	cs := apply(t, o)
	for _, c := range cs {
		if c.Changed() || c.Diff() != "" {
			t.Errorf("second install changes %s:\n%s", c.Path, c.Diff())
		}
	}
	second, _ := os.ReadFile(settings)
	if !bytes.Equal(first, second) {
		t.Fatal("the second install changed bytes")
	}

	// A reinstall from another path replaces ours in place.
	o2 := o
	o2.Self = "/usr/local/bin/laserbrain"
	apply(t, o2)
	moved, _ := os.ReadFile(settings)
	if bytes.Contains(moved, []byte("/opt/laser kit")) || bytes.Count(moved, []byte("hook pre-tool-use")) != 1 {
		t.Fatalf("reinstall did not replace in place:\n%s", moved)
	}

	apply(t, Options{Scope: Project, Dir: dir, Home: o.Home, Self: o2.Self, Remove: true})
	back := decode(t, settings)
	var want map[string]any
	if err := json.Unmarshal([]byte(user), &want); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	bb, _ := json.Marshal(back)
	if string(wb) != string(bb) {
		t.Fatalf("after uninstall:\n%s\nwant the user's:\n%s", bb, wb)
	}
	if got, _ := os.ReadFile(settings); string(got) != user {
		t.Fatalf("after uninstall the bytes differ:\n%s\nwant the user's:\n%s", got, user)
	}
}

// Uninstall gives a settings file back byte for byte, whatever its layout
// — indented by four spaces or tabs, on one line, with CRLF line ends,
// with objects install adds to (permissions, hooks, sandbox) and without,
// empty, without a final newline — and install keeps every byte of the
// user's own text, adding ours in the file's style.
func TestUninstallGivesTheBytesBack(t *testing.T) {
	files := map[string]string{
		"four spaces":  "{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": [\"Bash(ls *)\"]},\n    \"env\": { \"A\": \"1\" }\n}\n",
		"tabs":         "{\n\t\"hooks\": {\n\t\t\"PreToolUse\": [\n\t\t\t{\"matcher\": \"Write\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n\t\t]\n\t},\n\t\"sandbox\": {\"network\": {}}\n}\n",
		"one line":     `{"model":"opus","permissions":{"deny":["Read(./.env)"]},"n":1.50,"s":"\u00e9"}`,
		"crlf":         "{\r\n  \"model\": \"opus\"\r\n}\r\n",
		"empty inside": "{\n  \"env\": { },\n  \"x\": []\n}\n",
		"nested deep":  "{\n  \"a\": {\n    \"b\": [\n      1,\n      2\n    ]\n  },\n  \"permissions\": {\n    \"allow\": [],\n    \"deny\": [\n      \"Read(./.env)\"\n    ]\n  }\n}",
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			settings := filepath.Join(dir, ".claude", "settings.json")
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(settings, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			o := Options{Scope: Project, Dir: dir, Home: home, Self: self, Protect: []string{"/opt/laser kit/bin", filepath.Join(home, ".laserbrain")}}
			apply(t, o)
			installed, _ := os.ReadFile(settings)
			v := decode(t, settings)
			if v["hooks"] == nil || v["sandbox"] == nil {
				t.Fatalf("install wrote no hooks or sandbox:\n%s", installed)
			}
			if !strings.Contains(text, "\n") && strings.Contains(string(installed), "\n") {
				t.Errorf("a file on one line was spread over lines:\n%s", installed)
			}
			o.Remove = true
			apply(t, o)
			if got, _ := os.ReadFile(settings); string(got) != text {
				t.Errorf("after install and uninstall:\n%q\nwant the file as it was:\n%q\ninstalled:\n%s", got, text, installed)
			}
		})
	}
}

// Local and user scopes put the server in ~/.claude.json, keeping what the
// CLI keeps there.
func TestLocalAndUserScopes(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	claudeJSON := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(claudeJSON, []byte(`{"numStartups": 7, "projects": {"/elsewhere": {"allowedTools": []}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, Options{Scope: Local, Dir: dir, Home: home, Self: self})
	v := decode(t, claudeJSON)
	if v["numStartups"] != 7.0 || v["projects"].(map[string]any)["/elsewhere"] == nil {
		t.Fatalf("~/.claude.json lost keys: %v", v)
	}
	srv := v["projects"].(map[string]any)[dir].(map[string]any)["mcpServers"].(map[string]any)["laserbrain"]
	if srv == nil {
		t.Fatalf("no local server: %v", v)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.local.json")); err != nil {
		t.Fatal(err)
	}
	apply(t, Options{Scope: User, Dir: dir, Home: home, Self: self})
	v = decode(t, claudeJSON)
	if v["mcpServers"].(map[string]any)["laserbrain"] == nil {
		t.Fatalf("no user server: %v", v)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
}

// A settings file that is not a JSON object is refused, and nothing is
// written anywhere.
func TestBadSettingsRefused(t *testing.T) {
	for _, bad := range []string{`{"hooks": `, `[1,2]`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`, `{} trailing`} {
		dir := t.TempDir()
		settings := filepath.Join(dir, ".claude", "settings.json")
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(settings, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Claude(Options{Scope: Project, Dir: dir, Home: t.TempDir(), Self: self})
		if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s: err = %v", bad, err)
		}
		if got, _ := os.ReadFile(settings); string(got) != bad {
			t.Errorf("%s was rewritten", bad)
		}
		if _, err := os.Stat(filepath.Join(dir, ".mcp.json")); err == nil {
			t.Errorf("%s: .mcp.json written anyway", bad)
		}
	}
	if _, err := Claude(Options{Scope: "team", Dir: t.TempDir(), Self: self}); err == nil {
		t.Error("an unknown scope was accepted")
	}
	if _, err := Claude(Options{Scope: Project, Dir: t.TempDir(), Self: "laserbrain"}); err == nil {
		t.Error("a relative laserbrain path was accepted")
	}
}

// With laserbrain-gate installed beside laserbrain, the hooks of every tool
// call (pre-tool-use, post-tool-use) are the gate, which starts faster; a
// second install changes
// nothing, and uninstall takes it out like the others.
func TestPreToolUseUsesTheGateBeside(t *testing.T) {
	bin := t.TempDir()
	lb := filepath.Join(bin, "laserbrain")
	gate := filepath.Join(bin, "laserbrain-gate")
	for _, p := range []string{lb, gate} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	o := Options{Scope: Project, Dir: dir, Home: t.TempDir(), Self: lb}
	apply(t, o)
	settings := filepath.Join(dir, ".claude", "settings.json")
	hooks := decode(t, settings)["hooks"].(map[string]any)
	pre := hooks["PreToolUse"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"].(string)
	if p, ok := client.ParseCommand(pre, lb); !ok || p.Program != gate || !p.Guarded {
		t.Fatalf("PreToolUse command %q runs %+v, want the gate %q, guarded", pre, p, gate)
	}
	post := hooks["PostToolUse"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"].(string)
	if p, ok := client.ParseCommand(post, lb); !ok || p.Program != gate || p.Event != client.PostToolUse {
		t.Fatalf("PostToolUse command %q runs %+v", post, p)
	}
	before, _ := os.ReadFile(settings)
	for _, c := range apply(t, o) {
		if c.Changed() {
			t.Errorf("a second install changes %s:\n%s", c.Path, c.Diff())
		}
	}
	after, _ := os.ReadFile(settings)
	if string(before) != string(after) {
		t.Fatal("a second install changed the settings")
	}
	o.Remove = true
	apply(t, o)
	if data, err := os.ReadFile(settings); err == nil && strings.Contains(string(data), "laserbrain-gate") {
		t.Fatalf("uninstall left the gate in:\n%s", data)
	}
}

// install claude writes the protected paths' Edit deny rules (ClaudeDeny,
// as laserbrain run does) after the user's own, keeps them in place on a
// second install, and uninstall takes out exactly ours.
func TestClaudeInstallDeniesProtectedPaths(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	user := `{"permissions":{"deny":["Read(./.env)","Edit(//lb/home)"],"ask":["Bash(git push *)"]}}`
	if err := os.WriteFile(settings, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	protect := []string{"/lb/home", filepath.Join(dir, ".git", "hooks")}
	o := Options{Scope: Project, Dir: dir, Home: t.TempDir(), Self: self, Protect: protect}
	apply(t, o)
	first, _ := os.ReadFile(settings)
	var got struct {
		Permissions struct{ Deny, Ask []string }
	}
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatal(err)
	}
	// The user's rule that equals one of ours stays in its place, once.
	want := []string{"Read(./.env)", "Edit(//lb/home)", "Edit(//lb/home/**)",
		"Edit(/" + protect[1] + ")", "Edit(/" + protect[1] + "/**)"}
	if strings.Join(got.Permissions.Deny, "\n") != strings.Join(want, "\n") {
		t.Fatalf("deny = %q, want %q", got.Permissions.Deny, want)
	}
	if len(got.Permissions.Ask) != 1 {
		t.Fatalf("the user's ask rules changed: %q", got.Permissions.Ask)
	}
	if cs := apply(t, o); cs[0].Changed() {
		t.Fatalf("a second install changed the settings:\n%s", cs[0].Diff())
	}
	o.Remove = true
	apply(t, o)
	after := decode(t, settings)
	deny := after["permissions"].(map[string]any)["deny"].([]any)
	if len(deny) != 1 || deny[0] != "Read(./.env)" {
		t.Fatalf("uninstall left deny = %v, want only the user's Read(./.env)", deny)
	}

	// Into settings without permissions: uninstall leaves none behind.
	dir2 := t.TempDir()
	o2 := Options{Scope: Local, Dir: dir2, Home: t.TempDir(), Self: self, Protect: []string{"/lb/home"}}
	apply(t, o2)
	local := filepath.Join(dir2, ".claude", "settings.local.json")
	if !bytes.Contains(mustRead(t, local), []byte(`"Edit(//lb/home/**)"`)) {
		t.Fatalf("local scope: no deny rule in\n%s", mustRead(t, local))
	}
	o2.Remove = true
	apply(t, o2)
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s: %s", local, mustRead(t, local))
	}

	// The user scope leaves out one project's paths.
	o3 := Options{Scope: User, Dir: dir, Home: t.TempDir(), Self: self, Protect: protect}
	apply(t, o3)
	us := mustRead(t, filepath.Join(o3.Home, ".claude", "settings.json"))
	if !bytes.Contains(us, []byte(`"Edit(//lb/home)"`)) || bytes.Contains(us, []byte(".git/hooks")) {
		t.Fatalf("user scope deny rules wrong:\n%s", us)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
