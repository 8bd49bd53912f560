package main

// laserbrain loop with real processes and signals: SIGINT mid-call and
// --resume, and two loops on one repository at once.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loopRepo is a git repository with the given files (0755 for ci and *.sh).
func loopRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	commitFiles(t, dir, files)
	return dir
}

// commitFiles writes files into dir (0755 for ci and *.sh) and makes them
// the first commit of a git repository there.
func commitFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if name == "ci" || strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), gitIdent...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

var gitIdent = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

type loopProc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
}

func startLoop(t *testing.T, lb, dir, home string, args ...string) *loopProc {
	t.Helper()
	cmd := exec.Command(lb, append([]string{"loop"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+home)
	cmd.Env = append(cmd.Env, gitIdent...)
	p := &loopProc{cmd: cmd, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// interrupt sends the loop SIGINT and holds it to exit 130 with the agent
// whose pid file in dir is role.pid gone.
func (p *loopProc) interrupt(t *testing.T, what, dir, role string) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 130 {
		t.Fatalf("%s: exit %d, want 130\n%s", what, code, p.stderr)
	}
	if pidAlive(t, filepath.Join(dir, role+".pid")) {
		t.Fatalf("%s: the interrupted %s is still running", what, role)
	}
}

func (p *loopProc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("laserbrain loop did not end\nstdout: %s\nstderr: %s", p.stdout, p.stderr)
	}
	return -1
}

// journal reads a run's steps.jsonl, failing on any line that is not a
// JSON object.
func journal(t *testing.T, runDir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("steps.jsonl line %d is not JSON: %v\n%s", n, err, sc.Text())
		}
		out = append(out, rec)
	}
	return out
}

// done keeps the done records of one kind.
func done(recs []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["kind"] == kind && r["phase"] == nil {
			out = append(out, r)
		}
	}
	return out
}

var runIDRe = regexp.MustCompile(`\(run ([0-9a-f]{12})\)`)

func runIDOf(t *testing.T, stderr string) string {
	t.Helper()
	m := runIDRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no run id in:\n%s", stderr)
	}
	return m[1]
}

func pidAlive(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return syscall.Kill(pid, 0) == nil
}

const resumeScript = `while :; do
	./ci > "$RUN_DIR/ci.log" 2>&1 || { agent fix < "$RUN_DIR/ci.log" || exit $?; continue; }
	v=$(judge judge --soak 3 "Is it done?")
	case $? in 0) break ;; 1|2) ;; *) exit 4 ;; esac
done
echo "converged"
`

// SIGINT mid-agent and mid-judge: the child is killed, the journal stays
// valid, exit 130; --resume replays what completed (the soak counter, the
// judge's pinned session) and runs the interrupted step again.
func TestLoopInterruptResume(t *testing.T) {
	lb := laserbrainBinary(t)
	dir := loopRepo(t, map[string]string{
		".gitignore": "*.log\n*.pid\n*.count\nready-*\nfixed\nsessions.txt\n",
		"ci":         "#!/bin/sh\ntest -f fixed\n",
		"loop.sh":    resumeScript,
		"agents.conf": "fix_KIND=command\nfix_COMMAND=\"sh fix.sh\"\n" +
			"judge_KIND=command\njudge_COMMAND=\"sh judge.sh\"\n",
		"fix.sh": `n=$(cat fix.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > fix.count
if [ $n = 1 ]; then echo $$ > fix.pid; touch ready-fix; exec sleep 30; fi
touch fixed
`,
		"judge.sh": `n=$(cat judge.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > judge.count
echo "$LASERBRAIN_JUDGE_SESSION" >> sessions.txt
if [ $n = 2 ]; then echo $$ > judge.pid; touch ready-judge; exec sleep 30; fi
echo '{"sufficient": true, "summary": "pass '$n'", "findings": []}'
`,
	})
	home := filepath.Join(t.TempDir(), "home")

	// 1. SIGINT while the fix agent runs.
	p := startLoop(t, lb, dir, home, "loop.sh")
	waitFor(t, filepath.Join(dir, "ready-fix"))
	p.interrupt(t, "SIGINT", dir, "fix")
	run := runIDOf(t, p.stderr.String())
	runDir := filepath.Join(home, "loop", run)
	if strings.Count(p.stderr.String(), "Ran laserbrain loop") != 1 || !strings.Contains(p.stderr.String(), "stopped: interrupted by SIGINT") {
		t.Fatalf("summary:\n%s", p.stderr)
	}
	recs := journal(t, runDir)
	if last := recs[len(recs)-1]; last["kind"] != "end" || last["status"] != 130.0 {
		t.Fatalf("the journal does not end with the interrupted end: %v", last)
	}
	var started map[string]any
	for _, r := range recs {
		if r["kind"] == "agent" && r["phase"] == "start" {
			started = r
		}
	}
	if started == nil || len(done(recs, "agent")) != 0 {
		t.Fatalf("want one started, unfinished agent step: %v", recs)
	}
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", started["checkpoint"].(string)).CombinedOutput(); err != nil {
		t.Fatalf("the interrupted agent's checkpoint %v is missing: %s", started["checkpoint"], out)
	}

	// 2. --resume: the fix agent runs again; SIGINT again mid-judge, after
	// one passing verdict.
	p = startLoop(t, lb, dir, home, "--resume", run)
	waitFor(t, filepath.Join(dir, "ready-judge"))
	// The run is in use: a second --resume is refused, and changes nothing.
	busy := startLoop(t, lb, dir, home, "--resume", run)
	if code := busy.wait(t); code != 2 || !strings.Contains(busy.stderr.String(), "being run by another process") {
		t.Fatalf("a --resume of a running run: exit %d\n%s", code, busy.stderr)
	}
	p.interrupt(t, "resume 1", dir, "judge")
	if b, _ := os.ReadFile(filepath.Join(dir, "fix.count")); strings.TrimSpace(string(b)) != "2" {
		t.Fatalf("the interrupted fix agent ran %s times, want 2", b)
	}
	recs = journal(t, runDir)
	judges := done(recs, "judge")
	if len(judges) != 1 || judges[0]["soak"] != 1.0 {
		t.Fatalf("after resume 1: judge records %v", judges)
	}

	// 3. --resume again: the completed judge call is replayed (soak 1, its
	// session), the interrupted one runs again, the soak completes.
	p = startLoop(t, lb, dir, home, "--resume", run)
	if code := p.wait(t); code != 0 {
		t.Fatalf("resume 2: exit %d\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stdout.String(), "converged") || !strings.Contains(p.stderr.String(), "replayed from the journal") {
		t.Fatalf("resume 2:\n%s\n%s", p.stdout, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "Exit 0 after 3 iterations (1 agent fix, 3 judge judge), judge soak 3/3.") {
		t.Fatalf("resume 2 summary:\n%s", p.stderr)
	}
	var soaks []any
	for _, r := range done(journal(t, runDir), "judge") {
		soaks = append(soaks, r["soak"])
	}
	if len(soaks) != 3 || soaks[0] != 1.0 || soaks[1] != 2.0 || soaks[2] != 3.0 {
		t.Fatalf("soak counters %v, want 1 2 3", soaks)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "sessions.txt"))
	sessions := strings.Fields(string(b))
	if len(sessions) != 4 {
		t.Fatalf("judge invocations %v, want 4 (1, 2 interrupted, 3, 4)", sessions)
	}
	for _, s := range sessions {
		if s != sessions[0] {
			t.Fatalf("the judge's pinned session changed across --resume: %v", sessions)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, "judges", "judge.transcript")); strings.Count(string(b), "## Prompt") != 3 {
		t.Fatalf("the pinned transcript has %d turns, want 3:\n%s", strings.Count(string(b), "## Prompt"), b)
	}
}

// Two loops on one repository at once keep to themselves: their own run
// directory, journal, CI log, soak counter, checkpoints and drift run.
func TestLoopConcurrentRuns(t *testing.T) {
	lb := laserbrainBinary(t)
	// LASERBRAIN_HOME inside the repository, not ignored: the checkpoints
	// must leave it out anyway.
	dir := loopRepo(t, map[string]string{
		"ci":      "#!/bin/sh\necho \"ci of $LASERBRAIN_LOOP_RUN\"\n",
		"loop.sh": "./ci > \"$RUN_DIR/ci-latest.log\"\nagent fix \"note it\"\njudge judge --soak 2 > /dev/null\njudge judge --soak 2\n",
		"agents.conf": "fix_KIND=command\nfix_COMMAND=\"sh fix.sh\"\n" +
			"judge_KIND=command\njudge_COMMAND=\"sh judge.sh\"\n",
		// Each fix waits until both loops are inside their fix call.
		"fix.sh": `mkdir -p meet; touch "meet/$LASERBRAIN_LOOP_RUN"
i=0; while [ $(ls meet | wc -l) -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
echo "$LASERBRAIN_LOOP_RUN $RUN_DIR" >> "note-$LASERBRAIN_LOOP_RUN.txt"
`,
		"judge.sh": `echo "$LASERBRAIN_LOOP_RUN $LASERBRAIN_JUDGE_SESSION" >> judge-sessions.txt
echo '{"sufficient": true, "summary": "ok", "findings": []}'
`,
	})
	home := filepath.Join(dir, ".laserbrain")
	a := startLoop(t, lb, dir, home, "loop.sh")
	b := startLoop(t, lb, dir, home, "loop.sh")
	for _, p := range []*loopProc{a, b} {
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d\n%s", code, p.stderr)
		}
	}
	runA, runB := runIDOf(t, a.stderr.String()), runIDOf(t, b.stderr.String())
	if runA == runB {
		t.Fatal("two loops got one run id")
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "meet")); len(ents) != 2 {
		t.Fatalf("the two fix agents did not run at once: %v", ents)
	}
	for _, pair := range [][2]string{{runA, runB}, {runB, runA}} {
		me, other := pair[0], pair[1]
		runDir := filepath.Join(home, "loop", me)
		raw, _ := os.ReadFile(filepath.Join(runDir, "steps.jsonl"))
		if strings.Contains(string(raw), other) {
			t.Errorf("run %s's journal mentions run %s", me, other)
		}
		recs := journal(t, runDir)
		judges := done(recs, "judge")
		if len(judges) != 2 || judges[0]["soak"] != 1.0 || judges[1]["soak"] != 2.0 {
			t.Errorf("run %s's soak counters: %v", me, judges)
		}
		if log, _ := os.ReadFile(filepath.Join(runDir, "ci-latest.log")); strings.TrimSpace(string(log)) != "ci of "+me {
			t.Errorf("run %s's ci-latest.log: %q", me, log)
		}
		if note, _ := os.ReadFile(filepath.Join(dir, "note-"+me+".txt")); strings.TrimSpace(string(note)) != me+" "+runDir {
			t.Errorf("run %s's agent saw %q", me, note)
		}
	}
	out, err := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname)", "refs/laserkit/loop/").Output()
	if err != nil {
		t.Fatal(err)
	}
	refs := strings.Fields(string(out))
	sort.Strings(refs)
	perRun := map[string]int{}
	for _, r := range refs {
		parts := strings.Split(r, "/")
		perRun[parts[3]]++
	}
	if len(perRun) != 2 || perRun[runA] != 3 || perRun[runB] != 3 {
		t.Fatalf("checkpoints per run: %v (%v)", perRun, refs)
	}
	// No checkpoint holds laserbrain's own state.
	for _, r := range refs {
		ls, _ := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", r).Output()
		if strings.Contains(string(ls), ".laserbrain/") {
			t.Fatalf("checkpoint %s holds .laserbrain/:\n%s", r, ls)
		}
	}
	sessions, _ := os.ReadFile(filepath.Join(dir, "judge-sessions.txt"))
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sessions)), "\n") {
		f := strings.Fields(line)
		if prev, ok := seen[f[0]]; ok && prev != f[1] {
			t.Fatalf("run %s's judge changed session: %s", f[0], sessions)
		}
		seen[f[0]] = f[1]
	}
	if len(seen) != 2 || seen[runA] == seen[runB] {
		t.Fatalf("the two loops shared a judge session: %s", sessions)
	}
}
