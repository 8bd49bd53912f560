package main

// laserbrain loop with the real Claude Code CLI against the scripted model:
// the fix agent and the judge are claude -p sessions under our hooks, and
// the judge answers through the verdict MCP tool of `laserbrain mcp
// --loop-call`.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/otlptest"
)

// loopSession is a supervised world set up for a loop: a git repository
// with ./ci, an agents.conf pointing every service at the CLI under test,
// and SCRIPT.
func loopSession(t *testing.T, script string, turns ...agenttest.Turn) *supervised {
	t.Helper()
	s := newSupervised(t, turns...)
	files := map[string]string{
		"ci":      "#!/bin/sh\ntest -f fixed && { echo 'ci: ok'; exit 0; }\necho 'ci: FAIL parser missing'; exit 1\n",
		"loop.sh": script,
		"agents.conf": "fix_COMMAND=\"" + s.Claude + "\"\ntask_COMMAND=\"" + s.Claude + "\"\njudge_COMMAND=\"" + s.Claude + "\"\n" +
			"fix_TOOLS=\"bash read escalate\"\n",
	}
	commitFiles(t, s.Dir, files)
	s.Env = append(s.Env, gitIdent...)
	return s
}

func verdictCall(id string, v map[string]any) agenttest.Turn {
	return agenttest.CallID(id, "mcp__laserbrain__verdict", v)
}

// The reference loop end to end: ./ci fails, the fix agent (claude, Bash
// under our hooks) repairs it, ./ci passes, the judge (claude) answers
// through the verdict tool, the loop exits 0 with one summary.
func TestClaudeLoopReference(t *testing.T) {
	ref, err := os.ReadFile("../../examples/loop/ci-until-green.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := loopSession(t, string(ref),
		agenttest.Bash("toolu_fix", "touch fixed"),
		agenttest.Say("Fixed: the parser file exists now."),
		verdictCall("toolu_verdict", map[string]any{"sufficient": true, "summary": "The parser is in place and CI passes.",
			"findings": []any{map[string]any{"severity": "suggestion", "where": "README", "what": "Document the parser", "why": "users"}}}),
		agenttest.Say("Verdict given."),
		agenttest.Say("Triaged: nothing worth doing."))
	otelBeside(t)
	rcv := otlptest.Start(t)
	s.Env = append(s.Env, "SOAK=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	r := s.Run(t, s.lb, "loop", "loop.sh")
	if r.ExitCode != 0 {
		t.Fatalf("loop exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// The loop's runs reached the collector as laserbrain run's do: one
	// invoke_agent span for the loop, and one for each session.
	sent := map[string]int{}
	for _, sp := range rcv.Spans() {
		if sp.Attrs["gen_ai.operation.name"] == "invoke_agent" {
			sent[sp.Attrs["gen_ai.agent.name"].(string)]++
		}
	}
	if sent["fix"] != 1 || sent["judge"] != 1 || sent["task"] != 1 || len(sent) != 4 {
		t.Errorf("invoke_agent spans by agent: %v; want the loop's own and one per session (fix, judge, task)", sent)
	}
	if strings.Contains(r.Stderr, "no-op") {
		t.Fatalf("the fix agent's change was not seen:\n%s", r.Stderr)
	}
	if tr := s.toolResult(t, "toolu_fix"); tr.IsError {
		t.Fatalf("the fix agent's Bash call was refused: %s", tr.Text)
	}
	if tr := s.toolResult(t, "toolu_verdict"); tr.IsError || !strings.Contains(tr.Text, "verdict recorded") {
		t.Fatalf("the verdict tool answered is_error=%v %q", tr.IsError, tr.Text)
	}
	if strings.Count(r.Stderr, "Ran laserbrain loop") != 1 ||
		!strings.Contains(r.Stderr, "Exit 0 after 1 iteration (1 agent fix, 1 judge judge, 1 agent task), judge soak 1/1.") ||
		!strings.Contains(r.Stderr, `Final verdict: "The parser is in place and CI passes."`) {
		t.Fatalf("summary:\n%s", r.Stderr)
	}
	// The judge's session ran under our hooks with the stream rendered.
	if !strings.Contains(r.Stderr, "[judge] → mcp__laserbrain__verdict") || !strings.Contains(r.Stderr, "[fix] → Bash") {
		t.Fatalf("the sessions were not rendered on stderr:\n%s", r.Stderr)
	}
	// The fix agent's prompt carried the CI log; the judge's named a checkpoint.
	prompts := allUserText(s.Model)
	if !strings.Contains(prompts, "ci: FAIL parser missing") || !strings.Contains(prompts, "CI is failing. Make ./ci pass.") {
		t.Fatalf("the fix agent's prompt lacks the CI log:\n%s", prompts)
	}
	if !checkpointsRe.MatchString(prompts) {
		t.Fatal("the judge's prompt names no two checkpoints")
	}
	rows := s.runsJSON(t)
	agents := map[string]bool{}
	for _, row := range rows {
		agents[row["agent"].(string)] = true
	}
	if !agents["loop"] || !agents["fix"] || !agents["judge"] {
		t.Fatalf("the loop, fix and judge runs are not all in the fleet: %v", rows)
	}
}

// A malformed verdict through the tool bounces with the reason (the
// model sees it as a tool error) and the corrected one is taken; the
// judge's session is pinned: the second judge call resumes it.
func TestClaudeLoopVerdictBounceAndPinnedSession(t *testing.T) {
	s := loopSession(t, "judge judge 'first look'\necho \"first=$?\"\njudge judge 'second look'\necho \"second=$?\"\n",
		verdictCall("toolu_bad", map[string]any{"sufficient": false, "summary": "Not done.", "findings": []any{}}),
		verdictCall("toolu_good", map[string]any{"sufficient": false, "summary": "The parser is missing.",
			"findings": []any{map[string]any{"severity": "blocker", "where": "parse.go", "what": "Add the parser", "why": "plan step 1"}}}),
		agenttest.Say("Done."),
		verdictCall("toolu_second", map[string]any{"sufficient": true, "summary": "Now complete.", "findings": []any{}}),
		agenttest.Say("Done."))
	r := s.Run(t, s.lb, "loop", "loop.sh")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "first=1") || !strings.Contains(r.Stdout, "second=0") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if tr := s.toolResult(t, "toolu_bad"); !tr.IsError || !strings.Contains(tr.Text, "needs at least one blocker or required finding") {
		t.Fatalf("the malformed verdict was not bounced with its reason: %+v", tr)
	}
	if !strings.Contains(r.Stdout, "1. **blocker** — `parse.go`: Add the parser") {
		t.Fatalf("the rendered work order is not on stdout:\n%s", r.Stdout)
	}
	// The second judge call resumed the first session: its request carries
	// the first call's prompt.
	var second string
	for _, req := range s.Model.Requests() {
		if req.Main && strings.Contains(string(req.Body), "second look") {
			second = string(req.Body)
		}
	}
	if second == "" || !strings.Contains(second, "first look") {
		t.Fatal("the second judge call did not resume the pinned session")
	}
}

// A judge that calls escalate: the builtin exits 3 with the reason.
func TestClaudeLoopJudgeEscalates(t *testing.T) {
	s := loopSession(t, "judge judge 'look'\necho \"judge=$?\"\n",
		agenttest.CallID("toolu_esc", "mcp__laserbrain__escalate", map[string]any{"reason": "The plan contradicts itself on the output format."}),
		agenttest.Say("Escalated."))
	r := s.Run(t, s.lb, "loop", "loop.sh")
	if !strings.Contains(r.Stdout, "judge=3") || !strings.Contains(r.Stderr, "judge judge escalated: The plan contradicts itself") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
}

// allUserText is every user text block the model was shown, across all
// main-loop requests.
func allUserText(m *agenttest.Model) string {
	var b strings.Builder
	for _, req := range m.Requests() {
		if req.Main {
			b.Write(req.Body)
			b.WriteString("\n")
		}
	}
	return strings.ReplaceAll(b.String(), `\n`, "\n")
}

// The loop's acceptance criterion 2 (seed002Acceptance) with the real CLI:
// the model's API answers the fix agent's session with an error (404: not
// retried); claude -p reports it, and `agent fix` is transport (5: ≥ 4,
// never a completion).
func TestSeed002AgentClaudeAPIError(t *testing.T) {
	// Claude Code asks again on a first failure (without streaming): every
	// request fails.
	fail := agenttest.Fail(404, "not_found_error", "model: claude-scripted-gone")
	s := loopSession(t, "agent fix 'repair it' < /dev/null\necho \"agent=$?\"\n", fail, fail, fail, fail)
	r := s.Run(t, s.lb, "loop", "loop.sh")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "agent=5") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "agent fix: service fix: claude failed") || !strings.Contains(r.Stderr, "API status 404") {
		t.Fatalf("the API error is not named on the terminal:\n%s", r.Stderr)
	}
}

// The loop's acceptance criterion 10 (seed002Acceptance): a Claude Code
// session (the parent) runs ralph.sid through laserbrain loop from its
// Bash tool; what comes back into its transcript, through its own hooks
// (the additional context of its next event) and not as the Bash output,
// is exactly one paste-style account of the run (run id, exit status with the iteration
// counts, the final verdict's summary, the journal's path), and the
// question "why did the
// judge reject pass 2" is answered from the journal at that path, where
// the rejection's summary is — the account itself does not carry it.
func TestSeed002ParentTurn(t *testing.T) {
	ralph, _, err := ralphScript()
	if err != nil {
		t.Fatal(err)
	}
	s := newSupervised(t,
		agenttest.Bash("toolu_loop", "laserbrain loop ralph.sid"),
		agenttest.Bash("toolu_why", `grep -h '"kind":"judge"' "$LASERBRAIN_HOME"/loop/*/steps.jsonl | grep -v '"phase"' | grep '"passed":false' | grep -o '"summary":"[^"]*"'`),
		agenttest.Say("The judge rejected pass 2 because the exporter drops null fields."))
	files := map[string]string{
		"ralph.sid": string(ralph),
		"ci":        "#!/bin/sh\necho 'ci: ok'\n",
		"agents.conf": "fix_KIND=command\nfix_COMMAND=\"sh task.sh\"\ntask_KIND=command\ntask_COMMAND=\"sh task.sh\"\n" +
			"judge_KIND=command\njudge_COMMAND=\"sh judge.sh\"\n",
		"task.sh": "cat > /dev/null\necho \"work $(date +%s%N)\" >> work.txt\n",
		"judge.sh": `n=$(cat judge.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > judge.count
case $n in
2) echo '{"sufficient": false, "summary": "The exporter drops null fields.", "findings": [{"severity": "blocker", "where": "export.go", "what": "Keep null fields", "why": "PLAN.md step 3"}]}' ;;
*) echo '{"sufficient": true, "summary": "The exporter is complete.", "findings": []}' ;;
esac
`,
		".gitignore": "*.count\n",
	}
	commitFiles(t, s.Dir, files)
	s.Env = append(s.Env, gitIdent...)
	s.Env = append(s.Env, "SOAK=2", "PATH="+filepath.Dir(s.lb)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// A loop started from inside a confined agent cannot write its journal
	// (the laserbrain home is read-only to the agent's tree): the parent
	// session here runs without the kernel's confinement.
	s.Env = append(s.Env, "LASERBRAIN_CONFINE=off")
	s.runClaude(t, "parent", nil, "Bash", allMCP)

	turn := s.toolResult(t, "toolu_loop")
	if turn.IsError {
		t.Fatalf("laserbrain loop failed in the parent's Bash: %s", turn.Text)
	}
	// The Bash output says where the account went; the account itself
	// reaches the session through its hooks, once, as a turn of its own.
	if strings.Contains(turn.Text, "Ran laserbrain loop") || !strings.Contains(turn.Text, "its account goes to the session that started it (parent, run ") {
		t.Fatalf("the Bash output should point at the injected account, not carry it:\n%s", turn.Text)
	}
	mains := s.Model.MainRequests()
	last := strings.ReplaceAll(string(mains[len(mains)-1].Body), `\n`, "\n")
	if n := strings.Count(last, "Ran laserbrain loop"); n != 1 {
		t.Fatalf("the parent's conversation holds %d accounts of the run, want exactly 1:\n%s", n, last)
	}
	shape := regexp.MustCompile(`Ran laserbrain loop ralph\.sid \(run [0-9a-f]{12}\)\.\n` +
		`Exit 0 after 4 iterations \(4 judge judge, 3 agent task\), judge soak 2/2\.\n` +
		`Final verdict: \\"The exporter is complete\.\\"\n` +
		`Journal: (/\S+/loop/[0-9a-f]{12})/`)
	m := shape.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("the injected account is not in §5's shape:\n%s", last)
	}
	if strings.Contains(m[0], "drops null fields") {
		t.Fatalf("the account carries more than the final verdict's summary:\n%s", m[0])
	}
	journalDir := m[1]
	why := s.toolResult(t, "toolu_why")
	if why.IsError || !strings.Contains(why.Text, `"summary":"The exporter drops null fields."`) {
		t.Fatalf("the journal did not answer why pass 2 was rejected: %+v", why)
	}
	raw, err := os.ReadFile(filepath.Join(journalDir, "steps.jsonl"))
	if err != nil || !strings.Contains(string(raw), "The exporter drops null fields.") {
		t.Fatalf("the journal the account names (%s) does not hold the rejection: %v", journalDir, err)
	}
}

// checkpointsRe finds the two checkpoints a judge's prompt names.
var checkpointsRe = regexp.MustCompile(`Checkpoints: (refs/laserkit/loop/[0-9a-f]+/[0-9]+) is the tree [^;]*; (refs/laserkit/loop/[0-9a-f]+/[0-9]+) is the tree you are judging now`)

// The judge's prompt names two checkpoints — its previous verdict's and
// the tree it judges now — whose diff shows what changed, new untracked
// files included: the real Claude Code judge runs `git diff --stat A B`
// with the two refs its second prompt names (what its git_diff tool may
// run) and is shown the task agent's new file, and not the untracked file
// that was there all along; `git diff A` alone, as the prompt used to say,
// misses the new file and lists the old one as deleted.
func TestClaudeLoopJudgeDiffsTwoCheckpoints(t *testing.T) {
	var mu sync.Mutex
	var named []string
	diff := map[string]any{"command": "git diff --stat", "description": "scripted"}
	judgeDiff := agenttest.Turn{Tools: []agenttest.ToolUse{{ID: "toolu_judge_diff", Name: "Bash", Input: diff}}}
	var s *supervised
	judgeDiff.Before = func() {
		all := checkpointsRe.FindAllStringSubmatch(allUserText(s.Model), -1)
		if len(all) == 0 {
			return // the command stays a bare git diff: the test fails below, naming it
		}
		m := all[len(all)-1]
		mu.Lock()
		named = m[1:3]
		mu.Unlock()
		diff["command"] = "git diff --stat " + m[1] + " " + m[2]
	}
	s = loopSession(t, "judge judge 'Is the parser there?'\necho \"first=$?\"\nagent task 'Add the parser.'\njudge judge 'Is the parser there now?'\necho \"second=$?\"\n",
		verdictCall("toolu_v1", map[string]any{"sufficient": false, "summary": "The parser is missing.",
			"findings": []any{map[string]any{"severity": "blocker", "where": "parser.go", "what": "Add the parser", "why": "plan step 1"}}}),
		agenttest.Say("Verdict given."),
		agenttest.Bash("toolu_add", "printf 'package parser\\n' > parser.go"),
		agenttest.Say("Added the parser."),
		judgeDiff,
		verdictCall("toolu_v2", map[string]any{"sufficient": true, "summary": "The parser is there.", "findings": []any{}}),
		agenttest.Say("Done."))
	// An untracked file that is there all along, and stays as it is.
	if err := os.WriteFile(filepath.Join(s.Dir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := s.Run(t, s.lb, "loop", "loop.sh")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "first=1") || !strings.Contains(r.Stdout, "second=0") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	mu.Lock()
	refs := named
	mu.Unlock()
	if len(refs) != 2 {
		t.Fatalf("the judge's second prompt names no two checkpoints:\n%s", allUserText(s.Model))
	}
	tr := s.toolResult(t, "toolu_judge_diff")
	if tr.IsError || !strings.Contains(tr.Text, "parser.go") || strings.Contains(tr.Text, "notes.txt") {
		t.Fatalf("the judge's git diff --stat %s %s showed (is_error=%v):\n%s\nwant parser.go, and not notes.txt", refs[0], refs[1], tr.IsError, tr.Text)
	}
	old := exec.Command("git", "diff", "--stat", refs[0])
	old.Dir = s.Dir
	out, err := old.CombinedOutput()
	if err != nil || strings.Contains(string(out), "parser.go") || !strings.Contains(string(out), "notes.txt") {
		t.Fatalf("git diff --stat %s alone (%v): %s — the old prompt's diff was expected to miss parser.go and list notes.txt", refs[0], err, out)
	}
}

// The loop's --budget counts the tokens its Claude Code sessions spent as
// each session's transcript records them (what laserbrain run counts:
// input, output and cache): two fix sessions against a ./ci that never
// passes spend the scripted model's usage, past a budget of 50, and the
// loop stops there with the figures and exits 4.
func TestClaudeLoopBudget(t *testing.T) {
	ref, err := os.ReadFile("../../examples/loop/ci-until-green.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := loopSession(t, string(ref),
		agenttest.Bash("toolu_1", "echo try >> tries"), agenttest.Say("Tried once."),
		agenttest.Bash("toolu_2", "echo try >> tries"), agenttest.Say("Tried twice."),
		agenttest.Bash("toolu_3", "echo try >> tries"), agenttest.Say("Tried thrice."))
	s.Env = append(s.Env, "SOAK=1")
	r := s.Run(t, s.lb, "loop", "loop.sh", "--budget", "50")
	per := agenttest.MessagesInputTokens + agenttest.MessagesOutputTokens
	spent := len(s.Model.MainRequests()) * per
	t.Logf("%d model requests, %d tokens each", len(s.Model.MainRequests()), per)
	want := "stopped: the token --budget is spent: " + strconv.Itoa(spent) + " of 50 tokens used"
	if r.ExitCode != 4 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("loop exit %d; want 4 and %q:\n%s", r.ExitCode, want, r.Stderr)
	}
	if spent <= 50 || spent-2*per >= 50 {
		t.Errorf("%d tokens spent: the loop did not stop at the session that crossed 50", spent)
	}
	if tr, ok := s.Model.ToolResult("toolu_3"); ok {
		t.Errorf("a third fix session ran past the budget: %+v", tr)
	}
}
