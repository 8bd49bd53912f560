package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// lbEnv runs the laserbrain binary with env added to this process's.
type lbEnv struct {
	t   *testing.T
	bin string
	env []string
}

func (e lbEnv) run(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("laserbrain %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func hookPayload(event string, fields map[string]any) string {
	p := map[string]any{"session_id": "sess-outage", "cwd": "/tmp", "hook_event_name": event}
	for k, v := range fields {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func bash(id, command string) map[string]any {
	return map[string]any{"tool_name": "Bash", "tool_use_id": id, "tool_input": map[string]any{"command": command}}
}

// The database stops in the middle of a session (issue 16's acceptance):
// meanwhile an irreversible command is refused with "cannot read the run"
// and its reason, a reversible one goes through, the session is told once,
// and every observed event waits on the machine; once the database is
// back, the next hook records them all, once each, in order, and the
// machine's evidence counted each tool call once.
func TestDatabaseStoppedMidSession(t *testing.T) {
	c := pgtest.StartCluster(t)
	dsn := pgtest.URL(t, c.NewDatabase(t))
	home := filepath.Join(t.TempDir(), "home")
	lb := lbEnv{t: t, bin: laserbrainBinary(t), env: []string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_STORE=" + dsn, "LASERBRAIN_FLEET=fleet-outage",
		"LASERBRAIN_RUN=", "CLAUDE_CODE_SESSION_ID="}}
	if out, errOut, code := lb.run("", "store", "init"); code != 0 {
		t.Fatalf("store init: %d %s %s", code, out, errOut)
	}
	hook := func(event, name string, fields map[string]any) (string, string, int) {
		return lb.run(hookPayload(event, fields), "hook", name)
	}
	mustPass := func(event, name string, fields map[string]any) string {
		t.Helper()
		out, errOut, code := hook(event, name, fields)
		if code != 0 {
			t.Fatalf("%s: exit %d, %s %s", name, code, out, errOut)
		}
		return out
	}
	mustPass("SessionStart", "session-start", map[string]any{"source": "startup"})
	mustPass("PostToolUse", "post-tool-use", bash("t1", "make test"))
	mustPass("PostToolUse", "post-tool-use", bash("t2", "go vet ./..."))

	if err := c.Halt(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			c.Resume() // so the database can be dropped after a failure
		}
	})
	// Reversible: allowed, and nothing to say.
	if out, errOut, code := hook("PreToolUse", "pre-tool-use", bash("t3", "ls -la")); code != 0 || out != "" || errOut != "" {
		t.Fatalf("a reversible command while the database is down: exit %d, %q %q", code, out, errOut)
	}
	// Irreversible: refused with the reason, the outage explained once.
	_, errOut, code := hook("PreToolUse", "pre-tool-use", bash("t4", "git push --force origin main"))
	if code != 2 || !strings.Contains(errOut, "laserbrain: cannot read the run: cannot reach the laserbrain store at postgres://laserkit@/") ||
		!strings.Contains(errOut, "Until the store is back, irreversible and outward actions are refused") {
		t.Fatalf("force-push while the database is down: exit %d, %s", code, errOut)
	}
	var told int
	for i, id := range []string{"t5", "t6"} {
		out := mustPass("PostToolUse", "post-tool-use", bash(id, "go build ./..."))
		if strings.Contains(out, "systemMessage") {
			told++
			if i == 0 {
				t.Fatalf("the session was told twice: the refusal already said it")
			}
		}
	}
	mustPass("UserPromptSubmit", "user-prompt-submit", map[string]any{"prompt": "keep going"})
	mustPass("PostToolUseFailure", "post-tool-use-failure", map[string]any{"tool_name": "Bash", "tool_use_id": "t7",
		"tool_input": map[string]any{"command": "make lint"}, "error": "Exit code 1"})
	_, errOut, code = hook("PreToolUse", "pre-tool-use", bash("t8", "npm publish"))
	if code != 2 || !strings.HasPrefix(errOut, "laserbrain: cannot read the run: ") || strings.Contains(errOut, "Until the store is back") || told != 0 {
		t.Fatalf("the second refusal: exit %d, %s (told %d)", code, errOut, told)
	}
	if out, _, code := lb.run("", "store", "status", "--json"); code != 1 || !strings.Contains(out, `"reachable": false`) || !strings.Contains(out, `"queued": 6`) {
		t.Fatalf("store status while down: exit %d, %s", code, out)
	}

	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	mustPass("PostToolUse", "post-tool-use", bash("t9", "make test"))
	if out, errOut, code := lb.run("", "store", "flush"); code != 0 || !strings.HasPrefix(out, "0 queued") {
		t.Fatalf("store flush after the hooks flushed: %d %s %s", code, out, errOut)
	}

	cfg, err := backend.Parse(dsn, home)
	if err != nil {
		t.Fatal(err)
	}
	b := backend.New(cfg)
	defer b.Close()
	st, err := b.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := st.RunForSession(ctx, "sess-outage")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		s := e.Kind + ":" + e.Name
		if e.Kind == fleet.KindTool || e.Kind == fleet.KindGate {
			s = e.ID
		}
		got = append(got, s)
	}
	want := "session:session-start tool:t1 tool:t2 gate:t4 tool:t5 tool:t6 prompt:user-prompt-submit tool:t7 gate:t8 tool:t9"
	if strings.Join(got, " ") != want {
		t.Fatalf("events after the outage:\n got  %s\n want %s", strings.Join(got, " "), want)
	}
	for _, e := range evs {
		if e.ID == "gate:t4" && (e.OK == nil || *e.OK || !strings.Contains(e.Text, "cannot read the run")) {
			t.Errorf("the refusal recorded as %+v", e)
		}
		if e.ID == "tool:t7" && (e.OK == nil || *e.OK) {
			t.Errorf("the failed call recorded as %+v", e)
		}
	}
	var ev struct{ OK, Fail, Steps int }
	data, err := os.ReadFile(filepath.Join(home, "config", "evidence.json"))
	if err != nil || json.Unmarshal(data, &ev) != nil || ev.OK != 5 || ev.Fail != 1 || ev.Steps != 6 {
		t.Fatalf("evidence after the outage: %+v (%v): want 5 ok and 1 failed call, each counted once", ev, err)
	}
	if _, err := os.Stat(filepath.Join(home, "queue", "told", "sess-outage")); !os.IsNotExist(err) {
		t.Errorf("the session's notice was not reset after the outage: %v", err)
	}
}

// gitRepo makes a repository with one commit and n clones of it; every
// clone is the same fleet (the root commit).
func gitRepo(t *testing.T, n int) []string {
	t.Helper()
	root := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	origin := filepath.Join(root, "origin")
	os.MkdirAll(origin, 0o755)
	git(origin, "init", "-q")
	os.WriteFile(filepath.Join(origin, "README"), []byte("parser\n"), 0o644)
	git(origin, "add", "README")
	git(origin, "commit", "-q", "-m", "first")
	var clones []string
	for i := 1; i <= n; i++ {
		c := filepath.Join(root, fmt.Sprintf("clone%d", i))
		git(root, "clone", "-q", origin, c)
		clones = append(clones, c)
	}
	return clones
}

// Two homes and two clones standing for two machines, one database (issue
// 16's acceptance): a1 grounds "write a JSON parser in Python" from home 1,
// a2 the same from home 2; from a third home and clone both runs are one
// fleet and the report finds them colliding. (The halt that then denies
// a2's next Bash call is the supervisor's, issue 11.)
func TestTwoMachinesOneDatabase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	clones := gitRepo(t, 3)
	bin := laserbrainBinary(t)
	machine := func(i int) lbEnv {
		home := filepath.Join(t.TempDir(), fmt.Sprintf("home%d", i))
		return lbEnv{t: t, bin: bin, env: []string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_STORE=" + dsn, "LASERBRAIN_FLEET=", "LASERBRAIN_RUN=", "LASERBRAIN_AGENT="}}
	}
	m1, m2, m3 := machine(1), machine(2), machine(3)
	if _, errOut, code := m3.run("", "store", "init"); code != 0 {
		t.Fatalf("store init: %s", errOut)
	}
	for i, m := range []lbEnv{m1, m2} {
		agent := fmt.Sprintf("a%d", i+1)
		cmd := exec.Command(bin, "run", "--agent", agent, "--goal", "write a JSON parser in Python", "--", "true")
		cmd.Dir = clones[i]
		cmd.Env = append(os.Environ(), m.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("laserbrain run %s: %v\n%s", agent, err, out)
		}
	}
	cmd := exec.Command(bin, "runs", "--json")
	cmd.Dir = clones[2]
	cmd.Env = append(os.Environ(), m3.env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("runs: %v", err)
	}
	var runs []struct {
		Agent, Fleet string
	}
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != 2 || runs[0].Agent != "a1" || runs[1].Agent != "a2" || runs[0].Fleet != runs[1].Fleet {
		t.Fatalf("the third machine sees %s (%v), want a1 and a2 in one fleet", out, err)
	}
	cmd = exec.Command(bin, "report", "--fleet", clones[2], "--html", filepath.Join(t.TempDir(), "fleet.html"), "--json")
	cmd.Dir = clones[2]
	cmd.Env = append(os.Environ(), m3.env...)
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep struct{ Agents, Collisions int }
	if err := json.Unmarshal(out, &rep); err != nil || rep.Agents != 2 || rep.Collisions != 1 {
		t.Fatalf("the third machine's report: %s (%v); want 2 agents, 1 collision", out, err)
	}
	// Each machine's own home holds none of it.
	for i, m := range []lbEnv{m1, m2} {
		home := strings.TrimPrefix(m.env[0], "LASERBRAIN_HOME=")
		for _, sub := range []string{"fleet/runs", "runs/log.jsonl"} {
			if _, err := os.Stat(filepath.Join(home, sub)); err == nil {
				t.Errorf("machine %d wrote %s into its home under a database store", i+1, sub)
			}
		}
	}
}
