package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
)

// SaveRuns is Save for each handle, in one transaction: the same runs
// stepped the same way and saved one by one in one database and together
// in another read back the same — step counts, verdicts, and every
// context's checks, outcomes and best distance (the records of several
// runs on one context added up) — and a batch with one run taken over
// saves none of them.
func TestSaveRunsIsEverySave(t *testing.T) {
	ctx := context.Background()
	one, batch := openStore(t, newDatabase(t)), openStore(t, newDatabase(t))
	goals := []string{"ship the sky billboard", "repaint the sky billboard", "ship the sky billboard"}
	open := func(s *Store) []laserbrain.RunHandle {
		var hs []laserbrain.RunHandle
		for i := range 5 {
			h, err := s.OpenRun(ctx, fmt.Sprintf("run-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			hs = append(hs, h)
		}
		return hs
	}
	hsOne, hsBatch := open(one), open(batch)
	for round := range 3 {
		for i := range hsOne {
			for _, hs := range [][]laserbrain.RunHandle{hsOne, hsBatch} {
				if _, err := hs[i].Run().Step(step(goals[(i+round)%len(goals)], 6-round)); err != nil {
					t.Fatal(err)
				}
			}
			if err := hsOne[i].Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.SaveRuns(ctx, hsBatch); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	for i := range hsOne {
		id := fmt.Sprintf("run-%d", i)
		a, err := one.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := batch.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ha, hb := a.Steps(), b.Steps()
		if len(ha) != 3 || len(hb) != len(ha) {
			t.Fatalf("%s: %d steps saved one by one, %d together", id, len(ha), len(hb))
		}
		for n := range ha {
			x, y := ha[n], hb[n]
			x.At = y.At // the clock, not the store
			if jx, jy := asJSON(t, x), asJSON(t, y); jx != jy {
				t.Errorf("%s step %d: %s one by one, %s together", id, n+1, jx, jy)
			}
		}
	}
	ea, err := one.ContextEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := batch.ContextEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) == 0 || len(ea) != len(eb) {
		t.Fatalf("%d contexts one by one, %d together", len(ea), len(eb))
	}
	for id, a := range ea {
		b := eb[id]
		if a.Checks != b.Checks || a.BestDistance != b.BestDistance || fmt.Sprint(a.Outcomes) != fmt.Sprint(b.Outcomes) || a.SessionCount != b.SessionCount {
			t.Errorf("context %s: %+v one by one, %+v together", id, a, b)
		}
	}

	// One run of the batch saved meanwhile by another handle (its lock
	// lost with its connection): nothing of the batch is written.
	for _, h := range hsBatch {
		if _, err := h.Run().Step(step("ship the sky billboard", 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := batch.pool.Exec(ctx, `UPDATE laserbrain.runs SET version = version + 1 WHERE id = 'run-3'`); err != nil {
		t.Fatal(err)
	}
	if err := batch.SaveRuns(ctx, hsBatch); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("a batch with a run taken over: %v, want ErrTakenOver", err)
	}
	var steps int
	if err := batch.pool.QueryRow(ctx, `SELECT count(*) FROM laserbrain.steps`).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if steps != 15 {
		t.Fatalf("%d steps stored after the refused batch, want the 15 saved before", steps)
	}
}

func asJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
