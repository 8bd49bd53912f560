package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

// hookedAgent is an agent stand-in started by laserbrain run (the test
// binary with LASERBRAIN_TEST_HOOKED_AGENT set): it checks its state
// through the same library the MCP server uses, says it is ready, waits to
// be told to go, then asks the real hook — laserbrain hook pre-tool-use, a
// process of its own, the event JSON on its stdin, as Claude Code does —
// whether it may run a Bash command, and writes down the answer.
func hookedAgent(dir string) {
	ctx := context.Background()
	goal, checks := os.Getenv("HOOKED_GOAL"), os.Getenv("HOOKED_CHECKS")
	n, _ := strconv.Atoi(checks)
	sup := &agentrun.Supervisor{}
	for i := 0; i < n; i++ {
		if _, err := sup.Check(ctx, os.Getenv(agentrun.EnvRun), agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(5 - i)}}); err != nil {
			os.WriteFile(filepath.Join(dir, "error"), []byte(err.Error()), 0o644)
			os.Exit(1)
		}
	}
	sup.Close()
	os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
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
	os.WriteFile(filepath.Join(dir, "hook-exit"), []byte(strconv.Itoa(code)), 0o644)
	os.WriteFile(filepath.Join(dir, "hook-stderr"), stderr.Bytes(), 0o644)
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
	os.MkdirAll(filepath.Join(repo, "parser"), 0o755)
	os.WriteFile(filepath.Join(repo, "parser", "lexer.go"), []byte("package parser"), 0o644)
	env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(root, "home"), "LASERBRAIN_FLEET=hooked", "HOOKED_LASERBRAIN="+lb, "PONDER_OCA=off")
	type agentProc struct {
		name, dir string
		cmd       *exec.Cmd
		out       bytes.Buffer
	}
	start := func(name, goal string, checks int) *agentProc {
		a := &agentProc{name: name, dir: filepath.Join(root, name)}
		os.MkdirAll(a.dir, 0o755)
		a.cmd = exec.Command(lb, "run", "--agent", name, "--goal", goal, "--", self)
		a.cmd.Dir = repo
		a.cmd.Env = append(env, "LASERBRAIN_TEST_HOOKED_AGENT="+a.dir, "HOOKED_GOAL="+goal, "HOOKED_CHECKS="+strconv.Itoa(checks))
		a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.out
		if err := a.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
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
		os.WriteFile(filepath.Join(a.dir, "go"), nil, 0o644)
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
