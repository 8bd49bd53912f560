package client

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/internal/testenv"
)

// fakeBinaries puts a laserbrain and a laserbrain-gate in a directory whose
// path needs quoting; each prints its argv and answers as ours do: 0, or
// the status --ok-status asks for.
func fakeBinaries(t *testing.T) (self, gate string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "laser kit's bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, gate = filepath.Join(dir, "laserbrain"), filepath.Join(dir, GateName)
	for _, p := range []string{self, gate} {
		if err := os.WriteFile(p, []byte(fakeProgram(0)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return self, gate
}

// fakeProgram prints its argv and exits status, or the status --ok-status
// asks for where status is 0 (what laserbrain's hook programs do).
func fakeProgram(status int) string {
	return fmt.Sprintf("#!/bin/sh\necho \"ran $(basename \"$0\") $*\"\nstatus=%d\nfor a; do [ \"$prev\" = %s ] && [ $status = 0 ] && status=$a; prev=$a; done\nexit $status\n", status, OKStatusFlag)
}

func runShell(t *testing.T, shell, command string) (stdout, stderr string, exit int) {
	t.Helper()
	cmd := exec.Command(shell, "-c", command)
	cmd.Stdin = strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
	return proctest.Run(t, cmd)
}

// The installed command runs our program while it is there, and when it
// has been removed or lost its execute bit still answers: a denial in the
// form the client obeys, never the shell's exit 127 (which Claude Code,
// Codex and Copilot CLI take for a non-blocking error), under sh and bash
// (Copilot CLI runs hooks with bash). Where the client shows the command
// (Claude Code, and the clients that read its exit 2), the command says
// nothing of its own: a missing program is denied with the shell's words,
// which name it — and no sentence in the command could be read as the
// reason of a working hook's answer.
func TestHookCommandFailsClosedWhenTheBinaryMoves(t *testing.T) {
	shells := []string{"/bin/sh", testenv.LookPath(t, "bash")}
	for _, n := range Names {
		for _, gone := range []string{"removed", "not executable"} {
			self, gate := fakeBinaries(t)
			pre := HookCommand(self, n, PreToolUse)
			post := HookCommand(self, n, PostToolUse)
			structured := n == Copilot || n == Cline || n == OpenCode
			if !structured && (strings.Contains(pre, "missing") || strings.Contains(post, "missing") || strings.Contains(pre, "doctor")) {
				t.Errorf("%s: the command carries a sentence of its own: %q / %q", n, pre, post)
			}
			for _, sh := range shells {
				out, _, code := runShell(t, sh, pre)
				wantArgs := ""
				if n != Claude {
					wantArgs = "--client " + string(n)
				} else {
					wantArgs = "--format json"
				}
				if code != 0 || strings.TrimSpace(out) != "ran laserbrain-gate "+wantArgs+" --ok-status 86" {
					t.Fatalf("%s %s: the gate did not run: exit %d %q", n, sh, code, out)
				}
				out, _, _ = runShell(t, sh, post)
				if n == Claude {
					wantArgs = ""
				}
				if strings.TrimSpace(out) != strings.TrimSpace("ran laserbrain-gate --event post-tool-use "+wantArgs) {
					t.Fatalf("%s %s: post-tool-use did not run the gate: %q", n, sh, out)
				}
			}
			for _, p := range []string{self, gate} {
				var err error
				if gone == "removed" {
					err = os.Remove(p)
				} else {
					err = os.Chmod(p, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			shellSays := regexp.MustCompile(`not found|No such file or directory`) // dash, bash
			if gone == "not executable" {
				shellSays = regexp.MustCompile(`Permission denied`)
			}
			for _, sh := range shells {
				out, errOut, code := runShell(t, sh, pre)
				denied := false
				var v map[string]any
				switch n {
				case Copilot:
					denied = code == 2 && json.Unmarshal([]byte(out), &v) == nil && v["permissionDecision"] == "deny" &&
						strings.Contains(v["permissionDecisionReason"].(string), "laserbrain doctor")
				case Cline:
					denied = code == 0 && json.Unmarshal([]byte(out), &v) == nil && v["cancel"] == true &&
						strings.Contains(v["errorMessage"].(string), "laserbrain doctor")
				case OpenCode:
					denied = code == 0 && json.Unmarshal([]byte(out), &v) == nil && v["decision"] == "deny"
				default:
					denied = code == 2 && out == "" && shellSays.MatchString(errOut) && strings.Contains(errOut, gate)
				}
				if !denied {
					t.Errorf("%s, gate %s, %s: exit %d stdout %q stderr %q; want the client's denial naming the program", n, gone, sh, code, out, errOut)
				}
				out, errOut, code = runShell(t, sh, post)
				if code != 0 || out != "" || !strings.Contains(errOut, self) {
					t.Errorf("%s, laserbrain %s, %s: post-tool-use exit %d stdout %q stderr %q; want exit 0 and a note naming it", n, gone, sh, code, out, errOut)
				}
			}
		}
	}
}

// A working hook's own status passes through the guard: an allow (the
// status --ok-status asked for) and a denial (2) as the program answered
// them; any other status of the pre-tool-use hook (a crash, or 0 from a
// program that is not the gate, which never heard of --ok-status) is a
// denial, never a non-blocking error or an allow.
func TestHookCommandPassesTheAnswer(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "laserbrain")
	gate := filepath.Join(dir, GateName)
	for _, c := range []struct{ status, pre, post int }{{AnsweredStatus, 0, 0}, {0, 2, 0}, {2, 2, 0}, {1, 2, 0}, {3, 2, 0}} {
		script := fmt.Sprintf("#!/bin/sh\necho answer\necho why >&2\nexit %d\n", c.status)
		for _, p := range []string{self, gate} {
			if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range []Name{Claude, Codex, Gemini, Qwen} {
			out, errOut, code := runShell(t, "/bin/sh", HookCommand(self, n, PreToolUse))
			if code != c.pre || out != "answer\n" || errOut != "why\n" {
				t.Errorf("%s pre-tool-use, the program exiting %d: exit %d %q %q; want %d and its own output", n, c.status, code, out, errOut, c.pre)
			}
			if _, _, code := runShell(t, "/bin/sh", HookCommand(self, n, Stop)); code != c.post {
				t.Errorf("%s stop, the program exiting %d: exit %d; want %d", n, c.status, code, c.post)
			}
		}
	}
}

// Without a gate beside laserbrain, pre-tool-use runs `laserbrain hook
// pre-tool-use`; every installed command is recognised as ours, with its
// event, program and client.
func TestHookCommandsAreRecognised(t *testing.T) {
	self, gate := fakeBinaries(t)
	for _, n := range Names {
		for _, e := range Events {
			p, ok := ParseCommand(HookCommand(self, n, e.Event), "")
			want := self
			if slices.Contains(GateEvents, e.Event) {
				want = gate
			}
			if !ok || p.Event != e.Event || p.Client != n || p.Program != want || !p.Guarded {
				t.Errorf("%s %s: parsed %+v %v", n, e.Event, p, ok)
			}
		}
	}
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if argv := Argv(self, Gemini, PreToolUse); strings.Join(argv, " ") != self+" hook pre-tool-use --client gemini" {
		t.Errorf("argv without a gate: %q", argv)
	}
	// Commands written by hand, and by earlier versions.
	for cmd, want := range map[string]Parsed{
		"/usr/local/bin/laserbrain hook stop":                        {Program: "/usr/local/bin/laserbrain", Event: Stop, Client: Claude},
		"'/opt/x y/laserbrain-gate' --format json":                   {Program: "/opt/x y/laserbrain-gate", Event: PreToolUse, Client: Claude},
		"laserbrain hook pre-tool-use --client=qwen":                 {Program: "laserbrain", Event: PreToolUse, Client: Qwen},
		"/bin/laserbrain-gate --client copilot && echo done":         {Program: "/bin/laserbrain-gate", Event: PreToolUse, Client: Copilot},
		"/bin/laserbrain-gate --event post-tool-use --client=gemini": {Program: "/bin/laserbrain-gate", Event: PostToolUse, Client: Gemini},
		"laserbrain-gate --event=post-tool-use-failure":              {Program: "laserbrain-gate", Event: PostToolUseFailure, Client: Claude},
		"my-own-hook --client laserbrain":                            {},
		"laserbrain doctor":                                          {},
		"/usr/bin/laserbrain hook not-an-event --client qwen":        {},
	} {
		p, ok := ParseCommand(cmd, "")
		if ok != (want.Program != "") || ok && (p.Program != want.Program || p.Event != want.Event || p.Client != want.Client || p.Guarded) {
			t.Errorf("%q: parsed %+v %v, want %+v", cmd, p, ok, want)
		}
	}
}

// Another program in the gate's place — /bin/true copied there or linked
// there, the gate renamed aside, a script that exits 0 — gets no call
// through: every client's pre-tool-use command denies, in its form, where
// it would have let the call go on. (The gate itself answers with the
// status --ok-status asks for; these never heard of it.)
func TestHookCommandRefusesAnotherProgram(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		testenv.SkipOrFail(t, "no true program: %v", err)
	}
	trueBin, err := os.ReadFile(truePath)
	if err != nil {
		t.Fatal(err)
	}
	substitutes := map[string]func(gate string) error{
		"/bin/true copied in its place": func(gate string) error { return os.WriteFile(gate, trueBin, 0o755) },
		"/bin/true linked in its place": func(gate string) error { return os.Symlink(truePath, gate) },
		"a script exiting 0":            func(gate string) error { return os.WriteFile(gate, []byte("#!/bin/sh\nexit 0\n"), 0o755) },
		"the gate renamed aside":        func(gate string) error { return nil },
	}
	for _, n := range []Name{Claude, Codex, Gemini, Qwen, Copilot, Cline} {
		for what, put := range substitutes {
			self, gate := fakeBinaries(t)
			cmd := HookCommand(self, n, PreToolUse) // as install wrote it, the gate there
			if out, errOut, code := runShell(t, "/bin/sh", cmd); Denied(n, Output{Stdout: out, Stderr: errOut, Exit: code}) {
				t.Fatalf("%s: the gate's own answer was taken for a denial: the test proves nothing", n)
			}
			if err := os.Rename(gate, gate+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := put(gate); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runShell(t, "/bin/sh", cmd)
			if !Denied(n, Output{Stdout: out, Stderr: errOut, Exit: code}) {
				t.Errorf("%s, %s: exit %d stdout %q stderr %q; want %s's denial", n, what, code, out, errOut, n)
			}
		}
	}
}
