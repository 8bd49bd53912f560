package install

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/client"
)

func planClaude(t *testing.T, o Options) []Change {
	t.Helper()
	o.Client = client.Claude
	return apply(t, o)
}

// sandboxIn decodes the sandbox object of a Claude Code settings file as
// Claude Code reads JSON (nil: none).
func sandboxIn(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sandbox map[string]any `json:"sandbox"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v.Sandbox
}

// install claude turns Claude Code's sandbox on, closed to commands the
// model asks to run outside it, where the settings name no sandbox choice;
// a user's own sandbox keys (network, filesystem) are kept beside ours; a
// second install changes no byte; uninstall gives the file back byte for
// byte.
func TestClaudeSandboxWrittenOnlyWhereUnnamed(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{
		"{\n  \"env\": {\n    \"MY_VAR\": \"kept\"\n  }\n}\n",
		"{\n  \"sandbox\": {\n    \"network\": {\n      \"allowedDomains\": [\n        \"example.com\"\n      ]\n    },\n    \"excludedCommands\": [\n      \"docker\"\n    ]\n  }\n}\n",
	} {
		if err := os.WriteFile(settings, []byte(user), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Scope: Project, Home: home, Dir: dir, Self: self, Hosts: []string{"api.example.com:443", "*.corp.example:22"}}
		planClaude(t, o)
		sb := sandboxIn(t, settings)
		if sb["enabled"] != true || sb["allowUnsandboxedCommands"] != false || sb[claudeSandboxMark] == nil {
			t.Fatalf("the sandbox is not on and closed: %v", sb)
		}
		// The policy's hosts, after the user's own.
		network, _ := sb["network"].(map[string]any)
		domains := fmt.Sprint(network["allowedDomains"])
		if !strings.HasSuffix(domains, "api.example.com:443 *.corp.example:22]") || strings.Contains(user, "example.com\"") != strings.HasPrefix(domains, "[example.com ") {
			t.Fatalf("sandbox.network.allowedDomains: %s", domains)
		}
		if strings.Contains(user, "allowedDomains") {
			if _, ok := sb["network"]; !ok {
				t.Fatalf("the user's own sandbox keys were lost: %v", sb)
			}
		}
		if got, err := ClaudeSandboxFor(dir, home); err != nil || !got.Ours || !got.On() || !got.Closed() || got.Path != settings {
			t.Fatalf("ClaudeSandboxFor: %+v %v", got, err)
		}
		if cs := planClaude(t, o); cs[0].Changed() {
			t.Fatalf("a second install changed the settings:\n%s", cs[0].Diff())
		}
		rm := o
		rm.Remove = true
		planClaude(t, rm)
		if b, _ := os.ReadFile(settings); string(b) != user {
			t.Fatalf("uninstall did not give the user's settings back:\n%s\nwant\n%s", b, user)
		}
	}
}

// A sandbox choice of the person's own — on or off, in the file or in a
// layer the file would override — is never replaced, and uninstall leaves
// it; with our marker deleted, the values are the person's.
func TestClaudeSandboxKeepsTheUsersChoice(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	project := filepath.Join(dir, ".claude", "settings.json")
	user := filepath.Join(home, ".claude", "settings.json")
	for _, p := range []string{project, user} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Scope: Project, Home: home, Dir: dir, Self: self}
	rm := o
	rm.Remove = true
	for _, own := range []string{`{"sandbox": {"enabled": false}}`, `{"sandbox": {"enabled": true}}`, `{"sandbox": {"allowUnsandboxedCommands": true}}`} {
		// In the project's own file.
		if err := os.WriteFile(project, []byte(own), 0o644); err != nil {
			t.Fatal(err)
		}
		planClaude(t, o)
		if sb := sandboxIn(t, project); sb[claudeSandboxMark] != nil || len(sb) != 1 {
			t.Fatalf("the user's %s was changed: %v", own, sb)
		}
		planClaude(t, rm)
		var want map[string]map[string]any
		if err := json.Unmarshal([]byte(own), &want); err != nil {
			t.Fatal(err)
		}
		if sb := sandboxIn(t, project); !reflect.DeepEqual(sb, want["sandbox"]) {
			t.Fatalf("uninstall changed the user's %s: %v", own, sb)
		}
		if err := os.Remove(project); err != nil {
			t.Fatal(err)
		}
		// In the user's file, which the project's would override.
		if err := os.WriteFile(user, []byte(own), 0o644); err != nil {
			t.Fatal(err)
		}
		planClaude(t, o)
		if sb := sandboxIn(t, project); sb != nil {
			t.Fatalf("the project's layer would override the user's %s: %v", own, sb)
		}
		planClaude(t, rm)
		if b, _ := os.ReadFile(user); string(b) != own {
			t.Fatalf("the user's file changed: %s", b)
		}
		if err := os.Remove(user); err != nil {
			t.Fatal(err)
		}
	}
	// The local layer overrides the project's: a choice there is kept.
	if err := os.WriteFile(project, []byte(`{"sandbox": {"enabled": false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lo := Options{Scope: Local, Home: home, Dir: dir, Self: self}
	planClaude(t, lo)
	if sb := sandboxIn(t, filepath.Join(dir, ".claude", "settings.local.json")); sb != nil {
		t.Fatalf("the local layer would override the project's own choice: %v", sb)
	}
	if err := os.Remove(project); err != nil {
		t.Fatal(err)
	}

	// Ours, with the marker deleted by the person: theirs now, and
	// uninstall leaves it.
	planClaude(t, o)
	b, _ := os.ReadFile(project)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	delete(v["sandbox"].(map[string]any), claudeSandboxMark)
	b, _ = json.Marshal(v)
	if err := os.WriteFile(project, b, 0o644); err != nil {
		t.Fatal(err)
	}
	planClaude(t, rm)
	if sb := sandboxIn(t, project); sb["enabled"] != true || sb["allowUnsandboxedCommands"] != false {
		t.Fatalf("uninstall took out a sandbox the person made their own: %v", sb)
	}

	// A sandbox that is not an object is refused, nothing written.
	if err := os.WriteFile(project, []byte(`{"sandbox": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Plan(Options{Client: client.Claude, Scope: Project, Home: home, Dir: dir, Self: self}); err == nil || !strings.Contains(err.Error(), "sandbox is not an object") {
		t.Fatalf("a sandbox that is not an object: %v", err)
	}
}

// Under laserbrain run's confinement the run's settings layer turns Claude
// Code's own sandbox off (it cannot start there); unconfined, the layer
// leaves it as the user's settings have it.
func TestClaudeRunLayerSandbox(t *testing.T) {
	for _, confined := range []bool{true, false} {
		dir := t.TempDir()
		if _, err := ClaudeFlags(dir, self, confined); err != nil {
			t.Fatal(err)
		}
		sb := sandboxIn(t, filepath.Join(dir, "settings.json"))
		if confined && (sb == nil || sb["enabled"] != false) || !confined && sb != nil {
			t.Errorf("confined=%v: the layer's sandbox is %v", confined, sb)
		}
	}
}
