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
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// lbEnv runs the laserbrain binary with env added to this process's.
type lbEnv struct {
	t   *testing.T
	bin string
	env []string
}

// pgFleet is laserbrain on a database of a private cluster of its own,
// the schema made by store init: a home of its own, fleet's hooks, no run
// or session, and env added.
func pgFleet(t *testing.T, fleet string, env ...string) (lb lbEnv, c *pgtest.Cluster, dsn, home string) {
	t.Helper()
	c = pgtest.StartCluster(t)
	dsn = pgtest.URL(t, c.NewDatabase(t))
	home = filepath.Join(t.TempDir(), "home")
	lb = lbEnv{t: t, bin: laserbrainBinary(t), env: append([]string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_STORE=" + dsn, "LASERBRAIN_FLEET=" + fleet,
		"LASERBRAIN_RUN=", "CLAUDE_CODE_SESSION_ID="}, env...)}
	if out, errOut, code := lb.run("", "store", "init"); code != 0 {
		t.Fatalf("store init: %d %s %s", code, out, errOut)
	}
	return lb, c, dsn, home
}

func (e lbEnv) run(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	cmd.Stdin = strings.NewReader(stdin)
	return proctest.Run(e.t, cmd)
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

// The database stops in the middle of a session:
// meanwhile an irreversible command is refused with "cannot read the run"
// and its reason, a reversible one goes through, the session is told once,
// and every observed event waits on the machine; once the database is
// back, the next hook records them all, once each, in order, and the
// machine's evidence counted each tool call once.
func TestDatabaseStoppedMidSession(t *testing.T) {
	lb, c, dsn, home := pgFleet(t, "fleet-outage")
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
			_ = c.Resume() // so the database can be dropped after a failure
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
	// The supervisor cannot work without the store: it says why and exits
	// with the failure status.
	if _, errOut, code := lb.run("", "supervise", "--once", "--repo", t.TempDir()); code != 8 || !strings.Contains(errOut, "cannot reach the laserbrain store at postgres://laserkit@/") {
		t.Fatalf("supervise while the database is down: exit %d, %s", code, errOut)
	}

	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	mustPass("PostToolUse", "post-tool-use", bash("t9", "make test"))
	if out, errOut, code := lb.run("", "store", "flush"); code != 0 || !strings.HasPrefix(out, "0 queued") {
		t.Fatalf("store flush after the hooks flushed: %d %s %s", code, out, errOut)
	}

	st := openFleet(t, dsn, home)
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
		if e.ID == "gate:t4" && (!e.OK.Failed() || !strings.Contains(e.Text, "cannot read the run")) {
			t.Errorf("the refusal recorded as %+v", e)
		}
		if e.ID == "tool:t7" && (!e.OK.Failed()) {
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
	if err := os.MkdirAll(origin, 0o755); err != nil {
		t.Fatal(err)
	}
	git(origin, "init", "-q")
	if err := os.WriteFile(filepath.Join(origin, "README"), []byte("parser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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

// Two homes and two clones standing for two machines, one database: a1
// grounds "write a JSON parser in Python" from home 1,
// a2 the same from home 2, both still running; from a third home and clone
// laserbrain runs sees both in one fleet, laserbrain supervise --once
// --json reports their collision, and the halt it writes from there (the
// person answering the escalation names a2) denies a2's next Bash call in
// home 2 with the halt's reason.
func TestTwoMachinesOneDatabase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	clones := gitRepo(t, 3)
	bin := laserbrainBinary(t)
	work := t.TempDir()
	machine := func(i int) []string {
		home := filepath.Join(t.TempDir(), fmt.Sprintf("home%d", i))
		return append(os.Environ(), "LASERBRAIN_HOME="+home, "LASERBRAIN_STORE="+dsn, "LASERBRAIN_FLEET=", "LASERBRAIN_RUN=", "LASERBRAIN_AGENT=")
	}
	m1, m2, m3 := machine(1), machine(2), machine(3)
	init := exec.Command(bin, "store", "init")
	init.Env = m3
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("store init: %v %s", err, out)
	}
	done, goFile := filepath.Join(work, "done"), filepath.Join(work, "go")
	wait := `while [ ! -e "$1" ]; do sleep 0.05; done`
	// a2's Bash call, made through the real hook from inside its run.
	call := `printf '%s' '{"hook_event_name":"PreToolUse","session_id":"s-a2","cwd":"'"$PWD"'","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls"}}' | "$2" hook pre-tool-use >"$3.out" 2>"$3.err"; echo $? >"$3.code"`
	agents := []*exec.Cmd{
		exec.Command(bin, "run", "--agent", "a1", "--goal", "write a JSON parser in Python", "--", "sh", "-c", wait, "sh", done),
		exec.Command(bin, "run", "--agent", "a2", "--goal", "write a JSON parser in Python", "--", "sh", "-c", wait+"; "+call+"; "+strings.ReplaceAll(wait, "$1", "$4"), "sh", goFile, bin, filepath.Join(work, "a2"), done),
	}
	for i, c := range agents {
		c.Dir, c.Env = clones[i], []([]string){m1, m2}[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, f := range []string{goFile, done} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
		for _, c := range agents {
			_ = c.Wait() // the agents' statuses say nothing once the test is over
		}
	})
	in3 := func(args ...string) []byte {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = clones[2], m3
		var errb bytes.Buffer
		c.Stderr = &errb
		out, err := c.Output()
		if err != nil {
			t.Fatalf("laserbrain %v: %v\n%s", args, err, errb.String())
		}
		return out
	}
	var runs []struct {
		Run, Agent, Fleet string
		Steps             int
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if err := json.Unmarshal(in3("runs", "--json"), &runs); err == nil && len(runs) == 2 && runs[0].Steps > 0 && runs[1].Steps > 0 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the third machine does not see two grounded runs: %+v", runs)
		}
	}
	if runs[0].Fleet != runs[1].Fleet {
		t.Fatalf("two clones are two fleets: %+v", runs)
	}
	a2 := "a2:" + runs[1].Run
	if runs[0].Agent == "a2" {
		a2 = "a2:" + runs[0].Run
	}
	// The person asked names a2 (when the route has no basis to choose).
	pick := "cat >/dev/null; echo " + a2
	var round struct {
		Collisions  []struct{ Agents []string }
		Halts       []struct{ Agent string }
		Escalations []struct{ Halted string }
		Agents      []struct{ Agent, Status string }
	}
	out := in3("supervise", "--once", "--json", "--on-escalate", pick)
	if err := json.Unmarshal(out, &round); err != nil || len(round.Collisions) != 1 || len(round.Collisions[0].Agents) != 2 {
		t.Fatalf("supervise from the third machine: %s (%v); want the collision of a1 and a2", out, err)
	}
	// The route has no basis to choose between two equal runs: the question
	// goes to the person, whose answer (a2) halts a2.
	// The halt the answer took is one of the round's halts, and the
	// escalation names it.
	var halted, answered []string
	for _, h := range round.Halts {
		halted = append(halted, h.Agent)
	}
	for _, e := range round.Escalations {
		if e.Halted != "" {
			answered = append(answered, e.Halted)
		}
	}
	if len(halted) != 1 || halted[0] != a2 || len(answered) != 1 || answered[0] != a2 {
		t.Fatalf("halted %v, escalations halted %v; want %s once each: %s", halted, answered, a2, out)
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code := filepath.Join(work, "a2.code")
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(code); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("a2 never made its Bash call")
		}
	}
	c, _ := os.ReadFile(code)
	errOut, _ := os.ReadFile(filepath.Join(work, "a2.err"))
	if strings.TrimSpace(string(c)) != "2" || !strings.Contains(string(errOut), a2+" is halted by") {
		t.Fatalf("a2's Bash call after the halt: exit %s, %s", c, errOut)
	}
	// Each machine's own home holds none of it.
	for i, m := range [][]string{m1, m2} {
		var home string
		for _, kv := range m {
			if h, ok := strings.CutPrefix(kv, "LASERBRAIN_HOME="); ok {
				home = h
			}
		}
		for _, sub := range []string{"fleet/runs", "runs/log.jsonl"} {
			if _, err := os.Stat(filepath.Join(home, sub)); err == nil {
				t.Errorf("machine %d wrote %s into its home under a database store", i+1, sub)
			}
		}
	}
}

// Eight supervisors watch one fleet in one database for 30 seconds while
// three agents keep working (LASERKIT_SUPERVISORS_FOR
// shortens it for a quick run): the journal verifies, every round any of
// them reported is numbered once across all of them, and every round the
// journal holds was reported by the supervisor that took it — no duplicate,
// no lost round.
func TestEightSupervisorsOneFleet(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	span := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("LASERKIT_SUPERVISORS_FOR")); err == nil {
		span = d
	}
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	repo := gitRepo(t, 1)[0]
	bin := laserbrainBinary(t)
	env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(t.TempDir(), "home"), "LASERBRAIN_STORE="+dsn, "LASERBRAIN_FLEET=", "LASERBRAIN_RUN=", "LASERBRAIN_AGENT=")
	lb := func(stdin string, extra []string, args ...string) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env, c.Stdin = repo, append(env, extra...), strings.NewReader(stdin)
		if out, err := c.CombinedOutput(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 0 {
				t.Fatalf("laserbrain %v: %v\n%s", args, err, out)
			}
		}
	}
	lb("", nil, "store", "init")
	// Three agents on three grounds (no collision, so no question to ask):
	// their sessions stay open, and their tool calls keep the rounds busy.
	goals := []string{"write a JSON parser in Python", "add an LRU cache to the API", "document the release process"}
	for i, g := range goals {
		sess := fmt.Sprintf("sess-%d", i)
		agent := []string{"LASERBRAIN_AGENT=" + fmt.Sprintf("w%d", i)}
		lb(hookPayload("SessionStart", map[string]any{"session_id": sess, "cwd": repo, "source": "startup"}), agent, "hook", "session-start")
		r := exec.Command(bin, "runs", "--json")
		r.Dir, r.Env = repo, env
		out, _ := r.Output()
		var rows []struct{ Run, Agent string }
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.Agent == fmt.Sprintf("w%d", i) {
				lb(`{"goal":"`+g+`","run":"`+row.Run+`"}`, nil, "check", "--stream")
			}
		}
	}
	stop := make(chan struct{})
	var busy sync.WaitGroup
	busy.Add(1)
	go func() { // the agents' tool calls
		defer busy.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			i := n % len(goals)
			c := exec.Command(bin, "hook", "post-tool-use")
			c.Dir, c.Env = repo, append(env, fmt.Sprintf("LASERBRAIN_AGENT=w%d", i))
			// Each call writes a file of its own: the agent's footprint grows,
			// so the rounds have changes to journal (a round journals what
			// changed since the last one).
			c.Stdin = strings.NewReader(hookPayload("PostToolUse", map[string]any{"session_id": fmt.Sprintf("sess-%d", i), "cwd": repo,
				"tool_name": "Write", "tool_use_id": fmt.Sprintf("t%d", n), "tool_input": map[string]any{"file_path": filepath.Join(repo, fmt.Sprintf("f%d.go", n)), "content": "package f"}}))
			if err := c.Run(); err != nil {
				t.Error(err)
			}
		}
	}()
	type supervisor struct {
		cmd *exec.Cmd
		out bytes.Buffer
		err bytes.Buffer
	}
	sups := make([]*supervisor, 8)
	for i := range sups {
		s := &supervisor{cmd: exec.Command(bin, "supervise", "--repo", repo, "--watch", "250ms", "--json")}
		s.cmd.Dir, s.cmd.Env = repo, env
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.err
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sups[i] = s
	}
	time.Sleep(span)
	for _, s := range sups {
		if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	busy.Wait()
	reported := map[int64]int{} // round → the supervisor that reported it
	for i, s := range sups {
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("supervisor %d: %v\n%s", i, err, s.err.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(s.out.String()), "\n") {
			var r struct{ Round int64 }
			if json.Unmarshal([]byte(line), &r) != nil || r.Round == 0 {
				t.Fatalf("supervisor %d printed %q", i, line)
			}
			if j, dup := reported[r.Round]; dup {
				t.Fatalf("round %d reported by supervisors %d and %d", r.Round, j, i)
			}
			reported[r.Round] = i
		}
	}
	c := exec.Command(bin, "supervise", "verify", "--repo", repo)
	c.Dir, c.Env = repo, env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("supervise verify: %v\n%s", err, out)
	}
	st := openFleet(t, dsn, t.TempDir())
	fid, _ := fleet.ID(context.Background(), repo)
	recs, err := st.JournalRecords(context.Background(), fid, 0)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	journaled := 0
	for _, r := range recs {
		if r.Kind != fleet.JournalRound {
			continue
		}
		journaled++
		if r.Round <= last {
			t.Fatalf("journal: round %d after round %d", r.Round, last)
		}
		last = r.Round
		if _, ok := reported[r.Round]; !ok {
			t.Fatalf("round %d is in the journal but no supervisor reported it", r.Round)
		}
	}
	if journaled < 10 || len(reported) < 40 {
		t.Fatalf("%d rounds journaled and %d reported in %s: the supervisors hardly took turns", journaled, len(reported), span)
	}
	t.Logf("%d rounds reported by 8 supervisors in %s, %d journaled, %d journal records; the journal verifies", len(reported), span, journaled, len(recs))
}

// openStores opens the stores spec names for the laserbrain home home, as
// the binary would, closed with the test.
func openStores(t *testing.T, spec, home string) *backend.Backend {
	t.Helper()
	cfg, err := backend.Parse(spec, home)
	if err != nil {
		t.Fatal(err)
	}
	b := backend.New(cfg)
	t.Cleanup(func() { b.Close() })
	return b
}

// openFleet is the fleet store of openStores.
func openFleet(t *testing.T, spec, home string) fleet.Store {
	t.Helper()
	st, err := openStores(t, spec, home).Fleet()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
