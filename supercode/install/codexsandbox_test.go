package install

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/laserkit/laserkit/supercode/client"
)

// install codex selects a permissions profile of its own when the user's
// config names no sandbox (decoded by the TOML library, as Codex reads
// it): Codex's :workspace with the credential places unreadable, the
// protected paths read-only and /tmp left out of the writable places only
// when a protected path lies below it; byte-idempotent, and uninstall
// gives the user's file back byte for byte.
func TestCodexSandboxWrittenOnlyWhereUnnamed(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	const user = "# my settings\nmodel = \"o3\"\n\n[profiles.fast]\nmodel = \"mini\"\n\n[permissions.mine]\nextends = \":read-only\"\n"
	if err := os.WriteFile(cfg, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "TMPDIR" {
			return "/var/tmp/mine"
		}
		return ""
	}
	// The paths named exist (an absent one is named nowhere).
	u := t.TempDir()
	lbHome, ssh, npmrc := filepath.Join(u, ".local/share/laserbrain"), filepath.Join(u, ".ssh"), filepath.Join(u, ".npmrc")
	for _, d := range []string{lbHome, ssh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(npmrc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Client: client.Codex, Scope: User, Home: home, Dir: t.TempDir(), Self: self, Getenv: env,
		Protect:     []string{lbHome, "/var/tmp/mine/laserbrain"},
		Credentials: []string{ssh, npmrc, filepath.Join(u, ".aws")}}
	apply(t, o)
	type profile struct {
		Extends string            `toml:"extends"`
		FS      map[string]string `toml:"filesystem"`
	}
	var got struct {
		Model   string             `toml:"model"`
		Mode    string             `toml:"sandbox_mode"`
		Default string             `toml:"default_permissions"`
		Perms   map[string]profile `toml:"permissions"`
		WS      *struct {
			Roots []string `toml:"writable_roots"`
		} `toml:"sandbox_workspace_write"`
		Profiles map[string]map[string]any `toml:"profiles"`
	}
	first, _ := os.ReadFile(cfg)
	if _, err := toml.Decode(string(first), &got); err != nil {
		t.Fatalf("%v\n%s", err, first)
	}
	want := map[string]string{":slash_tmp": "read", ":tmpdir": "read", lbHome: "read", ssh: "none", npmrc: "none"}
	ours := got.Perms[CodexProfile]
	if got.Mode != "" || got.WS != nil || got.Default != CodexProfile || ours.Extends != ":workspace" || !reflect.DeepEqual(ours.FS, want) {
		t.Fatalf("sandbox not as decided (the home is below $TMPDIR): %+v\n%s", got, first)
	}
	if got.Perms["mine"].Extends != ":read-only" {
		t.Fatalf("the user's own profile changed:\n%s", first)
	}
	if got.Model != "o3" || got.Profiles["fast"]["model"] != "mini" {
		t.Fatalf("the user's settings changed meaning:\n%s", first)
	}
	if cs := apply(t, o); cs[1].Changed() {
		t.Fatalf("a second install changed config.toml:\n%s", cs[1].Diff())
	}
	rm := o
	rm.Remove = true
	apply(t, rm)
	if b, _ := os.ReadFile(cfg); string(b) != user {
		t.Fatalf("uninstall did not give the user's config back:\n%q\nwant\n%q", b, user)
	}

	// Nothing protected below the temporary directories: they stay writable.
	o.Protect = nil
	apply(t, o)
	got.Perms = nil
	b, _ := os.ReadFile(cfg)
	if _, err := toml.Decode(string(b), &got); err != nil || got.Perms[CodexProfile].FS[":slash_tmp"] != "" || got.Perms[CodexProfile].FS[":tmpdir"] != "" {
		t.Fatalf("/tmp left out with nothing protected below it: %v\n%s", err, b)
	}
	apply(t, rm)

	// The user's own sandbox_mode or profile — stricter or not — and their
	// own [sandbox_workspace_write] are never replaced.
	for _, own := range []string{"sandbox_mode = \"read-only\"\n", "sandbox_mode = \"danger-full-access\"\n", "default_permissions = \":read-only\"\n"} {
		if err := os.WriteFile(cfg, []byte(own+user), 0o600); err != nil {
			t.Fatal(err)
		}
		apply(t, o)
		b, _ := os.ReadFile(cfg)
		if !strings.HasPrefix(string(b), own+user) || strings.Contains(string(b), "workspace") {
			t.Fatalf("the user's %q was not kept as it was:\n%s", own, b)
		}
		apply(t, rm)
	}
	table := user + "\n[sandbox_workspace_write]\nwritable_roots = [\"/srv/data\"]\n"
	if err := os.WriteFile(cfg, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, o)
	b, _ = os.ReadFile(cfg)
	got.WS = nil
	if _, err := toml.Decode(string(b), &got); err != nil || got.Mode != "workspace-write" || got.WS == nil || len(got.WS.Roots) != 1 || got.WS.Roots[0] != "/srv/data" {
		t.Fatalf("the user's [sandbox_workspace_write] was not kept: %v\n%s", err, b)
	}
	apply(t, rm)
	if b, _ := os.ReadFile(cfg); string(b) != table {
		t.Fatalf("uninstall did not give the user's config back:\n%s", b)
	}
}

// A project's .codex/config.toml overrides the user's: where the user's
// config names a sandbox_mode, install --scope project writes none.
func TestCodexProjectSandboxKeepsTheUsersChoice(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	ucfg := filepath.Join(home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(ucfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ucfg, []byte("sandbox_mode = \"read-only\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Client: client.Codex, Scope: Project, Home: home, Dir: dir, Self: self}
	apply(t, o)
	b, err := os.ReadFile(filepath.Join(dir, ".codex", "config.toml"))
	if err != nil || strings.Contains(string(b), "sandbox") {
		t.Fatalf("the project layer would override the user's read-only: %v\n%s", err, b)
	}
	// Without the user's choice the project layer gets workspace-write.
	if err := os.WriteFile(ucfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, o)
	b, _ = os.ReadFile(filepath.Join(dir, ".codex", "config.toml"))
	if sb, err := CodexSandboxOf(filepath.Join(dir, ".codex", "config.toml")); err != nil || !sb.Ours || sb.Mode != "workspace-write" {
		t.Fatalf("project layer: %+v %v\n%s", sb, err, b)
	}
}

// At the project scope the policy's hosts turn the profile's network on,
// through Codex's proxy, for those hosts alone; a user's own [features]
// table leaves the network off (our key beside it would not be valid
// TOML); uninstall gives the file back.
func TestCodexProjectSandboxNetworkOfThePolicysHosts(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(dir, ".codex", "config.toml")
	o := Options{Client: client.Codex, Scope: Project, Home: home, Dir: dir, Self: self, Hosts: []string{"api.example.com:443", "*.corp.example:22", "api.example.com:8443"}}
	apply(t, o)
	var got struct {
		Perms map[string]struct {
			Network struct {
				Enabled bool              `toml:"enabled"`
				Domains map[string]string `toml:"domains"`
			} `toml:"network"`
		} `toml:"permissions"`
		Features map[string]any `toml:"features"`
	}
	b, _ := os.ReadFile(cfg)
	if _, err := toml.Decode(string(b), &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	n := got.Perms[CodexProfile].Network
	if !n.Enabled || !reflect.DeepEqual(n.Domains, map[string]string{"api.example.com": "allow", "*.corp.example": "allow"}) || got.Features["network_proxy"] != true {
		t.Fatalf("network not as the policy says: %+v\n%s", got, b)
	}
	rm := o
	rm.Remove = true
	apply(t, rm)
	const own = "[features]\nweb_search = true\n"
	if err := os.WriteFile(cfg, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, o)
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "network") {
		t.Fatalf("beside the user's [features] the network was turned on:\n%s", b)
	}
	apply(t, rm)
	if b, _ := os.ReadFile(cfg); !strings.HasPrefix(string(b), own) {
		t.Fatalf("uninstall did not give the user's config back:\n%s", b)
	}
}
