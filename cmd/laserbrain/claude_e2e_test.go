package main

// End-to-end tests with the real Claude Code CLI against a scripted model
// (internal/agenttest): the agent loop, its permission flow, hooks and MCP
// are Claude Code's own; only the model's turns are scripted. Each test
// proves its point by what the model was shown (the tool results of the
// next request) and by what happened on disk.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// builtOnce is a command of this module built once per test process (as
// make build does), into a temporary directory of its own that TestMain
// removes when the test binary is done.
type builtOnce struct {
	name, pkg string // the program's file name, and the package to build
	// beside, if set, is the program whose directory this one is built
	// into, where that one looks for it (make install puts it there).
	beside *builtOnce
	once   sync.Once
	dir    string
	err    error
}

var (
	laserbrainBuild = &builtOnce{name: "laserbrain", pkg: "."}
	ponderBuild     = &builtOnce{name: "ponder", pkg: "../ponder"}
	gateBuild       = &builtOnce{name: "laserbrain-gate", pkg: "../laserbrain-gate"}
	builds          = []*builtOnce{laserbrainBuild, ponderBuild, gateBuild}
	// otelBuild is in laserbrain's directory, which TestMain removes.
	otelBuild = &builtOnce{name: "laserbrain-otel", pkg: "../laserbrain-otel", beside: laserbrainBuild}
)

// path builds the program on first use and returns where it is.
func (b *builtOnce) path(t testing.TB) string {
	t.Helper()
	var dir string
	if b.beside != nil {
		dir = filepath.Dir(b.beside.path(t))
	}
	b.once.Do(func() {
		if b.dir = dir; dir == "" {
			if b.dir, b.err = os.MkdirTemp("", b.name+"-e2e-"); b.err != nil {
				return
			}
		}
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(b.dir, b.name), b.pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", b.name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, b.name)
}

// laserbrainBinary is laserbrain built once per test process, for Claude
// Code to run as hook and MCP server.
func laserbrainBinary(t testing.TB) string {
	t.Helper()
	return laserbrainBuild.path(t)
}

// supervised is one test's world: the CLI, our binary, a scripted model, a
// fresh HOME, work directory and LASERBRAIN_HOME.
type supervised struct {
	*agenttest.Session
	lb     string
	lbHome string
}

func newSupervised(t *testing.T, turns ...agenttest.Turn) *supervised {
	t.Helper()
	claude := agenttest.Claude(t)
	lb := laserbrainBinary(t)
	m := agenttest.NewModel(t, turns...)
	s := &supervised{Session: agenttest.NewSession(t, claude, m), lb: lb}
	s.lbHome = filepath.Join(s.Home, "laserbrain")
	s.Env = append(s.Env, "LASERBRAIN_HOME="+s.lbHome, "LASERBRAIN_FLEET=e2e-fleet")
	return s
}

// runClaude runs `laserbrain run --agent AGENT [extra...] -- claude -p …`.
func (s *supervised) runClaude(t *testing.T, agent string, extra []string, allowed ...string) agenttest.Result {
	t.Helper()
	args := append([]string{"run", "--agent", agent}, extra...)
	args = append(args, "--", s.Claude)
	args = append(args, agenttest.ClaudeArgs("work on the task", allowed...)...)
	r := s.Run(t, s.lb, args...)
	if r.JSON == nil {
		t.Fatalf("claude printed no result object (exit %d)\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// installProject installs laserbrain's hooks for Claude Code in the
// project, as a person would.
func (s *supervised) installProject(t *testing.T) {
	t.Helper()
	if r := s.Run(t, s.lb, "install", "claude", "--scope", "project"); r.ExitCode != 0 {
		t.Fatalf("install: %s", r.Stderr)
	}
}

// runsJSON is `laserbrain runs --json` for the test's fleet.
func (s *supervised) runsJSON(t *testing.T) []map[string]any {
	t.Helper()
	r := s.Run(t, s.lb, "runs", "--json")
	if r.ExitCode != 0 {
		t.Fatalf("laserbrain runs: exit %d: %s", r.ExitCode, r.Stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, r.Stdout)
	}
	return rows
}

func (s *supervised) toolResult(t *testing.T, id string) agenttest.ToolResult {
	t.Helper()
	tr, ok := s.Model.ToolResult(id)
	if !ok {
		t.Fatalf("the model was never shown a result for %s", id)
	}
	return tr
}

// checkResult decodes a check_state result the model was shown.
func (s *supervised) checkResult(t *testing.T, id string) map[string]any {
	t.Helper()
	tr := s.toolResult(t, id)
	var v map[string]any
	if err := json.Unmarshal([]byte(tr.Text), &v); err != nil || tr.IsError {
		t.Fatalf("check %s: is_error=%v, not a verdict: %s", id, tr.IsError, tr.Text)
	}
	return v
}

func check(id, goal string, distance int) agenttest.Turn {
	return agenttest.CallID(id, "mcp__laserbrain__check_state", map[string]any{"goal": goal, "progress": "advancing", "distance": distance})
}

const allMCP = "mcp__laserbrain"

// A scripted force-push with a marker chained after it is denied: the
// marker never appears, and the model's next request carries the denial
// as an is_error tool result with our reason.
func TestClaudeForcePushDenied(t *testing.T) {
	s := newSupervised(t,
		agenttest.Bash("toolu_push", "git push --force origin main; touch ran-marker"),
		agenttest.Say("I will not force-push."))
	r := s.runClaude(t, "pusher", nil, "Bash")
	if _, err := os.Stat(filepath.Join(s.Dir, "ran-marker")); err == nil {
		t.Fatal("ran-marker exists: the denied command ran")
	}
	tr := s.toolResult(t, "toolu_push")
	if !tr.IsError || !strings.Contains(tr.Text, "laserbrain operator gate") || !strings.Contains(tr.Text, "git push --force") {
		t.Fatalf("the model was shown is_error=%v %q; want our denial with its reason", tr.IsError, tr.Text)
	}
	if r.ExitCode != 0 {
		t.Fatalf("laserbrain run exited %d (claude's own status is kept): %s", r.ExitCode, r.Stderr)
	}
}

// A scripted check_state reaches our MCP server and the step is on the
// run `laserbrain runs --json` lists; a session opened by Claude Code is
// attached to it.
func TestClaudeCheckStateOnTheRun(t *testing.T) {
	s := newSupervised(t,
		check("toolu_c1", "ship the parser", 4),
		agenttest.Say("Checked."))
	s.runClaude(t, "a1", nil, allMCP)
	v := s.checkResult(t, "toolu_c1")
	if v["reason"] != "grounded" || v["ground"] != "ship the parser" {
		t.Fatalf("check_state answered %v", v)
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 {
		t.Fatalf("runs = %v", rows)
	}
	row := rows[0]
	if row["agent"] != "a1" || row["run"] != v["run"] || row["steps"] != 1.0 || row["last_verdict"] != "grounded" ||
		row["fleet"] != "e2e-fleet" || len(row["sessions"].([]any)) != 1 || row["exit_code"] != 0.0 {
		t.Fatalf("the run as listed: %v", row)
	}
}

// The gate is joined to drift: in a run made to drift, npm publish is
// refused for the drift; in a grounded run the same command is refused
// only for being outward and irreversible. Both reasons reach the model,
// and they differ.
func TestClaudeDriftGatesPublish(t *testing.T) {
	drifting := newSupervised(t,
		check("toolu_g", "write a JSON parser in Python", 6),
		check("toolu_d", "redesign the company logo in purple", 5),
		agenttest.Bash("toolu_pub", "npm publish"),
		agenttest.Say("Stopped."))
	drifting.runClaude(t, "drifter", nil, "Bash", allMCP)
	if v := drifting.checkResult(t, "toolu_d"); v["reason"] != "goal-drift" || v["drifting"] != true {
		t.Fatalf("the second check was meant to drift: %v", v)
	}
	driftReason := drifting.toolResult(t, "toolu_pub")

	grounded := newSupervised(t,
		check("toolu_g", "publish the parser package", 2),
		agenttest.Bash("toolu_pub", "npm publish"),
		agenttest.Say("Stopped."))
	grounded.runClaude(t, "steady", nil, "Bash", allMCP)
	plainReason := grounded.toolResult(t, "toolu_pub")

	if !driftReason.IsError || !strings.Contains(driftReason.Text, "your run is drifting") || !strings.Contains(driftReason.Text, "goal-drift") {
		t.Errorf("drifting run: the model was shown %q; want the drift reason", driftReason.Text)
	}
	if !plainReason.IsError || !strings.Contains(plainReason.Text, "nobody authorized it") || strings.Contains(plainReason.Text, "drifting") {
		t.Errorf("grounded run: the model was shown %q; want only the outward/irreversible reason", plainReason.Text)
	}
	if driftReason.Text == plainReason.Text {
		t.Error("the two refusals read the same")
	}
}

// A successful Bash call is observed on the run: the check after it is
// anchored (1.0), where the first check, with nothing observed, was not.
func TestClaudeObservedEventAnchors(t *testing.T) {
	s := newSupervised(t,
		check("toolu_c1", "ship the parser", 5),
		agenttest.Bash("toolu_ls", "echo parser-built"),
		check("toolu_c2", "ship the parser", 4),
		agenttest.Say("Done."))
	s.runClaude(t, "worker", nil, "Bash", allMCP)
	if tr := s.toolResult(t, "toolu_ls"); tr.IsError || !strings.Contains(tr.Text, "parser-built") {
		t.Fatalf("the Bash call did not run: %+v", tr)
	}
	first, second := s.checkResult(t, "toolu_c1"), s.checkResult(t, "toolu_c2")
	if first["anchored"] != 0.5 || second["anchored"] != 1.0 {
		t.Fatalf("anchored: first %v, second %v; want 0.5 then 1.0", first["anchored"], second["anchored"])
	}
}

// A Stop while the run drifts is blocked once with the agent's own advice;
// the Stop after it (stop_hook_active) goes through.
func TestClaudeStopBlockedOnceWhileDrifting(t *testing.T) {
	s := newSupervised(t,
		check("toolu_g", "write a JSON parser in Python", 6),
		check("toolu_d", "redesign the company logo in purple", 5),
		agenttest.Say("All done."),
		agenttest.Say("Really done."))
	r := s.runClaude(t, "stopper", nil, allMCP)
	if s.Model.Played() != 4 {
		t.Fatalf("the model played %d turns; want 4 (the first stop blocked, the second not)", s.Model.Played())
	}
	shown := strings.Join(s.Model.UserTexts(), "\n")
	if !strings.Contains(shown, "you are stopping while your run is drifting (goal-drift") ||
		!strings.Contains(shown, "Your goal no longer matches the one you started with") {
		t.Fatalf("the block's reason did not reach the model; it was shown:\n%s", shown)
	}
	if r.JSON["result"] != "Really done." {
		t.Fatalf("the run ended with %v", r.JSON["result"])
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["drifting"] != true {
		t.Fatalf("runs: %v", rows)
	}
}

// laserbrain run with --goal: the run is grounded before the agent starts,
// the agent's check is measured against that ground, and the whole-run
// judgment is printed when claude exits.
func TestClaudeLaserbrainRun(t *testing.T) {
	s := newSupervised(t,
		check("toolu_c1", "ship the parser", 3),
		agenttest.Say("Parser shipped."))
	r := s.runClaude(t, "a1", []string{"--goal", "ship the parser"}, allMCP)
	v := s.checkResult(t, "toolu_c1")
	if v["reason"] != "advancing" || v["step"] != 2.0 {
		t.Fatalf("the agent's check was not measured against the declared ground: %v", v)
	}
	if r.JSON["result"] != "Parser shipped." || r.ExitCode != 0 {
		t.Fatalf("claude's output was not passed through: exit %d, %v", r.ExitCode, r.JSON)
	}
	if !strings.Contains(r.Stderr, "(agent a1): exit 0, 2 checks, last verdict advancing") || !strings.Contains(r.Stderr, "judgment: ") {
		t.Fatalf("no judgment printed:\n%s", r.Stderr)
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["steps"] != 2.0 || rows[0]["ended"] == nil {
		t.Fatalf("runs: %v", rows)
	}
}

// A person's authorization lets one refused action through, once: the
// scripted rm -rf runs, the same command again is refused.
func TestClaudeAuthorizedOnce(t *testing.T) {
	s := newSupervised(t,
		check("toolu_g", "clean the build output", 2),
		agenttest.Bash("toolu_rm1", "rm -rf build"),
		agenttest.Bash("toolu_rm2", "rm -rf build"),
		agenttest.Say("Cleaned."))
	if err := os.MkdirAll(filepath.Join(s.Dir, "build", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if a := s.Run(t, s.lb, "authorize", "--reason", "stale output", "--", "rm", "-rf", "build"); a.ExitCode != 0 {
		t.Fatalf("authorize: %s", a.Stderr)
	}
	s.runClaude(t, "cleaner", nil, "Bash", allMCP)
	if tr := s.toolResult(t, "toolu_rm1"); tr.IsError {
		t.Fatalf("the authorized rm -rf was refused: %q", tr.Text)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "build")); err == nil {
		t.Fatal("build/ still exists: the authorized command did not run")
	}
	if tr := s.toolResult(t, "toolu_rm2"); !tr.IsError || !strings.Contains(tr.Text, "nobody authorized it") {
		t.Fatalf("the second rm -rf was not refused: %+v", tr)
	}
}

// laserbrain install claude merges into an existing project settings file
// (byte-idempotent: a second install and --dry-run change nothing), and a
// plain `claude -p` — no --settings, no --mcp-config — then runs our hooks
// and reaches our MCP server from the installed files.
func TestClaudeInstalledProject(t *testing.T) {
	s := newSupervised(t,
		check("toolu_c1", "ship the parser", 4),
		agenttest.Bash("toolu_push", "git push --force origin main; touch ran-marker"),
		agenttest.Say("Done."))
	settings := filepath.Join(s.Dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	userSettings := "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(ls *)\"\n    ]\n  },\n  \"env\": {\n    \"MY_VAR\": \"kept\"\n  }\n}\n"
	if err := os.WriteFile(settings, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	s.installProject(t)
	installed, _ := os.ReadFile(settings)
	// The user's keys in their places; our deny rules join their
	// permissions (after the user's allow), our hooks come last.
	if !strings.HasPrefix(string(installed), "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(ls *)\"\n    ],\n    \"deny\": [\n      \"Edit(/") ||
		!strings.Contains(string(installed), "\n    ]\n  },\n  \"env\": {\n    \"MY_VAR\": \"kept\"\n  },\n  \"hooks\": {") {
		t.Fatalf("the user's settings were not kept as they were:\n%s", installed)
	}
	if r := s.Run(t, s.lb, "install", "claude", "--scope", "project"); r.ExitCode != 0 || strings.Contains(r.Stdout, "updated") {
		t.Fatalf("a second install changed something: %s %s", r.Stdout, r.Stderr)
	}
	if r := s.Run(t, s.lb, "install", "claude", "--dry-run"); r.Stdout != "" || !strings.Contains(r.Stderr, "nothing to change") {
		t.Fatalf("--dry-run after install shows a diff:\n%s", r.Stdout)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(installed) {
		t.Fatal("the settings file changed")
	}

	r := s.Run(t, s.Claude, agenttest.ClaudeArgs("work on the task", "Bash", allMCP)...)
	if r.JSON == nil {
		t.Fatalf("claude: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if v := s.checkResult(t, "toolu_c1"); v["reason"] != "grounded" {
		t.Fatalf("check_state through the installed .mcp.json: %v", v)
	}
	if tr := s.toolResult(t, "toolu_push"); !tr.IsError || !strings.Contains(tr.Text, "laserbrain operator gate") {
		t.Fatalf("the installed hook did not deny: %+v", tr)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "ran-marker")); err == nil {
		t.Fatal("ran-marker exists")
	}
	// The session opened its own run (keyed by its session id).
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["agent"] != "claude" || rows[0]["steps"] != 1.0 || rows[0]["run"] != r.JSON["session_id"] {
		t.Fatalf("runs: %v", rows)
	}
}
