package operator

import (
	"github.com/laserkit/laserkit/operator/shell"

	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The publish oracle: a logging fake npm registry and a fake cargo
// registry (sparse index and publish API) on 127.0.0.1, and the real npm
// and cargo. A "publishes" label is proven by the registry receiving the
// publish; a harmless neighbour by it receiving none. The gate must deny
// each publishing variant with nobody there and deny or ask with a person
// there; each harmless one must go ahead with nobody there and never be
// denied with a person there.

// fakeRegistry logs the publishes it receives.
type fakeRegistry struct {
	mu        sync.Mutex
	publishes []string
	published map[string]bool
}

func (r *fakeRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.publishes)
}

func (r *fakeRegistry) reset() {
	r.mu.Lock()
	r.publishes, r.published = nil, map[string]bool{}
	r.mu.Unlock()
}

func (r *fakeRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	// npm: PUT /<package> with the tarball inside a JSON document.
	case req.Method == http.MethodPut && !strings.HasPrefix(req.URL.Path, "/api/"):
		r.publishes = append(r.publishes, "npm "+req.URL.Path)
		fmt.Fprint(w, `{"ok":true}`)
	// cargo: the sparse index's config, the crate's entry once published,
	// and PUT /api/v1/crates/new.
	case req.URL.Path == "/index/config.json":
		fmt.Fprintf(w, `{"dl":"http://%s/dl","api":"http://%s"}`, req.Host, req.Host)
	case req.Method == http.MethodPut && req.URL.Path == "/api/v1/crates/new":
		r.publishes = append(r.publishes, fmt.Sprintf("cargo crate (%d bytes)", len(body)))
		r.published["oracle-crate"] = true
		fmt.Fprint(w, `{"warnings":{"invalid_categories":[],"invalid_badges":[],"other":[]}}`)
	case strings.HasPrefix(req.URL.Path, "/index/") && r.published[filepath.Base(req.URL.Path)]:
		b, _ := json.Marshal(map[string]any{"name": filepath.Base(req.URL.Path), "vers": "0.1.0", "deps": []any{}, "cksum": strings.Repeat("0", 64), "features": map[string]any{}, "yanked": false})
		_, _ = w.Write(append(b, '\n'))
	default:
		http.NotFound(w, req)
	}
}

type publishCase struct {
	tool, cmd string
}

var publishCases = []publishCase{
	{"npm", "npm publish"},
	{"npm", "npm --registry=$REG publish"},
	{"npm", "npm --registry $REG publish"},
	{"npm", "npm publ"},
	{"npm", "npm pub --registry=$REG"},
	{"npm", "npm publish --dry-run false"},
	{"npm", "npm publish --dry-run=false"},
	{"npm", "npm --loglevel silent publish"},
	{"npm", "npm publish --tag next"},
	{"npm", "npm publish --dry-run"},
	{"npm", "npm publish --dry-run true"},
	{"npm", "npm publish --dry-run --registry=$REG"},
	{"npm", "npm publish --help"},
	{"npm", "npm publish -h"},
	{"npm", "npm --registry=$REG view oracle-pkg || true"},
	{"npm", "npm pack --dry-run"},
	{"npm", "echo 'npm publish' > notes.txt"},
	{"pnpm", "pnpm -r publish --no-git-checks"},
	{"pnpm", "pnpm recursive publish --no-git-checks"},
	{"pnpm", "pnpm --filter oracle-a publish --no-git-checks"},
	{"pnpm", "pnpm -r --reporter silent publish --no-git-checks"},
	{"pnpm", "pnpm -r publish --dry-run --no-git-checks"},
	{"pnpm", "pnpm publish --help"},
	{"pnpm", "pnpm -r exec ls"},
	{"pnpm", "pnpm -r ls"},
	{"cargo", "cargo publish"},
	{"cargo", "cargo +nightly publish --no-verify"},
	{"cargo", "cargo +stable publish --registry fake --no-verify"},
	{"cargo", "cargo --locked publish --no-verify"},
	{"cargo", "cargo -q publish --no-verify"},
	// cargo 1.95 does not resolve an alias given with --config as a
	// command ("no such command"): nothing is published.
	{"cargo", `cargo --config 'alias.ship="publish"' ship --no-verify`},
	{"cargo", `cargo --config 'alias.ship=["publish", "--dry-run"]' ship --no-verify`},
	{"cargo", "cargo publish --dry-run --no-verify"},
	{"cargo", "cargo publish -n --no-verify"},
	{"cargo", "cargo +nightly publish --dry-run --no-verify"},
	{"cargo", "cargo publish --help"},
	{"cargo", "cargo help publish"},
	{"cargo", "cargo package --list"},
	{"cargo", "git commit --allow-empty -qm 'cargo publish later' || true"},
}

func TestPublishOracle(t *testing.T) {
	reg := &fakeRegistry{published: map[string]bool{}}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	root := t.TempDir()
	npmOK, cargoOK := publishFixture(t, root, srv.URL)
	pnpmOK := npmOK && pnpmFixture(t, root, srv.URL)
	// cargo +toolchain is rustup's: without it the word is an error.
	rustupOK := exec.Command("rustup", "--version").Run() == nil
	wrong := 0
	var published, harmless int
	for i, c := range publishCases {
		if !*oracleFull && i%2 == 1 {
			continue // make oracle runs them all
		}
		if c.tool == "npm" && !npmOK || c.tool == "cargo" && !cargoOK || c.tool == "pnpm" && !pnpmOK {
			testenv.SkipPartOrFail(t, "%q: %s does not work here (cargo needs 1.68 or later, for a sparse registry; pnpm comes from npm install -g pnpm)", c.cmd, c.tool)
			continue
		}
		if strings.Contains(c.cmd, "cargo +") && !rustupOK {
			// No registry CI reaches has rustup (Debian's cargo has no
			// +toolchain): skipped, loudly, even under CI.
			t.Logf("SKIPPED: %q: needs rustup for +toolchain", c.cmd)
			continue
		}
		cmd := strings.ReplaceAll(c.cmd, "$REG", srv.URL)
		dir := filepath.Join(root, c.tool)
		an := shell.Analyze(cmd, dir)
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})
		reg.reset()
		sh := exec.Command("bash", "-c", cmd)
		sh.Dir = dir
		sh.Env = publishEnv(root, srv.URL)
		timer := time.AfterFunc(120*time.Second, func() {
			if sh.Process != nil {
				_ = sh.Process.Kill()
			}
		})
		out, _ := sh.CombinedOutput()
		timer.Stop()
		got := reg.count()
		if got > 0 {
			published++
			if una.Action != Deny || att.Action == Allow {
				wrong++
				t.Errorf("the registry received %d publish(es), but the gate says %s attended (%s), %s unattended (%s): %q",
					got, att.Action, att.Rule, una.Action, una.Rule, cmd)
			}
			continue
		}
		harmless++
		if una.Action != Allow || att.Action == Deny {
			wrong++
			t.Errorf("the registry received nothing, but the gate says %s attended (%s), %s unattended (%s): %q\n%s",
				att.Action, att.Rule, una.Action, una.Rule, cmd, trim(string(out)))
		}
	}
	t.Logf("publish oracle: %d variants: %d published (all must be refused), %d published nothing; %d wrong", published+harmless, published, harmless, wrong)
	if published == 0 {
		t.Error("no variant reached the registry: the fixture does not publish")
	}
}

// publishFixture makes an npm package and a cargo crate whose registries
// are the fake one, and says which tools work here.
func publishFixture(t *testing.T, root, reg string) (npmOK, cargoOK bool) {
	t.Helper()
	npmDir, cargoDir := filepath.Join(root, "npm"), filepath.Join(root, "cargo")
	host := strings.TrimPrefix(reg, "http://")
	files := map[string]string{
		filepath.Join(npmDir, "package.json"):            `{"name":"oracle-pkg","version":"1.0.0","description":"x","license":"MIT"}`,
		filepath.Join(npmDir, "index.js"):                "module.exports = 1\n",
		filepath.Join(npmDir, ".npmrc"):                  "registry=" + reg + "/\n//" + host + "/:_authToken=oracle\n",
		filepath.Join(cargoDir, "Cargo.toml"):            "[package]\nname = \"oracle-crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlicense = \"MIT\"\ndescription = \"x\"\n",
		filepath.Join(cargoDir, "src", "lib.rs"):         "pub fn x() {}\n",
		filepath.Join(cargoDir, ".cargo", "config.toml"): "[registries.fake]\nindex = \"sparse+" + reg + "/index/\"\n\n[registry]\ndefault = \"fake\"\n\n[net]\noffline = false\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string, argv ...string) error {
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir = dir
		c.Env = publishEnv(root, reg)
		return c.Run()
	}
	_, npmErr := exec.LookPath("npm")
	_, cargoErr := exec.LookPath("cargo")
	// A committed crate: cargo refuses to publish uncommitted changes.
	for _, argv := range [][]string{{"git", "init", "-q"}, {"git", "add", "-A"}, {"git", "commit", "-qm", "crate"}} {
		if err := run(cargoDir, argv...); err != nil {
			t.Fatalf("cargo fixture: %v: %v", argv, err)
		}
	}
	return npmErr == nil && run(npmDir, "npm", "--version") == nil, cargoErr == nil && cargoSparse(root, reg)
}

// pnpmFixture makes a pnpm workspace of two packages whose registry is
// the fake one, and says whether pnpm works here.
func pnpmFixture(t *testing.T, root, reg string) bool {
	t.Helper()
	dir := filepath.Join(root, "pnpm")
	host := strings.TrimPrefix(reg, "http://")
	files := map[string]string{
		filepath.Join(dir, "package.json"):              `{"name":"oracle-root","version":"1.0.0","private":true}`,
		filepath.Join(dir, "pnpm-workspace.yaml"):       "packages:\n  - 'packages/*'\n",
		filepath.Join(dir, ".npmrc"):                    "registry=" + reg + "/\n//" + host + "/:_authToken=oracle\n",
		filepath.Join(dir, "packages/a/package.json"):   `{"name":"oracle-a","version":"1.0.0","license":"MIT"}`,
		filepath.Join(dir, "packages/a/index.js"):       "module.exports = 1\n",
		filepath.Join(dir, "packages/b/package.json"):   `{"name":"oracle-b","version":"1.0.0","license":"MIT"}`,
		filepath.Join(dir, "packages/b/index.js"):       "module.exports = 2\n",
		filepath.Join(dir, "packages/a/dist/keep.js"):   "1\n",
		filepath.Join(dir, "packages/b/dist/keep.js"):   "2\n",
		filepath.Join(root, "home", ".config", ".keep"): "",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("pnpm"); err != nil {
		return false
	}
	c := exec.Command("pnpm", "--version")
	c.Dir, c.Env = dir, publishEnv(root, reg)
	return c.Run() == nil
}

// cargoSparse: the cargo here speaks the sparse registry protocol (1.68+).
func cargoSparse(root, reg string) bool {
	c := exec.Command("cargo", "--version")
	c.Env = publishEnv(root, reg)
	out, err := c.Output()
	if err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(string(out), "cargo "), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 1 || major == 1 && minor >= 68
}

func publishEnv(root, reg string) []string {
	home := filepath.Join(root, "home")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C",
		"npm_config_cache=" + filepath.Join(root, "npm-cache"), "npm_config_update_notifier=false", "npm_config_audit=false",
		"npm_config_fund=false", "CARGO_REGISTRIES_FAKE_TOKEN=oracle", "CARGO_TARGET_DIR=" + filepath.Join(root, "target"),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=o", "GIT_AUTHOR_EMAIL=o@example.invalid",
		"GIT_COMMITTER_NAME=o", "GIT_COMMITTER_EMAIL=o@example.invalid"}
	// cargo's caches go to the test's own CARGO_HOME; the toolchains stay
	// where rustup keeps them.
	env = append(env, "CARGO_HOME="+filepath.Join(root, "cargo-home"))
	rustup := os.Getenv("RUSTUP_HOME")
	if rustup == "" {
		if h, err := os.UserHomeDir(); err == nil {
			rustup = filepath.Join(h, ".rustup")
		}
	}
	return append(env, "RUSTUP_HOME="+rustup)
}
