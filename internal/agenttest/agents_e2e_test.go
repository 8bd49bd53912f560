package agenttest

// The harness proved with every real client, no laserbrain anywhere: the
// client, configured by its runner against its scripted model, really runs
// the shell command the model asks for (a marker appears in the project),
// the very next request carries that command's output, and nothing the
// client started is left running.

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
			s := NewAgent(t, c,
				c.Shell("call_marker", "touch ran-marker && echo marker-made"),
				Say("Scripted answer 42."))
			r := s.Prompt(t, "make the marker")
			if r.ExitCode != 0 {
				t.Fatalf("%s exited %d\nstdout: %s\nstderr: %s", c.Name, r.ExitCode, clipText(r.Stdout), clipText(r.Stderr))
			}
			if _, err := os.Stat(filepath.Join(s.Dir, "ran-marker")); err != nil {
				t.Fatalf("the scripted shell command did not run: %v", err)
			}
			if tr := s.Model.ResultAfter(t, "call_marker"); !strings.Contains(tr.Text, "marker-made") || tr.IsError {
				t.Fatalf("the next request carries %+v; want the command's output", tr)
			}
			if s.Model.Played() != 2 {
				t.Fatalf("the model played %d turns, want 2", s.Model.Played())
			}
			if !strings.Contains(r.Stdout, "Scripted answer 42.") {
				t.Fatalf("the scripted answer is not in the client's output:\n%s", clipText(r.Stdout))
			}
			if left := s.Processes(); len(left) > 0 {
				t.Fatalf("processes left running: %v", describe(left))
			}
			// Cline leaves its hub daemon; the runner stopped it.
			if c == Cline && !strings.Contains(strings.Join(s.Reaped, "\n"), "--cline-hub-daemon") {
				t.Fatalf("no Cline hub daemon was stopped; stopped: %q", s.Reaped)
			}
		})
	}
}

// A turn with two tool calls: the client runs both and sends both results
// back in the next request.
func TestAgentTwoCallsInOneTurn(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			one, two := c.Shell("call_one", "touch marker-one && echo first-ran"), c.Shell("call_two", "touch marker-two && echo second-ran")
			s := NewAgent(t, c, Calls(one.Tools[0], two.Tools[0]), Say("Both done."))
			if r := s.Prompt(t, "make both markers"); r.ExitCode != 0 {
				t.Fatalf("%s exited %d\nstdout: %s\nstderr: %s", c.Name, r.ExitCode, clipText(r.Stdout), clipText(r.Stderr))
			}
			for _, m := range []string{"marker-one", "marker-two"} {
				if _, err := os.Stat(filepath.Join(s.Dir, m)); err != nil {
					t.Errorf("%s: %v", m, err)
				}
			}
			if tr := s.Model.ResultAfter(t, "call_one"); !strings.Contains(tr.Text, "first-ran") {
				t.Errorf("first result: %+v", tr)
			}
			if tr := s.Model.ResultAfter(t, "call_two"); !strings.Contains(tr.Text, "second-ran") {
				t.Errorf("second result: %+v", tr)
			}
		})
	}
}
