package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// passAt is pass n's record with churn c (nil on pass 1).
func passAt(se oca.Session, n int, c *float64) oca.PassRecord {
	return oca.PassRecord{Session: se, Pass: n, Metrics: oca.PassMetrics{Coverage: 1, Churn: c, Voices: 4, Verdict: "continue"}}
}

func notes(r oca.PassResult) string { return r.Lock + "/" + r.CloseNote + "/" + r.OpenNote }

func TestJudgeTwiceClosesOnceAndOpensOnce(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := oca.Session{Slug: "twice-2026-01-01", Subject: "s", Passes: 4}

	steps := []struct {
		pass  int
		churn *float64
		want  string
	}{
		{1, nil, "held/nothing-pending/no-churn-signal"},
		{1, nil, "held/nothing-pending/no-churn-signal"},
		{2, f(0.5), "held/nothing-pending/opened"},
		{2, f(0.5), "held/nothing-pending/already-forecast"},
		{3, f(0.2), "held/closed/opened"},
		// The rerun must not close the forecast it just opened (for pass 4).
		{3, f(0.2), "held/nothing-pending/already-forecast"},
	}
	for i, st := range steps {
		r := must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, st.pass, st.churn)))
		if notes(r) != st.want {
			t.Errorf("step %d (pass %d): %s, want %s", i, st.pass, notes(r), st.want)
		}
		if (r.ForecastChurn == nil) != (st.pass == 1) {
			t.Errorf("step %d: forecastChurn %v on pass %d", i, r.ForecastChurn, st.pass)
		}
	}
	ledger := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, se.Slug))
	if len(ledger) != 2 || *ledger[0].Status != "refuted" || *ledger[1].Status != "pending" || *ledger[1].AboutPass != 4 {
		t.Errorf("ledger = %+v", ledger)
	}
	// Every judge wrote its episode: the hypothesis half declined, the episode never does.
	if tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug)); len(tl) != 6 {
		t.Errorf("%d ponder_pass episodes, want 6", len(tl))
	}
}

// The no-clamp decision: a churn above 1 is stored as is,
// and so is the forecast made from it.
func TestForecastAboveOneStoredUnclamped(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := oca.Session{Slug: "big-2026-01-01", Subject: "s", Passes: 4}
	r2 := must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 2, f(2.5))))
	if r2.ForecastChurn == nil || *r2.ForecastChurn != 1.5 {
		t.Fatalf("forecast = %v, want 0.6 × 2.5 = 1.5", r2.ForecastChurn)
	}
	r3 := must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 3, f(3))))
	// |1.5 − 3| = 1.5, refuted; its event's priority is capped at 1.
	if *r3.ClosedSurprise != 1.5 || *r3.ClosedStatus != "refuted" {
		t.Errorf("close = %v %v", *r3.ClosedSurprise, *r3.ClosedStatus)
	}
	ledger := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, se.Slug))
	if *ledger[0].Forecast != 1.5 || !near(*ledger[1].Forecast, 1.8) {
		t.Errorf("stored forecasts %v %v, want 1.5 and 1.8", *ledger[0].Forecast, *ledger[1].Forecast)
	}
	tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug))
	var out struct{ Churn float64 }
	if json.Unmarshal([]byte(*tl[0].ActualOutcome), &out) != nil || out.Churn != 2.5 {
		t.Errorf("episode churn = %s", *tl[0].ActualOutcome)
	}
	for _, e := range must[[]pgstore.EventRow](t)(s.Events(ctx, se.Slug)) {
		if e.EventType == "hypothesis_tested" && *e.Priority != 1 {
			t.Errorf("hypothesis_tested priority %v, want min(1, 1.5) = 1", *e.Priority)
		}
	}
}

// Surprise is NULL on start, pass 1,
// converged, stopped and applied rows, even if a caller sends one for pass 1.
func TestSurpriseIsExplicitNull(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := oca.Session{Slug: "null-2026-01-01", Subject: "s", Passes: 4}
	must[oca.StartResult](t)(s.RecordStart(ctx, se))
	r := passAt(se, 1, nil)
	r.Metrics.Surprise = f(0.3)
	must[oca.PassResult](t)(s.RecordPass(ctx, r))
	must[oca.ConvergedResult](t)(s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Converged: false, Passes: 1}))
	must[oca.ApplyResult](t)(s.RecordApply(ctx, oca.ApplyRecord{Session: se}))
	tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug))
	want := []string{"ponder_start", "ponder_pass", "ponder_stopped", "ponder_applied"}
	if len(tl) != len(want) {
		t.Fatalf("timeline %+v", tl)
	}
	for i, row := range tl {
		if row.EventType != want[i] || row.Surprise != nil {
			t.Errorf("%s: surprise %v, want NULL", row.EventType, fp(row.Surprise))
		}
	}
}

// A judge that finds another holding the session's lock writes its episode
// and reports contention; once the lock is free the lifecycle runs.
func TestContendedLockSkipsLifecycleButWritesEpisode(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	s := openStore(t, dsn)
	ctx := testCtx(t)
	se := oca.Session{Slug: "lock-2026-01-01", Subject: "s", Passes: 4}
	must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 2, f(0.5))))

	holder := connect(t, dsn)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, se.Domain()); err != nil {
		t.Fatal(err)
	}
	r := must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 3, f(0.2))))
	if notes(r) != "contended/contended/contended" || r.ClosedHypothesisID != nil || r.HypothesisID != nil {
		t.Errorf("under a held lock: %+v", r)
	}
	if r.ForecastChurn == nil {
		t.Error("forecastChurn is null on pass 3")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if ledger := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, se.Slug)); len(ledger) != 1 || *ledger[0].Status != "pending" {
		t.Errorf("contended judge touched the ledger: %+v", ledger)
	}
	if r := must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 3, f(0.2)))); notes(r) != "held/closed/opened" {
		t.Errorf("after release: %s", notes(r))
	}
	if tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug)); len(tl) != 3 {
		t.Errorf("%d episodes, want 3 (the contended judge's included)", len(tl))
	}
}

// judges is how many judges race on one pass.
const judges = 8

// checkRace asserts the outcome of judges racing on pass n: exactly one
// close and one open among them, and in the database one closed forecast
// about n and one forecast made in n.
func checkRace(t *testing.T, s *pgstore.Store, se oca.Session, n int, results []oca.PassResult) {
	t.Helper()
	var closed, opened int
	for _, r := range results {
		if r.CloseNote == "closed" {
			closed++
		}
		if r.OpenNote == "opened" {
			opened++
		}
		switch notes(r) {
		case "held/closed/opened", "held/nothing-pending/already-forecast", "contended/contended/contended":
		default:
			t.Errorf("pass %d: unexpected notes %s", n, notes(r))
		}
	}
	if closed != 1 || opened != 1 {
		t.Errorf("pass %d: %d closes and %d opens among %d judges, want 1 and 1", n, closed, opened, len(results))
	}
	var about, made int
	for _, l := range must[[]pgstore.LedgerRow](t)(s.Ledger(testCtx(t), se.Slug)) {
		if *l.AboutPass == n {
			about++
			if *l.Status == "pending" || l.Surprise == nil {
				t.Errorf("pass %d: the forecast about it is %s", n, *l.Status)
			}
		}
		if *l.ForecastMadeInPass == n {
			made++
			if *l.Status != "pending" {
				t.Errorf("pass %d: its own forecast was closed (%s)", n, *l.Status)
			}
		}
	}
	if about != 1 || made != 1 {
		t.Errorf("pass %d: %d forecasts about it, %d made in it; want 1 and 1", n, about, made)
	}
}

// Eight judges, each on its own connection, race on passes 3 to 6.
func TestConcurrentJudgesGoroutines(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	s := openStore(t, dsn)
	se := oca.Session{Slug: "race-2026-01-01", Subject: "s", Passes: 8}
	must[oca.PassResult](t)(s.RecordPass(testCtx(t), passAt(se, 2, f(0.5))))

	stores := make([]*pgstore.Store, judges)
	for i := range stores {
		stores[i] = openStore(t, dsn)
	}
	for n := 3; n <= 6; n++ {
		results := make([]oca.PassResult, judges)
		errs := make([]error, judges)
		var ready, done sync.WaitGroup
		gate := make(chan struct{})
		for i := range judges {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-gate
				results[i], errs[i] = stores[i].RecordPass(context.Background(), passAt(se, n, f(0.4)))
			}()
		}
		ready.Wait()
		close(gate)
		done.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkRace(t, s, se, n, results)
	}
}

// Eight judge processes race on one pass: each connects, reports ready, and
// judges when its stdin closes.
func TestConcurrentJudgesProcesses(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	s := openStore(t, dsn)
	se := oca.Session{Slug: "procs-2026-01-01", Subject: "s", Passes: 8}
	must[oca.PassResult](t)(s.RecordPass(testCtx(t), passAt(se, 2, f(0.5))))

	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	procs := make([]proc, judges)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestJudgeProcessHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PGSTORE_JUDGE_DSN="+dsn, "PGSTORE_JUDGE_SLUG="+se.Slug, "PGSTORE_JUDGE_PASS=3")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		procs[i] = proc{cmd, stdin, bufio.NewReader(stdout)}
	}
	for _, p := range procs {
		if line, err := p.out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("judge process: %q %v", line, err)
		}
	}
	for _, p := range procs {
		p.stdin.Close()
	}
	results := make([]oca.PassResult, judges)
	for i, p := range procs {
		line, err := p.out.ReadString('\n')
		if err != nil {
			t.Fatalf("judge process %d: %v", i, err)
		}
		if err := json.Unmarshal([]byte(line), &results[i]); err != nil {
			t.Fatalf("judge process %d said %q", i, line)
		}
	}
	checkRace(t, s, se, 3, results)
}

// TestJudgeProcessHelper is one judge process of the test above.
func TestJudgeProcessHelper(t *testing.T) {
	dsn := os.Getenv("PGSTORE_JUDGE_DSN")
	if dsn == "" {
		t.Skip("helper process for TestConcurrentJudgesProcesses")
	}
	pass, _ := strconv.Atoi(os.Getenv("PGSTORE_JUDGE_PASS"))
	s, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer s.Close()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	se := oca.Session{Slug: os.Getenv("PGSTORE_JUDGE_SLUG"), Subject: "s", Passes: 8}
	r, err := s.RecordPass(context.Background(), passAt(se, pass, f(0.4)))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

// decide stop expires only this session's pending forecasts.
func TestConvergedExpiresOnlyItsOwnPending(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	a := oca.Session{Slug: "a-2026-01-01", Subject: "s", Passes: 4}
	b := oca.Session{Slug: "a-2026-01-01-2", Subject: "s", Passes: 4}
	for _, se := range []oca.Session{a, b} {
		must[oca.PassResult](t)(s.RecordPass(ctx, passAt(se, 2, f(0.5))))
	}
	if r := must[oca.ConvergedResult](t)(s.RecordConverged(ctx, oca.ConvergedRecord{Session: a, Converged: true, Passes: 2})); r.ExpiredHypotheses != 1 {
		t.Errorf("expired %d", r.ExpiredHypotheses)
	}
	if l := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, b.Slug)); *l[0].Status != "pending" {
		t.Errorf("the other session's forecast is %s", *l[0].Status)
	}
	l := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, a.Slug))
	if *l[0].Status != "expired" || l[0].Surprise != nil {
		t.Errorf("expired row = %+v", l[0])
	}
	// A second stop finds nothing left to expire.
	if r := must[oca.ConvergedResult](t)(s.RecordConverged(ctx, oca.ConvergedRecord{Session: a, Converged: true, Passes: 2})); r.ExpiredHypotheses != 0 {
		t.Errorf("second stop expired %d", r.ExpiredHypotheses)
	}
}

// decide stop waits for a judge that holds the session's lock, so the
// forecast that judge is opening gets expired rather than orphaned.
func TestConvergedWaitsForRunningJudge(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	s := openStore(t, dsn)
	ctx := testCtx(t)
	se := oca.Session{Slug: "stopwait-2026-01-01", Subject: "s", Passes: 4}

	judge := connect(t, dsn)
	tx, err := judge.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, se.Domain()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO hypotheses (domain, claim, prediction, source_data)
		VALUES ($1, 'c', 'p', '{"pass": 2, "for_pass": 3, "forecast_churn": 0.3}')`, se.Domain()); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   oca.ConvergedResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Converged: true, Passes: 2})
		got <- result{r, err}
	}()
	// Commit only once decide stop is queued behind the lock (it must not
	// return before), asking the server every 10 ms for half a minute.
	watcher := connect(t, dsn)
	deadline := time.Now().Add(30 * time.Second)
	for waiting := 0; waiting == 0; {
		select {
		case r := <-got:
			t.Fatalf("decide stop returned while the judge held the session's lock: %+v %v", r.r, r.err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("decide stop was not waiting for the judge's lock after 30 s (pg_locks shows no advisory lock waiting)")
		}
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.r.ExpiredHypotheses != 1 {
		t.Errorf("decide stop after the judge: %+v %v, want the judge's forecast expired", r.r, r.err)
	}
}
