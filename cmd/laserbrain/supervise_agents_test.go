package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
)

// hookedAgent is an agent stand-in started by laserbrain run (the test
// binary with LASERBRAIN_TEST_HOOKED_AGENT set): it checks its state
// through the same library the MCP server uses, says it is ready, waits to
// be told to go, then asks the real hook — laserbrain hook pre-tool-use, a
// process of its own, the event JSON on its stdin, as Claude Code does —
// whether it may run a Bash command, and writes down the answer.
func hookedAgent(dir string) {
	goal, checks := os.Getenv("HOOKED_GOAL"), os.Getenv("HOOKED_CHECKS")
	n, _ := strconv.Atoi(checks)
	// Its checks go as an agent's do, through laserbrain check (which,
	// confined, hands them to the run's broker).
	for i := 0; i < n; i++ {
		c := exec.Command(os.Getenv("HOOKED_LASERBRAIN"), "check", "--run", os.Getenv(agentrun.EnvRun), "--goal", goal,
			"--progress", "advancing", "--distance", strconv.Itoa(5-i))
		if out, err := c.CombinedOutput(); err != nil {
			_ = os.WriteFile(filepath.Join(dir, "error"), append([]byte(err.Error()+"\n"), out...), 0o644)
			os.Exit(1)
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			os.Exit(3)
		}
		time.Sleep(20 * time.Millisecond)
	}
	event, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "", "cwd": dir, "tool_name": "Bash",
		"tool_input": map[string]any{"command": "go test ./parser/..."}, "tool_use_id": "toolu_" + filepath.Base(dir)})
	hook := exec.Command(os.Getenv("HOOKED_LASERBRAIN"), "hook", "pre-tool-use")
	hook.Stdin = bytes.NewReader(event)
	var stderr bytes.Buffer
	hook.Stderr = &stderr
	err := hook.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	_ = os.WriteFile(filepath.Join(dir, "hook-exit"), []byte(strconv.Itoa(code)), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "hook-stderr"), stderr.Bytes(), 0o644)
	os.Exit(0)
}

// TestHookedAgentHalted: two agents under laserbrain run, with the hooks'
// protocol, on the same job in different words; the one with fewer checks
// yields. laserbrain supervise halts it, and its next Bash call is denied by
// the hook with the halt's reason, while the other's passes; after a
// person's release its calls pass again. Every part is a real process.
func TestHookedAgentHalted(t *testing.T) {
	lb := laserbrainBinary(t)
	self, _ := os.Executable()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "parser"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "parser", "lexer.go"), []byte("package parser"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(root, "home"), "LASERBRAIN_FLEET=hooked", "HOOKED_LASERBRAIN="+lb, "PONDER_OCA=off")
	type agentProc struct {
		name, dir string
		cmd       *exec.Cmd
		out       bytes.Buffer
	}
	start := func(name, goal string, checks int) *agentProc {
		a := &agentProc{name: name, dir: filepath.Join(root, name)}
		if err := os.MkdirAll(a.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		a.cmd = exec.Command(lb, "run", "--agent", name, "--goal", goal, "--", self)
		a.cmd.Dir = repo
		a.cmd.Env = append(env, "LASERBRAIN_TEST_HOOKED_AGENT="+a.dir, "HOOKED_GOAL="+goal, "HOOKED_CHECKS="+strconv.Itoa(checks))
		a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.out
		if err := a.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.cmd.Process.Kill(); _ = a.cmd.Wait() })
		return a
	}
	alice := start("alice", "refactor the parser module", 3)
	bob := start("bob", "the parser module refactor", 0)
	for _, a := range []*agentProc{alice, bob} {
		waitFor(t, filepath.Join(a.dir, "ready"))
	}

	sv := exec.Command(lb, "supervise", "--json", "--repo", repo)
	sv.Env = env
	out, err := sv.Output()
	if err != nil {
		t.Fatalf("supervise: %v\n%s", err, out)
	}
	var round struct {
		Route []struct{ Keep, Yield string }   `json:"route"`
		Halts []struct{ Agent, Reason string } `json:"halts"`
	}
	if err := json.Unmarshal(out, &round); err != nil {
		t.Fatal(err)
	}
	if len(round.Halts) != 1 || !strings.HasPrefix(round.Halts[0].Agent, "bob:") || len(round.Route) != 1 || !strings.HasPrefix(round.Route[0].Keep, "alice:") {
		t.Fatalf("supervise did not halt bob: %s", out)
	}
	bobAgent := round.Halts[0].Agent

	for _, a := range []*agentProc{alice, bob} {
		if err := os.WriteFile(filepath.Join(a.dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := a.cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", a.name, err, a.out.String())
		}
	}
	read := func(a *agentProc, f string) string {
		b, _ := os.ReadFile(filepath.Join(a.dir, f))
		return string(b)
	}
	if read(alice, "hook-exit") != "0" {
		t.Fatalf("alice's Bash call: exit %s, %s", read(alice, "hook-exit"), read(alice, "hook-stderr"))
	}
	if read(bob, "hook-exit") != "2" || !strings.Contains(read(bob, "hook-stderr"), bobAgent+" is halted by supervisor: shares a ground with alice:") ||
		!strings.Contains(read(bob, "hook-stderr"), "laserbrain supervise release "+bobAgent) {
		t.Fatalf("bob's Bash call: exit %s, %s", read(bob, "hook-exit"), read(bob, "hook-stderr"))
	}

	// A person releases bob; its next call (a hook process in bob's run)
	// passes.
	rel := exec.Command(lb, "supervise", "release", bobAgent, "--repo", repo, "--reason", "bob takes the tests")
	rel.Env = env
	if out, err := rel.CombinedOutput(); err != nil || !strings.Contains(string(out), "released "+bobAgent) {
		t.Fatalf("release: %v\n%s", err, out)
	}
	runID := strings.TrimPrefix(bobAgent, "bob:")
	event, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": bob.dir, "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	hook := exec.Command(lb, "hook", "pre-tool-use")
	hook.Env = append(env, agentrun.EnvRun+"="+runID)
	hook.Stdin = bytes.NewReader(event)
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("bob after the release: %v\n%s", err, out)
	}
}

// TestConcurrentFleet: three ponder sessions driven pass by pass, two
// agents recording tool calls through the real hook, and a supervisor
// watching every 30 ms, all at once on one repository. When they are done,
// the supervisor has lost and double-counted nothing: each session is its
// grounding step plus one step per decided pass, each agent has every file
// it wrote in its footprint, and its journal verifies.
func TestConcurrentFleet(t *testing.T) {
	lb := laserbrainBinary(t)
	pd := ponderBinary(t)
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "units.txt"), []byte("a.go\nb.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(root, "home"), "LASERBRAIN_FLEET=concurrent", "PONDER_OCA=off",
		"PATH="+pd+string(os.PathListSeparator)+filepath.Dir(lb)+string(os.PathListSeparator)+os.Getenv("PATH"))
	const passes, writes = 6, 40

	sv := exec.Command(lb, "supervise", "--watch", "30ms", "--json", "--repo", repo)
	sv.Env = env
	var svErr bytes.Buffer
	sv.Stderr = &svErr
	svOut, err := sv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Process.Kill(); _ = sv.Wait() })
	rounds := watchRounds(svOut)

	session := `S=$(ponder start "$1" --json | sed -n 's/^  "slug": "\(.*\)",$/\1/p')
ponder units --slug "$S" --from units.txt >/dev/null
k=1
while [ $k -le ` + strconv.Itoa(passes) + ` ]; do
  if [ $k -gt 1 ]; then ponder predict --slug "$S" --churn 0.1 >/dev/null; fi
  ponder deliberate --slug "$S" --skeptic s --builder b --dreamer d --empath e >/dev/null
  if [ $k -eq 1 ]; then ponder grade --slug "$S" u0001 u0002 >/dev/null; fi
  ponder judge --slug "$S" >/dev/null
  ponder decide --slug "$S" continue >/dev/null
  k=$((k+1))
done`
	agent := `j=1
while [ $j -le ` + strconv.Itoa(writes) + ` ]; do
  printf '{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"%s-%d.go"},"tool_use_id":"%s-%d","tool_response":{}}' "$1" $j "$1" $j | laserbrain hook post-tool-use
  j=$((j+1))
done`
	var cmds []*exec.Cmd
	for _, subject := range []string{"lexer token boundaries", "storage cache eviction", "network retry backoff"} {
		c := exec.Command("sh", "-c", session, "sh", subject)
		c.Dir, c.Env = repo, env
		cmds = append(cmds, c)
	}
	for _, a := range []string{"writer", "scribe"} {
		c := exec.Command(lb, "run", "--agent", a, "--goal", "write the "+a+" documentation pages", "--", "sh", "-c", agent, "sh", a)
		c.Dir, c.Env = repo, env
		cmds = append(cmds, c)
	}
	outs := make([]bytes.Buffer, len(cmds))
	for i, c := range cmds {
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, outs[i].String())
		}
	}
	// Every pass and every write is in: the rounds catch up with them, and
	// the supervisor stops on an interrupt after one that has.
	complete := func(line string) []string {
		var r struct {
			Agents []struct {
				Agent, Kind  string
				Steps, Files int
			}
			Halts []any
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return []string{err.Error()}
		}
		var missing []string
		if len(r.Agents) != 5 || len(r.Halts) != 0 {
			missing = append(missing, fmt.Sprintf("%d agents, %d halts; want 5 agents, no halt", len(r.Agents), len(r.Halts)))
		}
		for _, a := range r.Agents {
			switch {
			case a.Kind == "ponder" && a.Steps != passes+1:
				missing = append(missing, fmt.Sprintf("%s: %d steps, want %d (grounding + one per decided pass)", a.Agent, a.Steps, passes+1))
			case a.Kind == "run" && (a.Files != writes || a.Steps != 1):
				missing = append(missing, fmt.Sprintf("%s: %d files, %d steps; want %d files, 1 step", a.Agent, a.Files, a.Steps, writes))
			}
		}
		return missing
	}
	rounds.await(t, time.Minute, complete)
	if err := sv.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	lines := rounds.close()
	if err := sv.Wait(); err != nil {
		t.Fatalf("supervise --watch: %v\n%s", err, svErr.String())
	}
	if len(lines) < 3 {
		t.Fatalf("%d rounds:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, m := range complete(lines[len(lines)-1]) {
		t.Errorf("the last round: %s", m)
	}
	v := exec.Command(lb, "supervise", "verify", "--repo", repo)
	v.Env = env
	if out, err := v.CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}

// roundLines are the lines supervise --watch --json prints, one a round,
// read as they come.
type roundLines struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{} // a line came, or the output ended
	ended chan struct{}
}

func watchRounds(out io.Reader) *roundLines {
	r := &roundLines{more: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(r.ended)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
			select {
			case r.more <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

// await waits for a round that want finds nothing missing in, and fails t
// with what the latest round still lacked when within passes first.
func (r *roundLines) await(t *testing.T, within time.Duration, want func(line string) (missing []string)) {
	t.Helper()
	deadline := time.After(within)
	seen := 0
	var missing []string
	for {
		r.mu.Lock()
		lines := r.lines[seen:]
		seen = len(r.lines)
		r.mu.Unlock()
		for _, l := range lines {
			if missing = want(l); len(missing) == 0 {
				return
			}
		}
		select {
		case <-r.more:
		case <-r.ended:
			t.Fatalf("supervise --watch stopped before a round saw everything; the last lacked: %s", strings.Join(missing, "; "))
		case <-deadline:
			t.Fatalf("no round saw everything within %s; the last lacked: %s", within, strings.Join(missing, "; "))
		}
	}
}

// close waits for the output to end and returns every line.
func (r *roundLines) close() []string {
	<-r.ended
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines
}
