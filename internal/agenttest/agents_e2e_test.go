package agenttest

// The harness proved with every real client, no laserbrain anywhere: the
// client, configured by its runner against its scripted model, really runs
// the shell command the model asks for (a marker appears in the project),
// the very next request carries that command's output (two calls in one
// turn: both outputs), and nothing the client started is left running.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentBaseline(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			// One turn with two calls (the clients run both and answer both in
			// the next request), then a text answer that ends the loop.
			marker, second := c.Shell("call_marker", "touch ran-marker && echo marker-made"), c.Shell("call_second", "echo second-ran")
			s := NewAgent(t, c, Calls(marker.Tools[0], second.Tools[0]), Say("Scripted answer 42."))
			r := s.Prompt(t, "make the marker")
			if r.ExitCode != 0 {
				t.Fatalf("%s exited %d\nstdout: %s\nstderr: %s", c.Name, r.ExitCode, clipText(r.Stdout), clipText(r.Stderr))
			}
			if _, err := os.Stat(filepath.Join(s.Dir, "ran-marker")); err != nil {
				t.Fatalf("the scripted shell command did not run: %v", err)
			}
			if tr := s.Model.ResultAfter(t, "call_marker"); !strings.Contains(tr.Text, "marker-made") || tr.IsError {
				t.Errorf("the next request carries %+v; want the command's output", tr)
			}
			if tr := s.Model.ResultAfter(t, "call_second"); !strings.Contains(tr.Text, "second-ran") || tr.IsError {
				t.Errorf("the next request carries %+v for the second call", tr)
			}
			if s.Model.Played() != 2 {
				t.Errorf("the model played %d turns, want 2", s.Model.Played())
			}
			if !strings.Contains(r.Stdout, "Scripted answer 42.") {
				t.Errorf("the scripted answer is not in the client's output:\n%s", clipText(r.Stdout))
			}
			if left := s.Processes(); len(left) > 0 {
				t.Errorf("processes left running: %v", describe(left))
			}
			// Cline leaves its hub daemon; the runner stopped it.
			if c == Cline && !strings.Contains(strings.Join(s.Reaped, "\n"), "--cline-hub-daemon") {
				t.Errorf("no Cline hub daemon was stopped; stopped: %q", s.Reaped)
			}
		})
	}
}
