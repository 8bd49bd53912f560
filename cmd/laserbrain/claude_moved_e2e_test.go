package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// copyBinary copies the built laserbrain into dir, so a test can move it
// without breaking the others.
func copyBinary(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "laserbrain")
	copyProgram(t, laserbrainBinary(t), p)
	return p
}

// After laserbrain install claude, the binary is moved away: Claude Code
// runs the installed hook, which would once have exited 127 — a
// non-blocking error, the call going ahead unchecked — and now denies the
// next Bash call, the model told by the shell that the program is not
// there. The marker the command would write is absent. (A binary that
// lost its execute bit is denied the same way: the guard's own test,
// supercode/client, runs both under sh and bash.)
func TestClaudeMovedBinaryDenies(t *testing.T) {
	for _, gone := range []string{"moved"} {
		t.Run(gone, func(t *testing.T) {
			s := newSupervised(t,
				agenttest.Bash("toolu_after", "touch ran-marker"),
				agenttest.Say("I could not run it."))
			lb := copyBinary(t, filepath.Join(s.Home, "opt", "bin"))
			if r := s.Run(t, lb, "install", "claude"); r.ExitCode != 0 {
				t.Fatalf("install: %s", r.Stderr)
			}
			// The MCP server is gone with the binary too; Claude Code waits
			// long for a server that will not start, and the server is not
			// what this test is about.
			if err := os.Remove(filepath.Join(s.Dir, ".mcp.json")); err != nil {
				t.Fatal(err)
			}
			var err error
			if gone == "moved" {
				err = os.Rename(lb, lb+".old")
			} else {
				err = os.Chmod(lb, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			r := s.Run(t, s.Claude, agenttest.ClaudeArgs("work on the task", "Bash")...)
			if r.JSON == nil {
				t.Fatalf("claude: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
			}
			if _, err := os.Stat(filepath.Join(s.Dir, "ran-marker")); err == nil {
				t.Fatal("ran-marker exists: with the binary gone the call went through unchecked")
			}
			tr := s.toolResult(t, "toolu_after")
			if !tr.IsError || !strings.Contains(tr.Text, lb) || !regexp.MustCompile(`not found|No such file`).MatchString(tr.Text) {
				t.Fatalf("the model was shown is_error=%v %q; want a denial saying %s is not found", tr.IsError, tr.Text, lb)
			}
		})
	}
}
