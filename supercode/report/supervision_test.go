package report

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// TestFleetReportReadsTheSupervisor: a fleet report shows the supervisor's
// halts (with their release), its escalations with the asking command's
// exit status (one per question, even when a restart asked it again), and
// whether its journal verifies — and says so when it does not.
func TestFleetReportReadsTheSupervisor(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	t.Setenv("LASERBRAIN_FLEET", "reported")
	st, err := fleet.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	if err := st.PutHalt(ctx, fleet.Halt{ID: "h1", Fleet: "reported", Agent: "ponder:b", Reason: "shares a ground with ponder:a", By: "supervisor", At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReleaseHalt(ctx, "reported", "ponder:b", fleet.Release{At: t0.Add(time.Hour), By: "ana", Reason: "split the work"}); err != nil {
		t.Fatal(err)
	}
	esc, _ := json.Marshal(map[string]any{"id": "collision:x+y", "who": "x+y", "why": "no basis to choose"})
	three := 3
	ans, _ := json.Marshal(map[string]any{"id": "collision:x+y", "exit": three})
	for _, r := range []fleet.JournalRecord{
		{Kind: fleet.JournalEscalation, Data: esc}, {Kind: fleet.JournalEscalation, Data: esc}, {Kind: fleet.JournalAnswer, Data: ans},
	} {
		r.Fleet, r.At = "reported", fleet.JournalTime(t0)
		if _, err := st.AppendJournal(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(ctx, Options{Repo: repo, Fleet: st, Runs: laserbrain.NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Halts) != 1 || f.Halts[0].Agent != "ponder:b" || f.Halts[0].ReleaseReason != "split the work" || !f.Halts[0].Released.Equal(t0.Add(time.Hour)) {
		t.Fatalf("halts = %+v", f.Halts)
	}
	if len(f.Escalations) != 1 || f.Escalations[0].Who != "x+y" || f.Escalations[0].ExitStatus == nil || *f.Escalations[0].ExitStatus != 3 {
		t.Fatalf("escalations = %+v", f.Escalations)
	}
	if f.Journal.State != JournalVerified || f.Journal.Records != 3 {
		t.Fatalf("journal = %+v", f.Journal)
	}
	// Cut the journal's last record: the report says it does not verify.
	recs, _ := st.JournalRecords(ctx, "reported", 0)
	var kept []byte
	for _, r := range recs[:2] {
		kept = append(append(kept, r.Raw...), '\n')
	}
	files, _ := os.ReadDir(st.Dir() + "/journal")
	for _, e := range files {
		if len(e.Name()) > 6 && e.Name()[len(e.Name())-6:] == ".jsonl" {
			if err := os.WriteFile(st.Dir()+"/journal/"+e.Name(), kept, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, _ = Load(ctx, Options{Repo: repo, Fleet: st, Runs: laserbrain.NewMemStore()})
	if f.Journal.State != JournalBroken || f.Journal.FirstBad != 3 {
		t.Fatalf("journal after a cut = %+v", f.Journal)
	}
}
