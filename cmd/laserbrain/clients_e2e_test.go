package main

// Every client that runs here is supervised, proven with its real CLI: for
// each of the seven, `laserbrain install CLIENT` (the built binary) into a
// fresh HOME and project, then one headless session of the client against
// the scripted model of its API. No --settings, no laserbrain run: only
// what install wrote makes the client supervised.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// installedAgent is one real client in a fresh HOME and project with
// `laserbrain install CLIENT` done there, and the laserbrain state of that
// HOME.
type installedAgent struct {
	*agenttest.Session
	lb     string
	lbHome string
}

func newInstalledAgent(t *testing.T, c *agenttest.Client, turns ...agenttest.Turn) *installedAgent {
	t.Helper()
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, c, turns...)
	a := &installedAgent{Session: s, lb: lb, lbHome: filepath.Join(s.Home, "laserbrain")}
	s.Env = append(s.Env, "LASERBRAIN_HOME="+a.lbHome)
	s.Install(t, lb)
	return a
}

// joinInstalled adds client c to a's HOME and project, installed there too.
func (a *installedAgent) joinInstalled(t *testing.T, c *agenttest.Client, turns ...agenttest.Turn) *installedAgent {
	t.Helper()
	j := a.Join(t, c, turns...)
	j.Install(t, a.lb)
	return &installedAgent{Session: j, lb: a.lb, lbHome: a.lbHome}
}

// runs is `laserbrain runs --json`.
func (a *installedAgent) runs(t *testing.T) []map[string]any {
	t.Helper()
	r := a.Run(t, a.lb, "runs", "--json")
	var rows []map[string]any
	if r.ExitCode != 0 || json.Unmarshal([]byte(r.Stdout), &rows) != nil {
		t.Fatalf("laserbrain runs --json: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	return rows
}

// events are what the hooks recorded on run id, read from the fleet store
// the hooks write (LASERBRAIN_HOME/fleet).
func (a *installedAgent) events(t *testing.T, id string) []fleet.RunEvent {
	t.Helper()
	evs, err := fleet.OpenLocalReader(filepath.Join(a.lbHome, "fleet")).Events(context.Background(), id)
	if err != nil {
		t.Fatalf("the events of run %s: %v", id, err)
	}
	return evs
}

// hookErrors is the hooks' error log (empty when they logged nothing).
func (a *installedAgent) hookErrors() string { return hookErrorsIn(a.lbHome) }

// recordedOneSession fails t unless our hooks recorded one run holding a
// session, a prompt, at least minTools tool calls and a stop, and logged
// no error.
func (a *installedAgent) recordedOneSession(t *testing.T, minTools int) {
	t.Helper()
	rows := a.runs(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v (hook errors: %s)", rows, a.hookErrors())
	}
	kinds := map[string]int{}
	for _, e := range a.events(t, rows[0]["run"].(string)) {
		kinds[string(e.Kind)]++
	}
	if kinds["session"] == 0 || kinds["prompt"] == 0 || kinds["tool"] < minTools || kinds["stop"] == 0 {
		t.Errorf("the hooks did not record the session: %v (hook errors: %s)", kinds, a.hookErrors())
	}
	if e := a.hookErrors(); e != "" {
		t.Errorf("hook errors: %s", e)
	}
}

// holdHalt writes the halt a person put on agent into the laserbrain home
// lbHome, and returns its path and what it holds, for a test to find it
// unchanged after an agent tried to write it.
func holdHalt(t *testing.T, lbHome, agent string) (path, held string) {
	t.Helper()
	path = filepath.Join(lbHome, "halts", agent+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	held = `{"agent":"` + agent + `","reason":"held by a person"}` + "\n"
	if err := os.WriteFile(path, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, held
}

// hookErrorsIn is the error log of the hooks writing to the laserbrain
// home lbHome.
func hookErrorsIn(lbHome string) string {
	b, _ := os.ReadFile(filepath.Join(lbHome, "fleet", "hook-errors.log"))
	return string(b)
}

// verdictRun reads the run id out of a check_state result as the model was
// shown it: the verdict's JSON as text (Claude Code, Qwen Code, opencode,
// Copilot CLI), wrapped in <untrusted_context> (Gemini CLI), after Codex's
// "Wall time" preamble, or inside the raw MCP result, escaped (Cline).
var verdictRun = regexp.MustCompile(`\\?"run\\?"\s*:\s*\\?"([A-Za-z0-9_.:-]+)\\?"`)

// TestAgentInstalledSupervised: in one session of each client, after a
// check_state through our MCP server (under the client's own name for it),
// a scripted `git push --force origin main; touch ran-marker` is denied —
// the marker never appears and the very next request the model gets
// carries our reason, in that API's shape — and the session goes on: a
// harmless command runs (its file is there) and is recorded as an observed
// event on the agent's run, which `laserbrain runs --json` lists as that
// client's, holding the check. The check comes first, as an agent checking
// its state before it acts would: coverage has nothing to refuse.
func TestAgentInstalledSupervised(t *testing.T) {
	for _, c := range agenttest.Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			a := newInstalledAgent(t, c,
				c.MCP("call_check", "laserbrain", "check_state", map[string]any{"goal": "ship the parser", "progress": "advancing", "distance": 4}),
				c.Shell("call_push", "git push --force origin main; touch ran-marker"),
				c.Shell("call_ok", "echo harmless > harmless.txt && echo made-harmless"),
				agenttest.Say("Scripted answer 42."))
			r := a.Prompt(t, "work on the task")
			report := func() string {
				return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s\nhook errors: %s", r.ExitCode, clipOut(r.Stdout), clipOut(r.Stderr), a.hookErrors())
			}
			if r.ExitCode != 0 || a.Model.Played() != 4 {
				t.Fatalf("%s played %d of 4 turns\n%s", c.Name, a.Model.Played(), report())
			}

			// The force push: denied, nothing after it ran, the reason is
			// what the model reads next.
			if _, err := os.Stat(filepath.Join(a.Dir, "ran-marker")); err == nil {
				t.Errorf("ran-marker exists: the denied command ran")
			}
			if tr := a.Model.ResultAfter(t, "call_push"); !strings.Contains(tr.Text, "laserbrain operator gate") ||
				!strings.Contains(tr.Text, "git push --force") || !strings.Contains(tr.Text, "nobody authorized it") {
				t.Errorf("the request after the force push carries %+v; want our reason", tr)
			}

			// The harmless command: ran after the denial.
			if b, err := os.ReadFile(filepath.Join(a.Dir, "harmless.txt")); err != nil || string(b) != "harmless\n" {
				t.Errorf("harmless.txt: %q %v", b, err)
			}
			if tr := a.Model.ResultAfter(t, "call_ok"); !strings.Contains(tr.Text, "made-harmless") {
				t.Errorf("the request after the harmless command carries %+v", tr)
			}

			// The check: on the run runs --json shows for this client.
			check := a.Model.ResultAfter(t, "call_check")
			m := verdictRun.FindStringSubmatch(check.Text)
			if m == nil || !strings.Contains(check.Text, "grounded") || !strings.Contains(check.Text, "ship the parser") {
				t.Fatalf("check_state answered %+v; want a grounding verdict naming its run\n%s", check, report())
			}
			rows := a.runs(t)
			if len(rows) != 1 {
				t.Fatalf("runs --json lists %d runs, want the client's one: %v\n%s", len(rows), rows, report())
			}
			row := rows[0]
			cov, _ := row["coverage"].(map[string]any)
			if row["run"] != m[1] || row["agent"] != c.Name || row["steps"] != 1.0 || len(row["sessions"].([]any)) != 1 || cov["tool_calls"] != 1.0 {
				t.Errorf("the check landed on run %s; runs --json shows %v", m[1], row)
			}

			// Observed: the harmless command, once; never the refused one
			// (nor, for Cline, the refusal that ran in its place).
			var tools []string
			for _, e := range a.events(t, m[1]) {
				if e.Kind == fleet.KindTool {
					tools = append(tools, e.Text)
				}
			}
			if len(tools) != 1 || !strings.Contains(tools[0], "echo harmless > harmless.txt") {
				t.Errorf("observed tool calls on the run: %q; want the harmless command alone", tools)
			}
			if log := a.hookErrors(); log != "" {
				t.Errorf("the hooks logged errors:\n%s", log)
			}
			// Nothing the model was sent says a working laserbrain is
			// missing (the guard's words for when it is).
			for i, req := range a.Model.Requests() {
				if strings.Contains(string(req.Body), "missing or not executable") {
					t.Errorf("request %d to the model says laserbrain is missing: %s", i, clipOut(string(req.Body)))
				}
			}
		})
	}
}

// TestAgentAskAnsweredHeadless: a command the gate wants a person to
// confirm (eval "$CMD": what runs is known only at run time) is refused in
// every headless client — the marker chained after it is absent — with
// the reason in the next request, and the session goes on to its end
// within the deadline: no client is left waiting for a confirmation nobody
// can give (Gemini CLI's "ask" did exactly that).
func TestAgentAskAnsweredHeadless(t *testing.T) {
	for _, c := range agenttest.Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			a := newInstalledAgent(t, c,
				c.MCP("call_check", "laserbrain", "check_state", map[string]any{"goal": "tidy the build", "progress": "advancing", "distance": 3}),
				c.Shell("call_ask", `eval "$LASERBRAIN_E2E_CMD"; touch asked-marker`),
				agenttest.Say("Scripted answer 43."))
			a.Timeout = 3 * time.Minute
			r := a.Prompt(t, "work on the task")
			if r.ExitCode != 0 || a.Model.Played() != 3 {
				t.Fatalf("%s played %d of 3 turns, exit %d\nstdout: %s\nstderr: %s", c.Name, a.Model.Played(), r.ExitCode, clipOut(r.Stdout), clipOut(r.Stderr))
			}
			if _, err := os.Stat(filepath.Join(a.Dir, "asked-marker")); err == nil {
				t.Errorf("asked-marker exists: the command ran unconfirmed")
			}
			if tr := a.Model.ResultAfter(t, "call_ask"); !strings.Contains(tr.Text, "laserbrain operator gate") || !strings.Contains(tr.Text, "known only at run time") {
				t.Errorf("the request after the call carries %+v; want our reason", tr)
			}
		})
	}
}

// TestAgentsOfTwoClientsOneFleet: Codex and Gemini CLI, each installed, on
// one repository at once, check the same job in other words, then each
// holds in a shell command until the test lets it go. While both are
// running, `laserbrain supervise --once --json` sees one fleet of two
// runs, one per client, and reports their collision.
func TestAgentsOfTwoClientsOneFleet(t *testing.T) {
	hold := func(name string) string {
		// A bounded wait: the test writes go-NAME once supervise has run.
		// (No $(…): Gemini CLI refuses command substitution.)
		return "touch ready-" + name + "; timeout 180 sh -c 'until test -e go-" + name + "; do sleep 0.1; done'; echo released-" + name
	}
	cx, gm := agenttest.Codex, agenttest.GeminiCLI
	codex := newInstalledAgent(t, cx,
		cx.MCP("call_check", "laserbrain", "check_state", map[string]any{"goal": "refactor the parser module", "progress": "advancing", "distance": 5}),
		// Codex hands a command still running back to the model after
		// yield_time_ms (10 s unless asked, 30 s at most): the longest,
		// and Codex starts second, so its hold spans supervise's round.
		agenttest.CallID("call_hold", cx.ShellTool, map[string]any{"cmd": hold("codex"), "yield_time_ms": 30000}),
		agenttest.Say("Codex done."))
	gemini := codex.joinInstalled(t, gm,
		gm.MCP("call_check", "laserbrain", "check_state", map[string]any{"goal": "the parser module refactor", "progress": "advancing", "distance": 5}),
		gm.Shell("call_hold", hold("gemini")),
		agenttest.Say("Gemini done."))

	// Gemini CLI, which holds as long as it is asked, is in its hold
	// before Codex starts.
	ready := true
	held := func(name string) {
		if ready && !waitForFile(filepath.Join(codex.Dir, "ready-"+name), 3*time.Minute) {
			t.Errorf("%s never started its held command (hook errors: %s)", name, codex.hookErrors())
			ready = false
		}
	}
	runG := gemini.Start(t, gemini.Bin, gemini.Args("work on the parser")...)
	held("gemini")
	runC := codex.Start(t, codex.Bin, codex.Args("work on the parser")...)
	held("codex")
	var sv agenttest.Result
	if ready {
		sv = codex.Run(t, codex.lb, "supervise", "--once", "--json", "--repo", codex.Dir)
	}
	for _, name := range []string{"codex", "gemini"} {
		if err := os.WriteFile(filepath.Join(codex.Dir, "go-"+name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc, rg := runC.Wait(t), runG.Wait(t)
	if !ready || rc.ExitCode != 0 || rg.ExitCode != 0 {
		t.Logf("ready: %v", ready)
		t.Fatalf("codex exit %d, gemini exit %d\n%s\n%s\nhook errors: %s", rc.ExitCode, rg.ExitCode, clipOut(rc.Stderr), clipOut(rg.Stderr), codex.hookErrors())
	}
	if sv.ExitCode != 0 {
		t.Fatalf("supervise: exit %d\n%s\n%s", sv.ExitCode, sv.Stdout, sv.Stderr)
	}
	var round struct {
		Agents []struct {
			Agent, Status, Ground string
		} `json:"agents"`
		Collisions []struct {
			Agents  [2]string `json:"agents"`
			Grounds [2]string `json:"grounds"`
		} `json:"collisions"`
	}
	if err := json.Unmarshal([]byte(firstLine(sv.Stdout)), &round); err != nil {
		t.Fatalf("supervise --json: %v\n%s", err, sv.Stdout)
	}
	active := map[string]bool{}
	for _, ag := range round.Agents {
		if ag.Status == "active" {
			active[strings.SplitN(ag.Agent, ":", 2)[0]] = true
		}
	}
	if len(round.Agents) != 2 || !active["codex"] || !active["gemini"] {
		t.Fatalf("supervise saw %+v; want the codex and the gemini run, both active", round.Agents)
	}
	if len(round.Collisions) != 1 {
		t.Fatalf("supervise reported %d collisions, want codex's with gemini's: %s", len(round.Collisions), sv.Stdout)
	}
	pair := round.Collisions[0].Agents
	clients := []string{strings.SplitN(pair[0], ":", 2)[0], strings.SplitN(pair[1], ":", 2)[0]}
	if !(clients[0] == "codex" && clients[1] == "gemini") && !(clients[0] == "gemini" && clients[1] == "codex") {
		t.Fatalf("the collision is between %v; want codex and gemini", pair)
	}
	for _, id := range []string{"call_hold"} {
		if tr := codex.Model.ResultAfter(t, id); !strings.Contains(tr.Text, "released-codex") {
			t.Errorf("codex's hold: %+v", tr)
		}
		if tr := gemini.Model.ResultAfter(t, id); !strings.Contains(tr.Text, "released-gemini") {
			t.Errorf("gemini's hold: %+v", tr)
		}
	}
}

// waitForFile reports whether path appeared within d (clients start
// slowly on a loaded machine).
func waitForFile(path string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func clipOut(s string) string {
	if len(s) > 3000 {
		return s[:1000] + "\n…\n" + s[len(s)-2000:]
	}
	return s
}

// TestAgentRunCheckLands: under laserbrain run — behind the kernel's
// boundary, where the store's records are read-only to the agent's whole
// tree — each client's check_state reaches our MCP server, and the check
// is recorded on the run laserbrain run opened for it: the server hands
// the check to the supervisor's broker rather than writing itself. The
// check is answered with a grounding verdict naming that run (not an
// error), and `laserbrain runs --json` lists the one run with the step,
// measured: the agent checked, then acted.
func TestAgentRunCheckLands(t *testing.T) {
	lb, _ := confinedBinaries(t)
	for _, c := range agenttest.Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s := agenttest.NewAgent(t, c,
				c.MCP("call_check", "laserbrain", "check_state", map[string]any{"goal": "ship the parser", "progress": "advancing", "distance": 4}),
				c.Shell("call_act", "echo acted > acted.txt && echo made-acted"),
				agenttest.Say("Scripted answer 44."))
			lbHome := filepath.Join(s.Home, "laserbrain")
			s.Env = append(s.Env, "LASERBRAIN_HOME="+lbHome)
			switch c {
			case agenttest.Copilot, agenttest.GeminiCLI, agenttest.Cline, agenttest.QwenCode:
				s.Install(t, lb) // as TestVoiceEveryClient says why
			}
			r := s.PromptVia(t, lb, []string{"run", "--agent", "lander", "--"}, "work on the task")
			report := func() string {
				return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s\nhook errors: %s", r.ExitCode, clipOut(r.Stdout), clipOut(r.Stderr), hookErrorsIn(lbHome))
			}
			if r.ExitCode != 0 || s.Model.Played() != 3 {
				t.Fatalf("%s played %d of 3 turns\n%s", c.Name, s.Model.Played(), report())
			}
			if strings.Contains(r.Stderr, "not confined") {
				t.Fatalf("laserbrain run did not confine %s: %s", c.Name, r.Stderr)
			}
			check := s.Model.ResultAfter(t, "call_check")
			m := verdictRun.FindStringSubmatch(check.Text)
			if m == nil || !strings.Contains(check.Text, "grounded") || strings.Contains(check.Text, "read-only") {
				t.Fatalf("check_state answered %q; want a grounding verdict naming its run\n%s", check.Text, report())
			}
			if tr := s.Model.ResultAfter(t, "call_act"); !strings.Contains(tr.Text, "made-acted") {
				t.Errorf("the command after the check: %+v", tr)
			}
			lr := s.Run(t, lb, "runs", "--json")
			var rows []map[string]any
			if lr.ExitCode != 0 || json.Unmarshal([]byte(lr.Stdout), &rows) != nil {
				t.Fatalf("laserbrain runs --json: exit %d\n%s\n%s", lr.ExitCode, lr.Stdout, lr.Stderr)
			}
			if len(rows) != 1 || rows[0]["run"] != m[1] || rows[0]["steps"] != 1.0 {
				t.Fatalf("the check answered on run %s; runs --json lists %v\n%s", m[1], rows, report())
			}
			// Checked, then acted: measured, as the agent was told.
			if cov, _ := rows[0]["coverage"].(map[string]any); cov["unmeasured"] != false || cov["tool_calls"] != 1.0 || rows[0]["judgment"] == "unmeasured" {
				t.Errorf("the run after a check and then one command: coverage %v, judgment %v", rows[0]["coverage"], rows[0]["judgment"])
			}
			checkpointedShellOnly(t, s, lb, m[1])
		})
	}
}

// checkpointedShellOnly: the client's hooks took an undo checkpoint
// before its shell call, which may write, and the call's change (the file
// it made) is on that checkpoint; its call of our own MCP tool took none.
func checkpointedShellOnly(t *testing.T, s *agenttest.Session, lb, run string) {
	t.Helper()
	r := s.Run(t, lb, "undo", "--run", run, "--list", "--json")
	var rows []struct {
		Kind, Call, Tool, What string
		Changed                struct{ Added []string }
	}
	if r.ExitCode != 0 || json.Unmarshal([]byte(r.Stdout), &rows) != nil {
		t.Fatalf("laserbrain undo --list --json: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	shell := 0
	for _, row := range rows {
		if row.Kind != "call" {
			continue
		}
		if strings.Contains(row.Tool, "check_state") || strings.Contains(row.What, "ship the parser") {
			t.Errorf("a checkpoint before our own MCP tool (a read of the run): %+v", row)
		}
		if strings.Contains(row.What, "echo acted > acted.txt") {
			shell++
			if !slices.Contains(row.Changed.Added, "acted.txt") {
				t.Errorf("the shell call's checkpoint does not say it added acted.txt: %+v", row)
			}
		}
	}
	if shell != 1 {
		t.Errorf("%d checkpoints before the shell call, want 1:\n%s", shell, r.Stdout)
	}
}

// TestClaudeDenialSaysOnlyTheReason: in the real Claude Code, installed by
// laserbrain install claude, a denied call's tool_result is the gate's
// reason alone — not the hook's command line (which Claude Code puts in
// front of an exit-2 hook's words), and nowhere the guard's words for a
// laserbrain that is gone — and when the Stop hook holds the agent for a
// last check, the model reads why, and nothing the model is sent says
// laserbrain is missing.
func TestClaudeDenialSaysOnlyTheReason(t *testing.T) {
	c := agenttest.ClaudeCode
	a := newInstalledAgent(t, c,
		c.Shell("call_push", "git push --force origin main; touch ran-marker"),
		c.Shell("call_2", "ls"), c.Shell("call_3", "ls"), c.Shell("call_4", "ls"),
		agenttest.Say("Done."),
		agenttest.Say("Done, checked."))
	r := a.Prompt(t, "work on the task")
	if r.ExitCode != 0 || a.Model.Played() != 6 {
		t.Fatalf("claude played %d of 6 turns, exit %d\n%s\n%s", a.Model.Played(), r.ExitCode, clipOut(r.Stdout), clipOut(r.Stderr))
	}
	if _, err := os.Stat(filepath.Join(a.Dir, "ran-marker")); err == nil {
		t.Fatal("ran-marker exists: the denied command ran")
	}
	tr := a.Model.ResultAfter(t, "call_push")
	const reason = "laserbrain operator gate: this command is irreversible or outward"
	if !tr.IsError || !strings.Contains(tr.Text, reason) || !strings.Contains(tr.Text, "nobody authorized it") {
		t.Errorf("the denial's tool_result: is_error=%v %q; want the gate's reason", tr.IsError, tr.Text)
	}
	if strings.Contains(tr.Text, "missing or not executable") || strings.Contains(tr.Text, a.lb) {
		t.Errorf("the denial's tool_result shows the hook's command or the guard's words: %q", tr.Text)
	}
	held := false
	for _, u := range a.Model.UserTexts() {
		if strings.Contains(u, "Stop hook feedback") && strings.Contains(u, "before you stop") {
			held = true
		}
	}
	if !held {
		t.Errorf("the Stop hook's reason never reached the model: %q", a.Model.UserTexts())
	}
	for i, req := range a.Model.Requests() {
		if strings.Contains(string(req.Body), "missing or not executable") {
			t.Errorf("request %d to the model says laserbrain is missing: %s", i, clipOut(string(req.Body)))
		}
	}
}
