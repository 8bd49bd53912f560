package supervise

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A FileReader that reads a repeated event once answers every event as
// EventFiles reads it afresh: the same command failed and succeeded (a
// failure's text ends with its error), the same relative path from two
// directories, a file tool and a command, each again and again.
func TestFileReaderAnswersRepeatsAsRead(t *testing.T) {
	repo := t.TempDir()
	for _, p := range []string{"a.go", "sub/b.go", "sub/a.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(repo, "sub")
	tool := func(name, text string, ok laserbrain.OK) fleet.RunEvent {
		return fleet.RunEvent{Kind: fleet.KindTool, Name: name, Text: text, OK: ok}
	}
	events := []struct {
		dir string
		e   fleet.RunEvent
	}{
		{repo, tool("Bash", "cat a.go — exit 1: sub/b.go", laserbrain.OKFalse)},
		{repo, tool("Bash", "cat a.go — exit 1: sub/b.go", laserbrain.OKTrue)},
		{repo, tool("Bash", "cat a.go — exit 1: sub/b.go", laserbrain.OKUnknown)},
		{repo, tool("Bash", "sed -i s/x/y/ a.go > out.txt", laserbrain.OKTrue)},
		{sub, tool("Bash", "sed -i s/x/y/ a.go > out.txt", laserbrain.OKTrue)},
		{sub, tool("Edit", filepath.Join(sub, "b.go"), laserbrain.OKTrue)},
		{repo, tool("Edit", filepath.Join(sub, "b.go"), laserbrain.OKTrue)},
		{repo, fleet.RunEvent{Kind: fleet.KindCheck, Name: "advancing", Text: "a.go"}},
	}
	var fr FileReader
	for round := 0; round < 3; round++ {
		for i, ev := range events {
			got, want := fr.EventFiles(repo, ev.dir, ev.e), EventFiles(repo, ev.dir, ev.e)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round %d, event %d (%s in %s): %q, read afresh %q", round, i, ev.e.Text, ev.dir, got, want)
			}
		}
	}
	// The answers differ where they must, so the comparison above could fail.
	if a, b := EventFiles(repo, repo, events[0].e), EventFiles(repo, repo, events[1].e); reflect.DeepEqual(a, b) {
		t.Errorf("a failed and a succeeded command read alike: %q", a)
	}
	if a, b := EventFiles(repo, repo, events[3].e), EventFiles(repo, sub, events[4].e); reflect.DeepEqual(a, b) {
		t.Errorf("a command in two directories read alike: %q", a)
	}
}
