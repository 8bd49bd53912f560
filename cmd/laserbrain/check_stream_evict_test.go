package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

// A stream over more runs than it holds closes the runs idle longest and
// reopens one a later line names: no answer changes. The same input, run
// by run in the cyclic order that makes every later line land on a closed
// run, is answered by a stream holding four runs and by one holding all of
// them, on two fresh stores; every run's last answer is its fourth step.
func TestStreamClosesIdleRunsWithoutChangingAnswers(t *testing.T) {
	const runs, passes = 30, 4
	input := streamInputRuns(runs*passes, func(i int) string { return fmt.Sprintf("evict-r%02d", i%runs) })
	t.Setenv("LASERBRAIN_FLEET", "evict")
	oldHeld, oldMax := heldRuns, batchMax
	t.Cleanup(func() { heldRuns, batchMax = oldHeld, oldMax })
	batchMax = 3 // a commit every three lines, so closed runs are reopened

	answer := func(held int) (string, int) {
		t.Helper()
		heldRuns = held
		home := t.TempDir()
		t.Setenv("LASERBRAIN_HOME", home)
		st, err := localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
		if err != nil {
			t.Fatal(err)
		}
		s := newStreamer(st, "", agentrun.NewChecks(&agentrun.Tracker{}))
		var out bytes.Buffer
		bad, err := s.run(bytes.NewReader(input), &out)
		if err != nil || bad != 0 {
			t.Fatalf("stream (holding %d): %d bad lines, %v\n%s", held, bad, err, out.String())
		}
		open := len(s.handles)
		if known := s.agents.Remembered(); known > len(s.handles) {
			t.Errorf("holding %d: the stream remembers %d unregistered runs, more than the %d it holds", held, known, len(s.handles))
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String(), open
	}
	few, open := answer(4)
	all, _ := answer(1 << 20)
	if open > 5 {
		t.Errorf("the stream held %d runs at its end, more than 4 and a quarter", open)
	}
	if few != all {
		t.Fatalf("closing idle runs changed the answers:\nholding 4:\n%s\nholding all:\n%s", few, all)
	}
	lines := strings.Split(strings.TrimSpace(few), "\n")
	if len(lines) != runs*passes {
		t.Fatalf("%d answers for %d lines", len(lines), runs*passes)
	}
	for _, l := range lines[len(lines)-runs:] {
		if !strings.Contains(l, fmt.Sprintf(`"step":%d`, passes)) {
			t.Errorf("a run's last answer is not its step %d (a reopened run started over?): %s", passes, l)
		}
	}
}
