package fleet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
)

// A store opened for reading on a home nothing was written to reads as
// empty, refuses every write with laserbrain.ErrReadOnly, and creates
// nothing; on a store that exists it reads what is there.
func TestOpenLocalReader(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "fleet")
	r := OpenLocalReader(dir)
	if runs, err := r.ListRuns(ctx, RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("ListRuns = %v, %v", runs, err)
	}
	if any, err := r.AnyHaltInForce(ctx); err != nil || any {
		t.Fatalf("AnyHaltInForce = %v, %v", any, err)
	}
	if recs, err := r.JournalRecords(ctx, "f", 0); err != nil || len(recs) != 0 {
		t.Fatalf("JournalRecords = %v, %v", recs, err)
	}
	if _, err := r.Run(ctx, "r1"); !errors.Is(err, ErrNotFound) || err.Error() != "run r1: not found" {
		t.Fatalf("Run = %v", err)
	}
	now := time.Now()
	for name, err := range map[string]error{
		"CreateRun":   r.CreateRun(ctx, Run{ID: "r1", Fleet: "f", Created: now}),
		"PutHalt":     r.PutHalt(ctx, Halt{ID: "h", Fleet: "f", Agent: "a", Reason: "x", At: now}),
		"AppendEvent": func() error { _, err := r.AppendEvent(ctx, "r1", RunEvent{Kind: KindTool, At: now}); return err }(),
		"Journal": func() error {
			_, err := r.AppendJournal(ctx, JournalRecord{Fleet: "f", Kind: JournalRound})
			return err
		}(),
	} {
		if !errors.Is(err, laserbrain.ErrReadOnly) {
			t.Errorf("%s on a reader: %v, want ErrReadOnly", name, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the reader created %s (%v)", dir, err)
	}
	w, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateRun(ctx, Run{ID: "r1", Fleet: "f", Created: now}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Run(ctx, "r1"); err != nil || got.ID != "r1" {
		t.Fatalf("the reader does not see the run written: %+v, %v", got, err)
	}
}
