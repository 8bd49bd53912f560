package main

// Issue 18 with the real Claude Code CLI in print mode (claude -p), where
// nobody answers an ask: Claude Code refuses it and lists the call in the
// result's permission_denials. The gate must answer for who is there.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// denied lists the tool_use ids in the result's permission_denials.
func denied(t *testing.T, r agenttest.Result) map[string]bool {
	t.Helper()
	raw, ok := r.JSON["permission_denials"].([]any)
	if !ok {
		t.Fatalf("the result has no permission_denials array: %v", r.JSON)
	}
	out := map[string]bool{}
	for _, d := range raw {
		m, _ := d.(map[string]any)
		id, _ := m["tool_use_id"].(string)
		out[id] = true
	}
	return out
}

// In claude -p, installed hooks only (presence from Claude Code's own
// CLAUDE_CODE_SESSION_ATTENDED=0): a commit whose message mentions rm -rf
// runs, and so do a README line about git push --force and a grep for npm
// publish, each with a note before the model and a record on the run; git
// push --force is still denied with its reason; inline python that deletes
// a tree is denied with what to do instead. None of them is an ask nobody
// answered.
func TestClaudeUnattendedAnswers(t *testing.T) {
	commit := "git init -q . && git -c user.name=agent -c user.email=agent@example.org commit -q --allow-empty -m 'never rm -rf here'"
	readme := "echo 'Never git push --force to main.' >> README.md"
	grep := "grep -rn 'npm publish' README.md || echo no-publish-line"
	push := "git push --force origin main; touch push-marker"
	inline := `python3 -c "import shutil; shutil.rmtree('build')"; touch python-marker`
	s := newSupervised(t,
		agenttest.Bash("toolu_commit", commit),
		agenttest.Bash("toolu_readme", readme),
		agenttest.Bash("toolu_grep", grep),
		agenttest.Bash("toolu_push", push),
		agenttest.Bash("toolu_py", inline),
		agenttest.Say("Done."))
	if err := os.MkdirAll(filepath.Join(s.Dir, "build", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.installProject(t)
	r := s.Run(t, s.Claude, agenttest.ClaudeArgs("work on the task", "Bash")...)
	if r.JSON == nil {
		t.Fatalf("claude: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	refused := denied(t, r)

	// The data matches ran, were not refused, and the model was told.
	for _, id := range []string{"toolu_commit", "toolu_readme", "toolu_grep"} {
		if tr := s.toolResult(t, id); tr.IsError || refused[id] {
			t.Errorf("%s was refused (permission_denials %v): %q", id, refused[id], tr.Text)
		}
	}
	log, err := exec.Command("git", "-C", s.Dir, "log", "-1", "--format=%s").Output()
	if err != nil || strings.TrimSpace(string(log)) != "never rm -rf here" {
		t.Errorf("the commit was not made: %q %v", log, err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir, "README.md")); string(b) != "Never git push --force to main.\n" {
		t.Errorf("README.md = %q", b)
	}
	if tr := s.toolResult(t, "toolu_grep"); !strings.Contains(tr.Text, "no-publish-line") {
		t.Errorf("the grep did not run: %q", tr.Text)
	}
	notes := strings.Join(s.Model.SystemTexts(), "\n")
	for _, want := range []string{
		"PreToolUse:Bash hook additional context: laserbrain operator gate: your command mentions rm -rf (recursive force delete) only as data",
		"your command mentions git push --force (force-push to remote) only as data",
		"your command mentions npm publish (public package publish) only as data",
		"CLAUDE_CODE_SESSION_ATTENDED=0",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the model was not shown %q; its system texts:\n%s", want, notes)
		}
	}

	// The executed force-push: denied with its reason, as ever.
	if tr := s.toolResult(t, "toolu_push"); !tr.IsError || !strings.Contains(tr.Text, "laserbrain operator gate: this command is irreversible or outward — git push --force (force-push to remote), and nobody authorized it") {
		t.Errorf("the force-push: is_error=%v %q", tr.IsError, tr.Text)
	}
	// Inline code: denied with what to do instead.
	tr := s.toolResult(t, "toolu_py")
	for _, want := range []string{"nobody is attending this run", "CLAUDE_CODE_SESSION_ATTENDED=0", "in code run by python3",
		"split the command", "pass it as an argument", "ask the user to run it or to authorize exactly this command"} {
		if !tr.IsError || !strings.Contains(tr.Text, want) {
			t.Errorf("the inline python: is_error=%v, %q does not say %q", tr.IsError, tr.Text, want)
		}
	}
	// The model is never taught the command that grants an authorization:
	// it asks the user.
	if strings.Contains(tr.Text, "laserbrain authorize") {
		t.Errorf("the inline python's refusal names laserbrain authorize: %q", tr.Text)
	}
	for _, marker := range []string{"push-marker", "python-marker"} {
		if _, err := os.Stat(filepath.Join(s.Dir, marker)); err == nil {
			t.Errorf("%s exists: a denied command ran", marker)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "build", "x")); err != nil {
		t.Errorf("build/ is gone: %v", err)
	}
	// No answer was an ask: every tool result is ours or the command's
	// output, never a question for a person.
	for _, id := range []string{"toolu_commit", "toolu_readme", "toolu_grep", "toolu_push", "toolu_py"} {
		if tr := s.toolResult(t, id); strings.Contains(tr.Text, "confirm before it runs") {
			t.Errorf("%s was answered with an ask nobody can answer: %q", id, tr.Text)
		}
	}
	if len(refused) != 2 || !refused["toolu_push"] || !refused["toolu_py"] {
		t.Errorf("permission_denials = %v; want exactly the force-push and the inline python", refused)
	}

	// The run keeps what happened: three calls let through with a
	// finding, two refused, all as gate events; the run is unattended.
	st, err := fleet.OpenLocal(filepath.Join(s.lbHome, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	run, err := st.RunForSession(ctx, r.JSON["session_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if run.Attended != "unattended" {
		t.Errorf("the run's attended = %q", run.Attended)
	}
	evs, err := st.Events(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var gates []string
	for _, e := range evs {
		if e.Kind == fleet.KindGate {
			gates = append(gates, strings.TrimPrefix(e.ID, "gate:")+"="+map[bool]string{true: "allow", false: "deny"}[e.OK == laserbrain.OKTrue])
		}
	}
	if strings.Join(gates, " ") != "toolu_commit=allow toolu_readme=allow toolu_grep=allow toolu_push=deny toolu_py=deny" {
		t.Errorf("gate events on the run: %v", gates)
	}
}

// Under laserbrain run (standard input not a terminal) the run itself is
// recorded unattended, and a line mentioning rm -rf is written.
func TestClaudeRunUnattended(t *testing.T) {
	s := newSupervised(t,
		agenttest.Bash("toolu_note", "echo 'rm -rf is never run here' > NOTES"),
		agenttest.Say("Done."))
	r := s.runClaude(t, "noter", nil, "Bash")
	if tr := s.toolResult(t, "toolu_note"); tr.IsError || len(denied(t, r)) != 0 {
		t.Fatalf("refused: %q, permission_denials %v", tr.Text, r.JSON["permission_denials"])
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["attended"] != "unattended" {
		t.Fatalf("runs: %v", rows)
	}
}

// An interactive session (a person at the terminal; Claude Code says
// CLAUDE_CODE_SESSION_ATTENDED=1): the same match only in data is asked,
// as before, on the person's screen with the presence it assumed, and runs
// once the person says yes.
func TestClaudeAttendedAsks(t *testing.T) {
	s := newSupervised(t,
		agenttest.Bash("toolu_note", "echo 'never rm -rf here' > NOTES"),
		agenttest.Say("Done."))
	s.TrustHome(t)
	s.installProject(t)
	term := s.Interactive(t, "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	term.WaitFor("accept edits on")
	term.Type("work on the task")
	term.WaitFor("work on the task")
	term.Type("\r")
	term.WaitFor("Do you want to proceed?")
	screen := term.Screen()
	for _, want := range []string{
		"Hook PreToolUse:Bash requires confirmation for this command: laserbrain operator gate: rm -rf (recursive force delete) (in data) — confirm before it runs",
		"(presence: attended — Claude Code says a person is attending the session (CLAUDE_CODE_SESSION_ATTENDED=1))",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the person was not shown %q; the screen:\n%s", want, screen)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "NOTES")); err == nil {
		t.Fatal("NOTES exists before the person answered")
	}
	term.Type("\r") // 1. Yes
	term.WaitFor("Done.")
	if b, err := os.ReadFile(filepath.Join(s.Dir, "NOTES")); err != nil || string(b) != "never rm -rf here\n" {
		t.Fatalf("NOTES after yes: %q %v", b, err)
	}
	if tr := s.toolResult(t, "toolu_note"); tr.IsError {
		t.Fatalf("the model was shown an error: %q", tr.Text)
	}
}
