package pgfleet

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// appendFromEightSupervisors appends 8 × 25 round records to one fleet's
// journal at once, each writer on its own store (its own connections, as
// eight supervisor processes have), and reports the appends that failed
// and what verification says.
func appendFromEightSupervisors(t *testing.T, dsn string) (failed int, n int, problem *fleet.JournalProblem) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < 8; w++ {
		st := database(dsn).Open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := st.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Agent: fmt.Sprint("s", w), Round: int64(i)}); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	st := database(dsn).Open(t)
	recs, err := st.JournalRecords(ctx, "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := st.JournalHead(ctx, "f")
	_, problem = fleet.VerifyJournal(recs, head)
	return failed, len(recs), problem
}

// The journal stays one line under eight concurrent writers because each
// append holds the fleet's advisory lock; without it, writers that read the
// same head collide on the next seq and appends are lost (this test is
// what fails when the lock is taken out).
func TestJournalOneWriterPerFleet(t *testing.T) {
	failed, n, problem := appendFromEightSupervisors(t, newDatabase(t))
	if failed != 0 || n != 200 || problem != nil {
		t.Fatalf("with the lock: %d appends failed, %d records, verification %v; want 0, 200, nil", failed, n, problem)
	}
	journalLock = false
	defer func() { journalLock = true }()
	failed, n, problem = appendFromEightSupervisors(t, newDatabase(t))
	if failed == 0 && n == 200 && problem == nil {
		t.Fatal("without the lock eight writers still formed one chain of 200: the test no longer shows what the lock prevents")
	}
	t.Logf("without the lock: %d of 200 appends failed, %d records, verification: %v", failed, n, problem)
}
