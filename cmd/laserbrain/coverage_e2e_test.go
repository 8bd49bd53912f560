package main

// Coverage and the supervisor's voice with the real Claude Code CLI against
// a scripted model: what the model was shown is read from the requests it
// received next.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/internal/testenv"
)

// touches are n Bash calls, the i-th touching ran-i (so the test sees which
// ran), ids toolu_b1 … toolu_bn.
func touches(from, n int) []agenttest.Turn {
	var ts []agenttest.Turn
	for i := from; i < from+n; i++ {
		ts = append(ts, agenttest.Bash(fmt.Sprintf("toolu_b%d", i), fmt.Sprintf("touch ran-%d", i)))
	}
	return ts
}

// ran reports which of the touches ran.
func (s *supervised) ran(n int) []bool {
	out := make([]bool, n+1)
	for i := 1; i <= n; i++ {
		_, err := os.Stat(filepath.Join(s.Dir, fmt.Sprintf("ran-%d", i)))
		out[i] = err == nil
	}
	return out
}

// lastRequest is the body of the last main-loop request: the whole
// conversation the model was shown.
func (s *supervised) lastRequest(t *testing.T) string {
	t.Helper()
	mains := s.Model.MainRequests()
	if len(mains) == 0 {
		t.Fatal("the model was never asked")
	}
	return string(mains[len(mains)-1].Body)
}

// Our default under laserbrain run: told the notation at the start,
// reminded after 3 unchecked steps, the sixth acting call refused (after 5
// steps) with how to check as the tool result, a check_state call lets the
// agent go on; laserbrain runs --json has the figures.
func TestClaudeCoverageDefault(t *testing.T) {
	turns := touches(1, 6)
	turns = append(turns, check("toolu_c", "create the marker files", 3))
	turns = append(turns, touches(7, 1)...)
	turns = append(turns, agenttest.Say("Done."))
	s := newSupervised(t, turns...)
	s.runClaude(t, "worker", nil, "Bash", allMCP)

	first := string(s.Model.MainRequests()[0].Body)
	if !strings.Contains(first, "Spell your state with mcp__laserbrain__check_state") || !strings.Contains(first, "- distance: integer 0-10") {
		t.Errorf("the session start's brief did not reach the model's first request")
	}
	ran := s.ran(7)
	for i := 1; i <= 5; i++ {
		if tr := s.Model.ResultAfter(t, fmt.Sprintf("toolu_b%d", i)); tr.IsError || !ran[i] {
			t.Fatalf("call %d was refused or did not run: %+v", i, tr)
		}
	}
	refused := s.Model.ResultAfter(t, "toolu_b6")
	if !refused.IsError || ran[6] || !strings.Contains(refused.Text, "laserbrain: 5 steps since your last check. THIS CALL DID NOT RUN") ||
		!strings.Contains(refused.Text, "mcp__laserbrain__check_state with goal") {
		t.Fatalf("the sixth call: ran=%v, shown %+v; want it refused with how to check", ran[6], refused)
	}
	if v := s.checkResult(t, "toolu_c"); v["reason"] != "grounded" {
		t.Fatalf("check_state: %v", v)
	}
	if tr := s.Model.ResultAfter(t, "toolu_b7"); tr.IsError || !ran[7] {
		t.Fatalf("after the check the call was refused: %+v", tr)
	}
	if conv := s.lastRequest(t); strings.Count(conv, "laserbrain: 3 steps since your last check.") != 1 {
		t.Errorf("the reminder after 3 steps reached the model %d times; want once", strings.Count(conv, "laserbrain: 3 steps since your last check."))
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v", rows)
	}
	cov, _ := rows[0]["coverage"].(map[string]any)
	if cov["tool_calls"] != 6.0 || cov["checks"] != 1.0 || cov["refusals"] != 1.0 || cov["longest_unchecked"] != 5.0 {
		t.Fatalf("runs --json coverage: %v", cov)
	}
}

// The same agent with --coverage off is never refused.
func TestClaudeCoverageOff(t *testing.T) {
	turns := append(touches(1, 12), agenttest.Say("Done."))
	s := newSupervised(t, turns...)
	s.runClaude(t, "worker", []string{"--coverage", "off"}, "Bash")
	ran := s.ran(12)
	for i := 1; i <= 12; i++ {
		if tr := s.Model.ResultAfter(t, fmt.Sprintf("toolu_b%d", i)); tr.IsError || !ran[i] {
			t.Fatalf("call %d with coverage off: ran=%v, shown %+v", i, ran[i], tr)
		}
	}
	if s.Model.Played() != 13 {
		t.Fatalf("played %d turns: the stop was held with coverage off", s.Model.Played())
	}
	rows := s.runsJSON(t)
	if cov, _ := rows[0]["coverage"].(map[string]any); cov["refusals"] != 0.0 || cov["tool_calls"] != 12.0 {
		t.Fatalf("runs --json coverage: %v", cov)
	}
}

// A Stop that would end the run with 3 unchecked steps is held once for
// a last check, and the reason reaches the model; after the check it ends.
func TestClaudeCoverageStopHeld(t *testing.T) {
	turns := append(touches(1, 3), agenttest.Say("Done."), check("toolu_c", "create the marker files", 0), agenttest.Say("Really done."))
	s := newSupervised(t, turns...)
	r := s.runClaude(t, "stopper", nil, "Bash", allMCP)
	if s.Model.Played() != 6 || r.JSON["result"] != "Really done." {
		t.Fatalf("played %d turns, result %v; want the first stop held, the second through", s.Model.Played(), r.JSON["result"])
	}
	if shown := strings.Join(s.Model.UserTexts(), "\n"); !strings.Contains(shown, "laserbrain: 3 steps since your last check — spell your state once more before you stop") {
		t.Fatalf("the held stop's reason did not reach the model; it was shown:\n%s", shown)
	}
}

// reference runs the Python reference's hooks (laserbrain-sdk 0.53.0) in a
// home of their own: the oracle for what it decides.
type reference struct {
	t       *testing.T
	env     []string
	session string
}

func newReference(t *testing.T, session string) *reference {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	testenv.Shared(t, "reference/laserbrain-sdk-0.53.0/laserbrain/hooks/lb_gate.py")
	src := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	home := t.TempDir()
	return &reference{t: t, session: session, env: []string{"PATH=" + filepath.Dir(py) + ":/usr/bin:/bin", "HOME=" + home,
		"LASERBRAIN_HOME=" + filepath.Join(home, "lb"), "PYTHONPATH=" + src, "LASERBRAIN_AGENT=worker"}}
}

// hook runs one of its hook modules on a Claude Code payload: its exit
// status and standard error.
func (r *reference) hook(module string, payload map[string]any) (int, string) {
	r.t.Helper()
	payload["session_id"] = r.session
	b, _ := json.Marshal(payload)
	cmd := exec.Command("python3", "-m", "laserbrain.hooks."+module)
	cmd.Env, cmd.Stdin = r.env, bytes.NewReader(b)
	_, stderr, code := proctest.Run(r.t, cmd)
	return code, stderr
}

// call is one tool call through the reference's wiring: its gate, then —
// when the call ran — its coverage hook. It returns the refusal ("" when
// the call ran).
func (r *reference) call(tool string, input map[string]any) string {
	code, stderr := r.hook("lb_gate", map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input})
	if code == 2 {
		return strings.TrimSuffix(stderr, "\n")
	}
	r.hook("lb_coverage", map[string]any{"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": input,
		"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false}})
	return ""
}

// Under --coverage reference the run is refused where the reference
// refuses: the reference's own hooks, replaying the session (its id, so
// its probe arm, and the same calls), refuse the same calls with the same
// words; a check_state call lets it go on.
func TestClaudeCoverageReference(t *testing.T) {
	turns := touches(1, 10)
	checkInput := map[string]any{"goal": "create the marker files", "progress": "advancing", "distance": 3}
	turns = append(turns, agenttest.CallID("toolu_c", "mcp__laserbrain__check_state", checkInput))
	turns = append(turns, touches(11, 1)...)
	turns = append(turns, agenttest.Say("Done."))
	s := newSupervised(t, turns...)
	res := s.runClaude(t, "worker", []string{"--coverage", "reference"}, "Bash", allMCP)
	sid, _ := res.JSON["session_id"].(string)
	if sid == "" {
		t.Fatalf("no session id in %v", res.JSON)
	}

	ref := newReference(t, sid)
	ref.hook("lb_coverage", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "work on the task"})
	ran := s.ran(11)
	refusals, refused := 0, []int{}
	for i := 1; i <= 11; i++ {
		if i == 11 {
			if got := ref.call("mcp__laserbrain__check_state", checkInput); got != "" {
				t.Fatalf("the reference refused check_state: %s", got)
			}
		}
		want := ref.call("Bash", map[string]any{"command": fmt.Sprintf("touch ran-%d", i), "description": "scripted"})
		tr := s.Model.ResultAfter(t, fmt.Sprintf("toolu_b%d", i))
		switch {
		case want == "" && (tr.IsError || !ran[i]):
			t.Errorf("call %d: the reference lets it run; we refused it: %q", i, tr.Text)
		case want != "" && (!tr.IsError || ran[i]):
			t.Errorf("call %d: the reference refuses it (%q); it ran", i, want)
		case want != "" && !strings.Contains(tr.Text, want):
			t.Errorf("call %d: the model was shown\n%s\nwant the reference's words\n%s", i, tr.Text, want)
		}
		if want != "" {
			refusals++
			refused = append(refused, i)
		}
	}
	t.Logf("session %s: the reference refuses calls %v", sid, refused)
	if refusals == 0 {
		t.Fatal("the reference refused nothing: the script never reached its threshold")
	}
	rows := s.runsJSON(t)
	if cov, _ := rows[0]["coverage"].(map[string]any); cov["refusals"] != float64(refusals) {
		t.Fatalf("runs --json coverage %v; want %d refusals", cov, refusals)
	}
}

// between runs laserbrain with args in the session's world from a model
// turn's Before (the server's goroutine, where a test may not fail): its
// output and error are kept for the test to read afterwards.
type between struct {
	out []byte
	err error
}

func (s *supervised) between(args ...string) *between {
	b := &between{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.lb, args...)
	cmd.Dir, cmd.Env = s.Dir, s.BaseEnv()
	b.out, b.err = cmd.CombinedOutput()
	return b
}

func (b *between) must(t *testing.T, what string) string {
	t.Helper()
	if b.out == nil && b.err == nil {
		t.Fatalf("%s never ran", what)
	}
	if b.err != nil {
		t.Fatalf("%s: %v\n%s", what, b.err, b.out)
	}
	return string(b.out)
}

// The supervisor's voice reaches the agent: while the agent runs, a
// supervise round escalates its drift and a person (--on-escalate) answers;
// the answer is in the very next request the model receives, exactly once
// in the whole conversation, and the journal records its delivery with
// the round.
func TestClaudeSupervisorAnswerDelivered(t *testing.T) {
	const said = "PERSON-SAYS: go back to the parser"
	var round *between
	var s *supervised
	b1 := agenttest.Bash("toolu_b1", "echo one")
	b1.Before = func() {
		round = s.between("supervise", "--json", "--escalate-after", "1", "--on-escalate", `cat > question.json; echo "`+said+`"`)
	}
	s = newSupervised(t,
		check("toolu_g", "write a JSON parser in Python", 6),
		check("toolu_d", "redesign the company logo in purple", 5),
		b1,
		agenttest.Bash("toolu_b2", "echo two"),
		agenttest.Say("Back to the parser."))
	s.runClaude(t, "drifter", nil, "Bash", allMCP)
	out := round.must(t, "the supervise round")
	var r1 struct {
		Escalations []struct{ Kind, Who, Decision string } `json:"escalations"`
	}
	if err := json.Unmarshal([]byte(out), &r1); err != nil || len(r1.Escalations) != 1 || r1.Escalations[0].Kind != "drift" ||
		r1.Escalations[0].Decision != said || !strings.HasPrefix(r1.Escalations[0].Who, "drifter:") {
		t.Fatalf("the round did not escalate the drift and take the answer (%v):\n%s", err, out)
	}
	mains := s.Model.MainRequests()
	for i, r := range mains {
		if r.Turn == 2 && strings.Contains(string(r.Body), said) {
			t.Fatalf("request %d, before the round, already carries the answer", i)
		}
		if r.Turn == 3 && !strings.Contains(string(r.Body), said) {
			t.Fatalf("the request right after the round (turn 3) does not carry the answer:\n%s", r.Body)
		}
	}
	if n := strings.Count(s.lastRequest(t), said); n != 1 {
		t.Fatalf("the answer is %d times in the conversation; want exactly once", n)
	}
	log := s.Run(t, s.lb, "supervise", "log", "--json")
	var delivered []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.Stdout), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["kind"] == "delivery" {
			delivered = append(delivered, rec)
		}
	}
	if len(delivered) != 1 || delivered[0]["round"] != 1.0 || !strings.HasPrefix(fmt.Sprint(delivered[0]["agent"]), "drifter:") ||
		!strings.Contains(fmt.Sprint(delivered[0]["text"]), said) {
		t.Fatalf("the journal's deliveries: %v\n%s", delivered, log.Stdout)
	}
}

// A halted agent's next tool call is denied with the halt's reason and the
// command that releases it; after a person's release, the agent's next
// event tells it so. The agent is Claude Code (bob); the agent it collides
// with (alice, more checks on the same job) is a shell under laserbrain run
// that waits on a FIFO while the rounds run.
func TestClaudeHaltedThenReleased(t *testing.T) {
	var s *supervised
	var round, release *between
	fifos := t.TempDir()
	ready, goOn := filepath.Join(fifos, "ready"), filepath.Join(fifos, "go")
	for _, f := range []string{ready, goOn} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b1 := agenttest.Bash("toolu_b1", "touch ran-1")
	b1.Before = func() {
		// Alice has checked when she opens the FIFO to say so.
		got := make(chan error, 1)
		go func() { _, err := os.ReadFile(ready); got <- err }()
		select {
		case err := <-got:
			if err != nil {
				round = &between{err: err}
				return
			}
		case <-time.After(time.Minute):
			round = &between{err: errors.New("alice never got ready")}
			return
		}
		round = s.between("supervise", "--json")
	}
	b2 := agenttest.Bash("toolu_b2", "touch ran-2")
	b2.Before = func() {
		var r struct{ Halts []struct{ Agent string } }
		if round == nil || json.Unmarshal(round.out, &r) != nil || len(r.Halts) != 1 {
			release = &between{err: errors.New("no halt to release")}
			return
		}
		release = s.between("supervise", "release", r.Halts[0].Agent, "--reason", "bob takes the tests")
	}
	s = newSupervised(t, check("toolu_c1", "the parser module refactor", 6), b1, b2, agenttest.Say("Done."))

	goal := "refactor the parser module"
	alice := s.Start(t, s.lb, "run", "--agent", "alice", "--goal", goal, "--", "sh", "-c",
		`for d in 5 4 3; do "$0" check --goal "$1" --distance $d > /dev/null || exit 1; done; echo ready > "$2"; read x < "$3"`,
		s.lb, goal, ready, goOn)
	s.runClaude(t, "bob", []string{"--goal", "the parser module refactor"}, "Bash", allMCP)
	if err := os.WriteFile(goOn, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := alice.Wait(t); r.ExitCode != 0 {
		t.Fatalf("alice: exit %d\n%s", r.ExitCode, r.Stderr)
	}

	var r1 struct {
		Halts []struct{ Agent, Reason string } `json:"halts"`
	}
	if err := json.Unmarshal([]byte(round.must(t, "the supervise round")), &r1); err != nil || len(r1.Halts) != 1 || !strings.HasPrefix(r1.Halts[0].Agent, "bob:") {
		t.Fatalf("the round did not halt bob (%v): %s", err, round.out)
	}
	bob := r1.Halts[0].Agent
	denied := s.Model.ResultAfter(t, "toolu_b1")
	ran := s.ran(2)
	if !denied.IsError || ran[1] || !strings.Contains(denied.Text, bob+" is halted by supervisor: shares a ground with alice:") ||
		!strings.Contains(denied.Text, "laserbrain supervise release "+bob) {
		t.Fatalf("the halted agent's call: ran=%v, shown %+v; want it denied with why and the release command", ran[1], denied)
	}
	if out := release.must(t, "the release"); !strings.Contains(out, "released "+bob) {
		t.Fatalf("release: %s", out)
	}
	if tr := s.Model.ResultAfter(t, "toolu_b2"); tr.IsError || !ran[2] {
		t.Fatalf("after the release the call was refused: %+v", tr)
	}
	conv := s.lastRequest(t)
	told := "(round 1, release): the halt on " + bob
	if n := strings.Count(conv, told); n != 1 || !strings.Contains(conv, "bob takes the tests. You may go on.") {
		t.Fatalf("the release was told %d times; want once, after the release:\n%s", n, conv)
	}
	for _, r := range s.Model.MainRequests() {
		if r.Turn == 2 && strings.Contains(string(r.Body), told) {
			t.Fatal("the release was told before it was given")
		}
	}
}
