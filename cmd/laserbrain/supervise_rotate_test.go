package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A rotated journal, through the binary: supervise verify checks the
// journal and its archive (exit 0, the archived records counted), supervise
// log --json prints the archive and the journal as one chain that the
// Python reference's verify_audit accepts, and with the archive's segment
// deleted verify names it and exits 1.
func TestRotatedJournalVerifies(t *testing.T) {
	lb := laserbrainBinary(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	st, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	add := func(kind string, data any) {
		b, _ := json.Marshal(data)
		if _, err := st.AppendJournal(ctx, fleet.JournalRecord{Fleet: "rot", Kind: kind, Text: kind, Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	add(fleet.JournalHalt, fleet.Halt{ID: "h1", Fleet: "rot", Agent: "a:r1", Reason: "yields"})
	add(fleet.JournalRound, map[string]int{"n": 1})
	add(fleet.JournalCheckpoint, map[string]int{"round": 1})
	add(fleet.JournalRound, map[string]int{"n": 2})
	if ok, err := st.RotateJournal(ctx, "rot", 3, 1); err != nil || !ok {
		t.Fatalf("RotateJournal: %v, %v", ok, err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(lb, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+home, "HOME="+dir, "LASERBRAIN_FLEET=rot")
		return proctest.Run(t, cmd)
	}
	out, errOut, code := run("supervise", "verify", "--json")
	var v struct {
		OK       bool  `json:"ok"`
		Records  int64 `json:"records"`
		Archived int64 `json:"archived"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || !v.OK || v.Records != 5 || v.Archived != 2 {
		t.Fatalf("verify of a rotated journal: exit %d\n%s%s", code, out, errOut)
	}
	log, _, code := run("supervise", "log", "--json")
	if code != 0 || strings.Count(log, "\n") != 5 {
		t.Fatalf("log --json: exit %d\n%s", code, log)
	}
	chain := filepath.Join(dir, "chain.json")
	if err := os.WriteFile(chain, []byte("["+strings.Join(strings.Split(strings.TrimSpace(log), "\n"), ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := referencePython(t, verifyWithReference, chain); got != "(True, -1)" {
		t.Fatalf("the reference's verify_audit on the archive and journal as one: %s", got)
	}
	segs, _ := filepath.Glob(filepath.Join(home, "fleet", "journal", "*.archive", "*.jsonl.gz"))
	if len(segs) != 1 {
		t.Fatalf("archive segments: %v", segs)
	}
	if err := os.Remove(segs[0]); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = run("supervise", "verify"); code != 1 || !strings.Contains(errOut, "archive segment") || !strings.Contains(errOut, "missing") {
		t.Fatalf("verify with the archive deleted: exit %d\n%s", code, errOut)
	}
}
