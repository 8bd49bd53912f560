package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestGateAnswersDeepSubstitution drives the built gate with the inputs
// that once kept the hook busy past Claude Code's hook timeout (echo
// $(echo $(… rm -rf …)) of 30 KB took 24 s, of 60 KB 117 s): each is
// answered, refused with nobody there and asked with a person there,
// never let through. The deadline is the client's hook timeout (60 s), a
// bound on a hang, not a measure of speed (BenchmarkHostile measures).
func TestGateAnswersDeepSubstitution(t *testing.T) {
	bin := buildGate(t)
	nested := func(size int) string {
		n := (size - len("rm -rf x")) / len("echo $()")
		return strings.Repeat("echo $(", n) + "rm -rf x" + strings.Repeat(")", n)
	}
	for _, c := range []struct{ name, cmd string }{
		{"30KB", nested(30 << 10)},
		{"60KB", nested(60 << 10)},
		{"1MB", nested(1 << 20)},
		{"60KB-bare", strings.Repeat("$(", 20480) + "rm -rf x" + strings.Repeat(")", 20480)},
	} {
		payload, err := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": c.cmd}, "cwd": t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for _, attended := range []string{"0", "1"} {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, bin)
			cmd.Env = append(os.Environ(), "CLAUDE_CODE_SESSION_ATTENDED="+attended, "LASERBRAIN_HOME="+t.TempDir())
			cmd.Stdin = bytes.NewReader(payload)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			late := ctx.Err() == context.DeadlineExceeded
			cancel()
			if late {
				t.Fatalf("%s (attended=%s): no answer within the hook timeout", c.name, attended)
			}
			var ee *exec.ExitError
			switch attended {
			case "0":
				if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "laserbrain") {
					t.Errorf("%s unattended: %v, stdout %q, stderr %q; want a refusal (exit 2)", c.name, err, trimOut(stdout.String()), trimOut(stderr.String()))
				}
			case "1":
				if err != nil || !strings.Contains(stdout.String(), `"permissionDecision":"ask"`) && !strings.Contains(stdout.String(), `"permissionDecision":"deny"`) {
					t.Errorf("%s attended: %v, stdout %q, stderr %q; want an ask or a refusal", c.name, err, trimOut(stdout.String()), trimOut(stderr.String()))
				}
			}
		}
	}
}

func trimOut(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
