package fleettest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/childtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Run runs the suite; open returns an empty store each time it is called.
func Run(t *testing.T, open func(t *testing.T) fleet.Store) {
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

	t.Run("runs", func(t *testing.T) { testRuns(t, open, t0) })
	t.Run("concurrent updates lose nothing", func(t *testing.T) { testConcurrentUpdates(t, open, t0) })
	t.Run("a run keeps its coverage record, under concurrent hooks", func(t *testing.T) { testCoverageRecord(t, open, t0) })
	t.Run("sessions", func(t *testing.T) { testSessions(t, open, t0) })
	t.Run("events are idempotent on their id", func(t *testing.T) { testEventsIdempotent(t, open, t0) })
	t.Run("a batch of events is recorded in order, once per id", func(t *testing.T) { testEventBatch(t, open, t0) })
	t.Run("a gate event keeps its answer's word and its ok", func(t *testing.T) { testGateEvent(t, open, t0) })
	t.Run("authorizations", func(t *testing.T) { testAuthorizations(t, open, t0) })
	t.Run("only a journaled authorization is honoured", func(t *testing.T) { testJournaledAuthorization(t, open, t0) })
	t.Run("a halt lifted by hand holds; a journaled release lifts it", func(t *testing.T) { testHaltLiftedByHand(t, open, t0) })
	t.Run("an authorization is spent once under contention", func(t *testing.T) { testAuthorizationContention(t, open, t0) })

	runHalts(t, open, t0)
	runJournal(t, open, t0)
	runRounds(t, open)
}

// testRuns is the case "runs".
func testRuns(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	r := fleet.Run{ID: "r1", Agent: "a1", Fleet: "f1", Created: t0, Task: "r1", Tasks: 1}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, r); !errors.Is(err, fleet.ErrExists) {
		t.Fatalf("second CreateRun: %v, want ErrExists", err)
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("Run(nope): %v, want ErrNotFound", err)
	}
	if err := s.CreateRun(ctx, fleet.Run{ID: "../x"}); err == nil {
		t.Fatal("a run id with a slash was accepted")
	}
	if err := s.CreateRun(ctx, fleet.Run{ID: "r2", Agent: "a2", Fleet: "f2", Created: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListRuns(ctx, fleet.RunFilter{})
	if err != nil || len(all) != 2 || all[0].ID != "r1" || all[1].ID != "r2" {
		t.Fatalf("ListRuns = %v, %v; want r1, r2", ids(all), err)
	}
	f2, err := s.ListRuns(ctx, fleet.RunFilter{Fleet: "f2"})
	if err != nil || len(f2) != 1 || f2[0].ID != "r2" {
		t.Fatalf("ListRuns(f2) = %v, %v", ids(f2), err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateRun(ctx, "r1", func(r *fleet.Run) error { r.Agent = "changed"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateRun error = %v", err)
	}
	got, _ := s.Run(ctx, "r1")
	if got.Agent != "a1" {
		t.Fatalf("an aborted update was written: agent %q", got.Agent)
	}
	if _, err := s.UpdateRun(ctx, "nope", func(*fleet.Run) error { return nil }); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("UpdateRun(nope) = %v", err)
	}
}

// testConcurrentUpdates is the case "concurrent updates lose nothing".
func testConcurrentUpdates(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateRun(ctx, fleet.Run{ID: "c", Created: t0}); err != nil {
		t.Fatal(err)
	}
	const n = 24
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.UpdateRun(ctx, "c", func(r *fleet.Run) error { r.Checks++; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	r, _ := s.Run(ctx, "c")
	if r.Checks != n {
		t.Fatalf("Checks = %d after %d concurrent increments", r.Checks, n)
	}
}

// testCoverageRecord is the case "a run keeps its coverage record, under concurrent hooks".
func testCoverageRecord(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateRun(ctx, fleet.Run{ID: "cov", Created: t0}); err != nil {
		t.Fatal(err)
	}
	type record struct {
		Steps  int   `json:"steps"`
		Checks []int `json:"checks"`
	}
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.UpdateRun(ctx, "cov", func(r *fleet.Run) error {
				var rec record
				if len(r.Coverage) > 0 {
					if err := json.Unmarshal(r.Coverage, &rec); err != nil {
						return err
					}
				}
				rec.Steps++
				if i%4 == 0 {
					rec.Checks = append(rec.Checks, rec.Steps)
				}
				b, err := json.Marshal(rec)
				r.Coverage = b
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	// An update that does not touch the record keeps it.
	if _, err := s.UpdateRun(ctx, "cov", func(r *fleet.Run) error { r.Checks++; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func() (fleet.Run, error){
		func() (fleet.Run, error) { return s.Run(ctx, "cov") },
		func() (fleet.Run, error) {
			all, err := s.ListRuns(ctx, fleet.RunFilter{})
			if err != nil || len(all) != 1 {
				return fleet.Run{}, fmt.Errorf("ListRuns = %v, %v", ids(all), err)
			}
			return all[0], nil
		},
	} {
		r, err := read()
		if err != nil {
			t.Fatal(err)
		}
		var rec record
		if err := json.Unmarshal(r.Coverage, &rec); err != nil || rec.Steps != n || len(rec.Checks) != n/4 {
			t.Fatalf("coverage record %s (%v): want %d steps and %d checks", r.Coverage, err, n, n/4)
		}
	}
}

// testSessions is the case "sessions".
func testSessions(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateRun(ctx, fleet.Run{ID: "r", Created: t0}); err != nil {
		t.Fatal(err)
	}
	sid := "35049763-849d-4973-a6d2-f3823b29d1e6"
	for i := 0; i < 2; i++ {
		if err := s.AttachSession(ctx, "r", sid); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.RunForSession(ctx, sid)
	if err != nil || r.ID != "r" || len(r.Sessions) != 1 {
		t.Fatalf("RunForSession = %+v, %v; want run r with one session", r, err)
	}
	if _, err := s.RunForSession(ctx, "other"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// testGateEvent is the case "a gate event keeps its answer's word and its
// ok": each answer is stored as exactly its word, and the tri-state ok as
// it was given.
func testGateEvent(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	words := []string{"allow", "ask", "deny"}
	oks := []laserbrain.OK{laserbrain.OKTrue, laserbrain.OKUnknown, laserbrain.OKFalse}
	for i, a := range []operator.Answer{operator.Allow, operator.Ask, operator.Deny} {
		res, err := json.Marshal(fleet.GateResult{Decision: a, Labels: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendEvent(ctx, "g", fleet.RunEvent{ID: "gate:" + words[i], At: t0, Kind: fleet.KindGate, OK: oks[i], Result: res}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.Events(ctx, "g")
	if err != nil || len(evs) != 3 {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	for i, e := range evs {
		var raw map[string]any
		if err := json.Unmarshal(e.Result, &raw); err != nil || raw["decision"] != words[i] {
			t.Errorf("%s: the stored decision is %v (%v), want %q", e.ID, raw["decision"], err, words[i])
		}
		if res, ok := fleet.ReadGateResult(e.Result); !ok || res.Decision.String() != words[i] || e.OK != oks[i] {
			t.Errorf("%s reads back as %+v (%v), ok %v; want %s, ok %v", e.ID, res, ok, e.OK, words[i], oks[i])
		}
	}
}

// testEventsIdempotent is the case "events are idempotent on their id".
func testEventsIdempotent(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	e := fleet.RunEvent{ID: "post:toolu_1", At: t0, Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "hi"}
	for i, want := range []bool{true, false} {
		added, err := s.AppendEvent(ctx, "r", e)
		if err != nil || added != want {
			t.Fatalf("append #%d: added=%v err=%v, want added=%v", i+1, added, err, want)
		}
	}
	if _, err := s.AppendEvent(ctx, "r", fleet.RunEvent{Kind: fleet.KindCheck, At: t0}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, "r")
	if err != nil || len(evs) != 2 || evs[0].ID != "post:toolu_1" || evs[0].OK != laserbrain.OKTrue || evs[1].ID == "" {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	if evs, err := s.Events(ctx, "none"); err != nil || len(evs) != 0 {
		t.Fatalf("Events(none) = %v, %v", evs, err)
	}
}

// testEventBatch is the case "a batch of events is recorded in order, once per id".
func testEventBatch(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.AppendEvent(ctx, "b", fleet.RunEvent{ID: "post:toolu_1", At: t0, Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue}); err != nil {
		t.Fatal(err)
	}
	batch := []fleet.RunEvent{
		{Kind: fleet.KindCheck, At: t0, Name: "advancing"},
		{ID: "post:toolu_1", At: t0, Kind: fleet.KindTool, Name: "Bash"}, // the run has it
		{ID: "post:toolu_2", At: t0, Kind: fleet.KindTool, Name: "Edit"},
		{ID: "post:toolu_2", At: t0, Kind: fleet.KindTool, Name: "Edit"}, // twice in the batch
		{Kind: fleet.KindCheck, At: t0, Name: "stalled"},
	}
	added, err := s.AppendEvents(ctx, "b", batch)
	if err != nil || added != 3 {
		t.Fatalf("AppendEvents added %d, %v; want 3", added, err)
	}
	evs, err := s.Events(ctx, "b")
	var got []string
	for _, e := range evs {
		got = append(got, e.Kind+":"+e.Name)
	}
	if err != nil || fmt.Sprint(got) != "[tool:Bash check:advancing tool:Edit check:stalled]" {
		t.Fatalf("Events = %v, %v", got, err)
	}
	if evs[1].ID == "" || evs[1].ID == evs[3].ID {
		t.Fatalf("fresh events got ids %q and %q", evs[1].ID, evs[3].ID)
	}
	if n, err := s.AppendEvents(ctx, "b", nil); err != nil || n != 0 {
		t.Fatalf("an empty batch: %d, %v", n, err)
	}
}

// testAuthorizations is the case "authorizations".
func testAuthorizations(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	a := fleet.Authorization{ID: "au1", Fleet: "f", Action: "npm   publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
	a.Action = operator.ActionKey(a.Action)
	if err := Grant(ctx, s, a); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAuthorization(ctx, a); !errors.Is(err, fleet.ErrExists) {
		t.Fatalf("second add: %v", err)
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "f", "r", "a", "git push", t0); ok {
		t.Fatal("an authorization for npm publish allowed git push")
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "other", "r", "a", "npm publish", t0); ok {
		t.Fatal("an authorization for fleet f allowed fleet other")
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "f", "r", "a", "npm publish", t0.Add(2*time.Hour)); ok {
		t.Fatal("an expired authorization allowed")
	}
	got, ok, err := fleet.Authorize(ctx, s, "f", "r", "a", "npm  publish", t0.Add(time.Minute))
	if err != nil || !ok || got.ID != "au1" {
		t.Fatalf("Authorize = %+v, %v, %v", got, ok, err)
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "f", "r", "a", "npm publish", t0.Add(2*time.Minute)); ok {
		t.Fatal("a one-use authorization allowed twice")
	}
	if err := s.UseAuthorization(ctx, "au1", fleet.Use{At: t0}); !errors.Is(err, fleet.ErrSpent) {
		t.Fatalf("UseAuthorization on a spent one: %v", err)
	}
	b := fleet.Authorization{ID: "au2", Fleet: "f", Run: "r9", Action: "deploy", Created: t0, Expires: t0.Add(time.Hour), Uses: 3}
	if err := Grant(ctx, s, b); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "f", "r", "a", "deploy", t0); ok {
		t.Fatal("an authorization for run r9 allowed run r")
	}
	if err := s.RevokeAuthorization(ctx, "au2", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := fleet.Authorize(ctx, s, "f", "r9", "a", "deploy", t0.Add(2*time.Second)); ok {
		t.Fatal("a revoked authorization allowed")
	}
	if err := s.RevokeAuthorization(ctx, "zz", t0); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
}

// testJournaledAuthorization is the case "only a journaled authorization is honoured".
func testJournaledAuthorization(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	// Written as a hand would: the file alone.
	forged := fleet.Authorization{ID: "forged", Fleet: "f", Action: "rm -rf /", Created: t0, Expires: t0.Add(time.Hour), Uses: 9}
	if err := s.AddAuthorization(ctx, forged); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := fleet.Authorize(ctx, s, "f", "r1", "a", "rm -rf /", t0.Add(time.Minute)); err != nil || ok {
		t.Fatalf("an authorization no journal record witnesses was honoured: %v, %v", ok, err)
	}
	// Journaled for one use, then raised to five uses by hand.
	a := fleet.Authorization{ID: "raised", Fleet: "f", Action: "npm publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
	if _, err := s.AppendJournal(ctx, fleet.AuthorizationRecord(a)); err != nil {
		t.Fatal(err)
	}
	a.Uses = 5
	if err := s.AddAuthorization(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := fleet.Authorize(ctx, s, "f", "r1", "a", "npm publish", t0.Add(time.Minute)); err != nil || ok {
		t.Fatalf("an authorization whose terms changed after the journal took them was honoured: %v, %v", ok, err)
	}
	bad, err := fleet.Unwitnessed(ctx, s, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !strings.Contains(strings.Join(bad, "\n"), "forged") || !strings.Contains(strings.Join(bad, "\n"), "raised") {
		t.Fatalf("Unwitnessed = %q, want both named", bad)
	}
	// Standing, the gate's decision with its reason (authorize --list):
	// each ignored one says why, a journaled one is honoured until the
	// journal takes its revocation.
	kept := fleet.Authorization{ID: "kept", Fleet: "f", Action: "make release", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
	if err := Grant(ctx, s, kept); err != nil {
		t.Fatal(err)
	}
	w, err := fleet.ReadWitness(ctx, s, "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    fleet.Authorization
		ok   bool
		want string
	}{{forged, false, fleet.IgnoredNoRecord}, {a, false, fleet.IgnoredChanged}, {kept, true, ""}} {
		if ok, why := w.Standing(c.a); ok != c.ok || why != c.want || w.Witnesses(c.a) != c.ok {
			t.Errorf("Standing(%s) = %v %q, want %v %q", c.a.ID, ok, why, c.ok, c.want)
		}
	}
	rv, _ := json.Marshal(map[string]string{"id": kept.ID})
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRevoke, Data: rv}); err != nil {
		t.Fatal(err)
	}
	if w, err = fleet.ReadWitness(ctx, s, "f", &w); err != nil {
		t.Fatal(err)
	}
	if ok, why := w.Standing(kept); ok || why != fleet.IgnoredRevoked {
		t.Errorf("Standing(kept) after its journaled revocation = %v %q", ok, why)
	}
}

// testHaltLiftedByHand is the case "a halt lifted by hand holds; a journaled release lifts it".
func testHaltLiftedByHand(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	h := fleet.Halt{ID: "h1", Fleet: "f", Agent: "claude:r1", Run: "r1", Reason: "collides", By: "supervisor", At: t0}
	data, _ := json.Marshal(h)
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalHalt, Agent: h.Agent, Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutHalt(ctx, h); err != nil {
		t.Fatal(err)
	}
	// The store's own release, without the journal's record: what a
	// hand-edited halt file or a removed index amounts to.
	if _, err := s.ReleaseHalt(ctx, "f", h.Agent, fleet.Release{At: t0, By: "agent"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := fleet.HaltInForce(ctx, s, "f", h.Agent, "r1", nil); err != nil || !ok {
		t.Fatalf("a halt released outside the journal was lifted: %v %v", ok, err)
	}
	bad, err := fleet.Unwitnessed(ctx, s, "f")
	if err != nil || len(bad) != 1 || !strings.Contains(bad[0], "h1") {
		t.Fatalf("Unwitnessed = %q, %v, want the halt named", bad, err)
	}
	rel := h
	rel.Released = &fleet.Release{At: t0, By: "a person"}
	data, _ = json.Marshal(rel)
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRelease, Agent: h.Agent, Data: data}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := fleet.HaltInForce(ctx, s, "f", h.Agent, "r1", nil); err != nil || ok {
		t.Fatalf("a journaled release did not lift the halt: %v %v", ok, err)
	}
}

// testAuthorizationContention is the case "an authorization is spent once under contention".
func testAuthorizationContention(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	a := fleet.Authorization{ID: "one", Fleet: "f", Action: "npm publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
	if err := Grant(ctx, s, a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, ok, err := fleet.Authorize(ctx, s, "f", fmt.Sprint("r", i), "a", "npm publish", t0)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if granted != 1 {
		t.Fatalf("a one-use authorization was granted %d times", granted)
	}
}

// runRounds: supervisors of one fleet take turns, each round numbered once.
func runRounds(t *testing.T, open func(t *testing.T) fleet.Store) {
	ctx := context.Background()
	t.Run("rounds take turns across supervisors", func(t *testing.T) {
		s := open(t)
		if _, ok := s.(fleet.Rounds); !ok {
			t.Fatal("the store does not number rounds across supervisors (fleet.Rounds)")
		}
		const supervisors, each = 6, 15
		var mu sync.Mutex
		taken := map[int64]int{}
		inside := 0
		var wg sync.WaitGroup
		for w := 0; w < supervisors; w++ {
			wg.Add(1)
			go func() { // each StartRound takes its own lock (a file, a connection)
				defer wg.Done()
				for i := 0; i < each; i++ {
					last, end, err := s.(fleet.Rounds).StartRound(ctx, "f")
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					inside++
					if inside > 1 {
						t.Error("two supervisors in a round of one fleet at once")
					}
					taken[last+1]++
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					inside--
					mu.Unlock()
					if err := end(last + 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for n := int64(1); n <= supervisors*each; n++ {
			if taken[n] != 1 {
				t.Fatalf("round %d taken %d times", n, taken[n])
			}
		}
		if other, end, err := s.(fleet.Rounds).StartRound(ctx, "g"); err != nil || other != 0 {
			t.Fatalf("another fleet's rounds: last %d, %v", other, err)
		} else if err := end(0); err != nil {
			t.Fatal(err)
		}
	})
}

// runHalts: one halt in force per agent, idempotent ids, releases kept.
func runHalts(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	t.Run("halts", func(t *testing.T) {
		s := open(t)
		if any, err := s.AnyHaltInForce(ctx); err != nil || any {
			t.Fatalf("AnyHaltInForce on an empty store = %v, %v", any, err)
		}
		h := fleet.Halt{ID: "h1", Fleet: "f", Agent: "ponder:parser", Run: "", Reason: "shares a ground", By: "supervisor", Round: 3, Cause: "collision:ponder:lexer", At: t0}
		if err := s.PutHalt(ctx, h); err != nil {
			t.Fatal(err)
		}
		if err := s.PutHalt(ctx, h); !errors.Is(err, fleet.ErrExists) {
			t.Fatalf("the same halt twice: %v, want ErrExists", err)
		}
		other := h
		other.ID, other.Reason = "h2", "another reason"
		if err := s.PutHalt(ctx, other); !errors.Is(err, fleet.ErrExists) {
			t.Fatalf("a second halt on a halted agent: %v, want ErrExists", err)
		}
		got, ok, err := s.ActiveHalt(ctx, "f", "ponder:parser")
		if err != nil || !ok || got.ID != "h1" || got.Reason != "shares a ground" || got.Round != 3 || got.Cause != "collision:ponder:lexer" || !got.At.Equal(t0) {
			t.Fatalf("ActiveHalt = %+v, %v, %v", got, ok, err)
		}
		if _, ok, _ := s.ActiveHalt(ctx, "other-fleet", "ponder:parser"); ok {
			t.Fatal("a halt in fleet f holds in another fleet")
		}
		if any, err := s.AnyHaltInForce(ctx); err != nil || !any {
			t.Fatalf("AnyHaltInForce = %v, %v; want true", any, err)
		}
		if err := s.PutHalt(ctx, fleet.Halt{ID: "h3", Fleet: "f", Agent: "x"}); err == nil {
			t.Fatal("a halt without a reason was accepted")
		}
		rel := fleet.Release{At: t0.Add(time.Minute), By: "ana", Reason: "merged by hand"}
		r, err := s.ReleaseHalt(ctx, "f", "ponder:parser", rel)
		if err != nil || r.ID != "h1" || r.Released == nil || r.Released.By != "ana" || r.InForce() {
			t.Fatalf("ReleaseHalt = %+v, %v", r, err)
		}
		if _, err := s.ReleaseHalt(ctx, "f", "ponder:parser", rel); !errors.Is(err, fleet.ErrNotFound) {
			t.Fatalf("releasing twice: %v, want ErrNotFound", err)
		}
		if _, ok, _ := s.ActiveHalt(ctx, "f", "ponder:parser"); ok {
			t.Fatal("a released halt is still in force")
		}
		if any, _ := s.AnyHaltInForce(ctx); any {
			t.Fatal("AnyHaltInForce after the only halt was released")
		}
		if err := s.PutHalt(ctx, other); err != nil {
			t.Fatalf("halting again after a release: %v", err)
		}
		all, err := s.ListHalts(ctx, "f")
		if err != nil || len(all) != 2 || all[0].ID != "h1" || all[0].Released == nil || !all[0].Released.At.Equal(rel.At) || all[1].ID != "h2" || !all[1].InForce() {
			t.Fatalf("ListHalts = %+v, %v", all, err)
		}
		if none, _ := s.ListHalts(ctx, "nope"); len(none) != 0 {
			t.Fatalf("ListHalts(nope) = %v", none)
		}
	})

	t.Run("one halt wins under contention", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				err := s.PutHalt(ctx, fleet.Halt{ID: fmt.Sprint("c", i), Fleet: "f", Agent: "a:r1", Reason: "r", At: t0})
				if err == nil {
					mu.Lock()
					won++
					mu.Unlock()
				} else if !errors.Is(err, fleet.ErrExists) {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d halts in force on one agent", won)
		}
	})
}

// runJournal: one chain per fleet, in the reference's audit format, linear
// however many writers append at once.
func runJournal(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	t.Run("messages", func(t *testing.T) { testMessages(t, open, t0) })
	t.Run("messages are delivered once each under contention", func(t *testing.T) { testMessagesOnce(t, open, t0) })
	t.Run("journal", func(t *testing.T) { testJournal(t, open, t0) })
	t.Run("concurrent appends form one chain", func(t *testing.T) { testJournalConcurrentAppends(t, open) })
}

// testMessages is the case "messages".
func testMessages(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	say := func(m fleet.Message) bool {
		t.Helper()
		added, err := s.Say(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return added
	}
	if got, err := s.Deliver(ctx, "f", "a:r1", fleet.Delivery{At: t0, Via: "PreToolUse"}); err != nil || len(got) != 0 {
		t.Fatalf("Deliver on an empty queue = %v, %v", got, err)
	}
	m1 := fleet.Message{ID: "advice:a:r1:3", Fleet: "f", Agent: "a:r1", Kind: fleet.MessageAdvice, Round: 4, Text: "return to the parser", At: t0}
	m2 := fleet.Message{ID: "answer:drift:a:r1:2", Fleet: "f", Agent: "a:r1", Kind: fleet.MessageAnswer, Round: 5, Text: "PERSON-SAYS: go back", At: t0.Add(time.Second)}
	other := fleet.Message{ID: "halt:h1", Fleet: "f", Agent: "b:r2", Kind: fleet.MessageHalt, Round: 5, Text: "b:r2 is halted", At: t0}
	if !say(m1) || !say(m2) || !say(other) {
		t.Fatal("a new message was not added")
	}
	again := m1
	again.Text = "something else"
	if say(again) {
		t.Fatal("a message said twice (one id) was added twice")
	}
	for _, bad := range []fleet.Message{{ID: "x", Fleet: "f", Agent: "a", Kind: "gossip", Text: "t"}, {ID: "x", Fleet: "f", Agent: "a", Kind: fleet.MessageAdvice}, {Fleet: "f", Agent: "a", Kind: fleet.MessageAdvice, Text: "t"}} {
		if _, err := s.Say(ctx, bad); err == nil {
			t.Errorf("Say accepted %+v", bad)
		}
	}
	d := fleet.Delivery{At: t0.Add(time.Minute), Via: "PostToolUse"}
	got, err := s.Deliver(ctx, "f", "a:r1", d)
	if err != nil || len(got) != 2 || got[0].ID != m1.ID || got[1].ID != m2.ID || got[0].Text != m1.Text {
		t.Fatalf("Deliver = %+v, %v; want m1 (its first text) then m2", got, err)
	}
	if got[0].Delivered == nil || got[0].Delivered.Via != "PostToolUse" || !got[0].Delivered.At.Equal(d.At) {
		t.Fatalf("delivery %+v", got[0].Delivered)
	}
	if got, err := s.Deliver(ctx, "f", "a:r1", d); err != nil || len(got) != 0 {
		t.Fatalf("a second Deliver = %+v, %v; want nothing", got, err)
	}
	all, err := s.Messages(ctx, "f", "a:r1")
	if err != nil || len(all) != 2 || all[0].Delivered == nil || all[1].Delivered == nil {
		t.Fatalf("Messages = %+v, %v; want both, delivered", all, err)
	}
	if waiting, _ := s.Messages(ctx, "f", "b:r2"); len(waiting) != 1 || waiting[0].Delivered != nil {
		t.Fatalf("another agent's message: %+v", waiting)
	}
	// Each delivery is journaled, with the round its message came from.
	recs, err := s.JournalRecords(ctx, "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	var rounds []int64
	for _, r := range recs {
		if r.Kind == fleet.JournalDelivery && r.Agent == "a:r1" {
			rounds = append(rounds, r.Round)
		}
	}
	if fmt.Sprint(rounds) != "[4 5]" {
		t.Fatalf("delivery records' rounds %v, want [4 5]", rounds)
	}
	if _, p := fleet.VerifyJournal(recs, mustHead(t, s, "f")); p != nil {
		t.Fatalf("the journal with deliveries does not verify: %v", p)
	}
	// A message said after a delivery waits for the next one.
	m3 := fleet.Message{ID: "release:h9", Fleet: "f", Agent: "a:r1", Kind: fleet.MessageRelease, Round: 6, Text: "released", At: t0}
	say(m3)
	if got, _ := s.Deliver(ctx, "f", "a:r1", d); len(got) != 1 || got[0].ID != m3.ID {
		t.Fatalf("Deliver after a new message = %+v", got)
	}
}

// testMessagesOnce is the case "messages are delivered once each under contention".
func testMessagesOnce(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	const n, readers = 40, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	stop := make(chan struct{})
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := false; !done; {
				select {
				case <-stop:
					done = true // one last Deliver after the last Say
				default:
				}
				got, err := s.Deliver(ctx, "f", "a", fleet.Delivery{At: t0, Via: "PreToolUse"})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[m.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		if _, err := s.Say(ctx, fleet.Message{ID: fmt.Sprint("m", i), Fleet: "f", Agent: "a", Kind: fleet.MessageAdvice, Round: int64(i), Text: "t", At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d of %d messages delivered", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("%s delivered %d times", id, k)
		}
	}
	recs, _ := s.JournalRecords(ctx, "f", 0)
	if deliveries := countKind(recs, fleet.JournalDelivery); deliveries != n {
		t.Fatalf("%d delivery records, want %d", deliveries, n)
	}
}

// testJournal is the case "journal".
func testJournal(t *testing.T, open func(t *testing.T) fleet.Store, t0 time.Time) {
	ctx := context.Background()
	s := open(t)
	if h, err := s.JournalHead(ctx, "f"); err != nil || h.Records != 0 || h.Hash != "" {
		t.Fatalf("head of an empty journal = %+v, %v", h, err)
	}
	var last fleet.JournalRecord
	for i := 1; i <= 5; i++ {
		rec := fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Round: int64(i), Text: fmt.Sprintf("round %d — ünïcode", i),
			At: fleet.JournalTime(t0.Add(time.Duration(i) * time.Second)), Data: json.RawMessage(`{"phi":0.35,"route":[{"keep":"a","yield":"b"}]}`)}
		got, err := s.AppendJournal(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != int64(i) || got.Prev != last.Hash || got.Hash == "" || len(got.Raw) == 0 {
			t.Fatalf("append %d = seq %d prev %q hash %q", i, got.Seq, got.Prev, got.Hash)
		}
		want, err := fleet.JournalHash(got.Prev, got.Raw)
		if err != nil || want != got.Hash {
			t.Fatalf("append %d: hash %s, but the stored record hashes to %s (%v)", i, got.Hash, want, err)
		}
		last = got
	}
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "other", Kind: fleet.JournalStart}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.JournalRecords(ctx, "f", 0)
	if err != nil || len(recs) != 5 {
		t.Fatalf("JournalRecords = %d records, %v", len(recs), err)
	}
	head, err := s.JournalHead(ctx, "f")
	if err != nil || head.Records != 5 || head.Hash != last.Hash {
		t.Fatalf("head = %+v, %v; want 5 records ending %s", head, err, last.Hash)
	}
	if n, p := fleet.VerifyJournal(recs, head); p != nil || n != 0 {
		t.Fatalf("an honest journal does not verify: %v (%d unacknowledged)", p, n)
	}
	if recs[2].Text != "round 3 — ünïcode" || string(recs[2].Data) != `{"phi":0.35,"route":[{"keep":"a","yield":"b"}]}` {
		t.Fatalf("record 3 read back as %+v", recs[2])
	}
	tail, err := s.JournalRecords(ctx, "f", 3)
	if err != nil || len(tail) != 2 || tail[0].Seq != 4 {
		t.Fatalf("JournalRecords(after 3) = %+v, %v", tail, err)
	}
	if other, _ := s.JournalRecords(ctx, "other", 0); len(other) != 1 || other[0].Seq != 1 || other[0].Prev != "" {
		t.Fatalf("the other fleet's journal = %+v", other)
	}
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Kind: fleet.JournalRound}); err == nil {
		t.Fatal("a record without a fleet was appended")
	}
}

// testJournalConcurrentAppends is the case "concurrent appends form one chain".
func testJournalConcurrentAppends(t *testing.T, open func(t *testing.T) fleet.Store) {
	ctx := context.Background()
	s := open(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Agent: fmt.Sprint("w", w), Round: int64(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	recs, err := s.JournalRecords(ctx, "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.JournalHead(ctx, "f")
	if len(recs) != writers*each || head.Records != writers*each {
		t.Fatalf("%d records, head %d; want %d", len(recs), head.Records, writers*each)
	}
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		t.Fatalf("concurrent appends forked the chain: %v", p)
	}
}

func ids(rs []fleet.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func mustHead(t *testing.T, s fleet.Store, fl string) fleet.JournalHead {
	t.Helper()
	h, err := s.JournalHead(context.Background(), fl)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func countKind(recs []fleet.JournalRecord, kind string) int {
	n := 0
	for _, r := range recs {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

// Place is one empty fleet store location (a directory, a database).
type Place = childtest.Place[fleet.Store]

const childEnv = "LASERKIT_FLEETTEST_CHILD"

// Child runs the job a parent test gave this process, if any, and exits;
// otherwise it returns at once. Call it first in TestMain.
func Child(open func() (fleet.Store, error)) {
	childtest.Serve(childEnv, func(job string) error { return runChild(job, open) })
}

// runChild does one of:
//
//	update RUN N          N increments of the run's Checks, each on a fresh store
//	events RUN PREFIX N   N events PREFIX-0…, each appended twice
//	authorize FLEET RUN   one attempt to spend an authorization for "npm publish"
//	deliver FLEET AGENT N  Deliver until the agent's N messages are all
//	                      delivered (by anyone), printing each id it got
func runChild(job string, open func() (fleet.Store, error)) error {
	f := strings.Fields(job)
	ctx := context.Background()
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	switch {
	case len(f) == 3 && f[0] == "update":
		n, _ := strconv.Atoi(f[2])
		for i := 0; i < n; i++ {
			s2, err := open()
			if err != nil {
				return err
			}
			_, err = s2.UpdateRun(ctx, f[1], func(r *fleet.Run) error { r.Checks++; return nil })
			s2.Close()
			if err != nil {
				return err
			}
		}
	case len(f) == 4 && f[0] == "events":
		n, _ := strconv.Atoi(f[3])
		for i := 0; i < n; i++ {
			for k := 0; k < 2; k++ {
				if _, err := s.AppendEvent(ctx, f[1], fleet.RunEvent{ID: fmt.Sprintf("%s-%d", f[2], i), Kind: fleet.KindTool, Name: "Bash"}); err != nil {
					return err
				}
			}
		}
	case len(f) == 4 && f[0] == "deliver":
		n, _ := strconv.Atoi(f[3])
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, err := s.Deliver(ctx, f[1], f[2], fleet.Delivery{At: time.Now(), Via: "child"})
			if err != nil {
				return err
			}
			for _, m := range got {
				fmt.Println("got", m.ID)
			}
			all, err := s.Messages(ctx, f[1], f[2])
			if err != nil {
				return err
			}
			done := len(all) == n
			for _, m := range all {
				done = done && m.Delivered != nil
			}
			if done {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("after 60s, %d of %d messages said", len(all), n)
			}
		}
	case len(f) == 3 && f[0] == "authorize":
		_, ok, err := fleet.Authorize(ctx, s, f[1], f[2], "a", "npm publish", time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
		if err != nil {
			return err
		}
		if ok {
			fmt.Println("granted")
		}
	default:
		return fmt.Errorf("unknown job %q", job)
	}
	return nil
}

// spawn runs jobs in child processes at once against p and returns what
// each printed; a child that fails fails t.
func spawn(t *testing.T, p Place, jobs []string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, len(jobs))
	outs := make([]*strings.Builder, len(jobs))
	for i, job := range jobs {
		cmd := childtest.Command(childEnv, job, p.Env())
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	res := make([]string, len(jobs))
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %q: %v: %s", jobs[i], err, outs[i])
		}
		res[i] = outs[i].String()
	}
	if t.Failed() {
		t.FailNow()
	}
	return res
}

// Processes runs the behaviours that need several processes: updates of
// one run that lose nothing, events kept once however many processes
// record them, an authorization spent once among racing processes.
func Processes(t *testing.T, newPlace func(t *testing.T) Place) {
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

	t.Run("processes updating one run lose nothing", func(t *testing.T) { testProcessesUpdateOneRun(t, newPlace, t0) })
	t.Run("processes recording the same events keep each once", func(t *testing.T) { testProcessesRecordEventsOnce(t, newPlace) })
	t.Run("processes delivering one queue hand each message out once", func(t *testing.T) { testProcessesDeliverOnce(t, newPlace, t0) })
	t.Run("an authorization is spent once among processes", func(t *testing.T) { testProcessesSpendOnce(t, newPlace, t0) })
}

// testProcessesUpdateOneRun is the case "processes updating one run lose nothing".
func testProcessesUpdateOneRun(t *testing.T, newPlace func(t *testing.T) Place, t0 time.Time) {
	ctx := context.Background()
	p := newPlace(t)
	if err := p.Open(t).CreateRun(ctx, fleet.Run{ID: "shared", Created: t0}); err != nil {
		t.Fatal(err)
	}
	spawn(t, p, []string{"update shared 15", "update shared 15", "update shared 15", "update shared 15"})
	if r, err := p.Open(t).Run(ctx, "shared"); err != nil || r.Checks != 60 {
		t.Fatalf("Checks = %d, %v; want 60 from 4 processes × 15", r.Checks, err)
	}
}

// testProcessesRecordEventsOnce is the case "processes recording the same events keep each once".
func testProcessesRecordEventsOnce(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	p := newPlace(t)
	spawn(t, p, []string{"events r e 20", "events r e 20", "events r f 20"})
	evs, err := p.Open(t).Events(ctx, "r")
	if err != nil || len(evs) != 40 {
		t.Fatalf("%d events, %v; want 40 (20 ids twice over, and 20 more)", len(evs), err)
	}
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.ID] {
			t.Fatalf("event %s kept twice", e.ID)
		}
		seen[e.ID] = true
	}
}

// testProcessesDeliverOnce is the case "processes delivering one queue hand each message out once".
func testProcessesDeliverOnce(t *testing.T, newPlace func(t *testing.T) Place, t0 time.Time) {
	ctx := context.Background()
	p := newPlace(t)
	const n = 30
	// The readers start first and deliver while the messages are said.
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < 4; i++ {
		cmd := childtest.Command(childEnv, fmt.Sprintf("deliver f a %d", n), p.Env())
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	s := p.Open(t)
	for i := 0; i < n; i++ {
		if _, err := s.Say(ctx, fleet.Message{ID: fmt.Sprint("m", i), Fleet: "f", Agent: "a", Kind: fleet.MessageAdvice, Round: int64(i + 1), Text: "t", At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v: %s", err, outs[i])
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if id, ok := strings.CutPrefix(line, "got "); ok {
				seen[id]++
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d messages handed out", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("%s handed out %d times among 4 processes", id, k)
		}
	}
	recs, err := p.Open(t).JournalRecords(ctx, "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := countKind(recs, fleet.JournalDelivery); d != n {
		t.Fatalf("%d delivery records, want %d", d, n)
	}
}

// testProcessesSpendOnce is the case "an authorization is spent once among processes".
func testProcessesSpendOnce(t *testing.T, newPlace func(t *testing.T) Place, t0 time.Time) {
	ctx := context.Background()
	p := newPlace(t)
	a := fleet.Authorization{ID: "once", Fleet: "f", Action: "npm publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
	if err := Grant(ctx, p.Open(t), a); err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for i := 0; i < 6; i++ {
		jobs = append(jobs, fmt.Sprintf("authorize f r%d", i))
	}
	granted := 0
	for _, out := range spawn(t, p, jobs) {
		if strings.Contains(out, "granted") {
			granted++
		}
	}
	if granted != 1 {
		t.Fatalf("granted %d times among 6 processes, want once", granted)
	}
}

// Cut is a forger's edit of a store: keep the first keep records of
// fleet's journal, drop the rest, and rewrite the head to match (keep 0
// deletes the journal and its head), leaving the round counter alone.
type Cut func(t *testing.T, s fleet.Store, fleet string, keep int64)

// Witness runs the round counter's witness of the journal: a journal cut
// short with its head rewritten to match — which the chain and the head
// alone cannot show — or deleted outright, does not check clean against the
// counter; the counter's mark never moves back; a rewritten last record is
// named as edited.
func Witness(t *testing.T, open func(t *testing.T) fleet.Store, cut Cut) {
	t.Run("the round counter witnesses the journal", func(t *testing.T) { witnessCounter(t, open(t), cut) })
	t.Run("a person starts a lost journal again", func(t *testing.T) { witnessRestart(t, open(t), cut) })
	t.Run("rounds ran and no journal", func(t *testing.T) { witnessNoJournal(t, open(t)) })
}

// witnessAppend appends n round records to fleet fl's journal.
func witnessAppend(t *testing.T, s fleet.Store, fl string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.AppendJournal(context.Background(), fleet.JournalRecord{Fleet: fl, Kind: fleet.JournalRound, Round: 1, Text: fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// witnessEndRound starts a round of fl and ends it as round.
func witnessEndRound(t *testing.T, s fleet.Store, fl string, round int64) {
	t.Helper()
	if _, end, err := s.(fleet.Rounds).StartRound(context.Background(), fl); err != nil {
		t.Fatal(err)
	} else if err := end(round); err != nil {
		t.Fatal(err)
	}
}

// witnessCheck checks fl's journal whole and by its tail, which must agree
// on whether it holds.
func witnessCheck(t *testing.T, s fleet.Store, fl string) (fleet.JournalCheck, *fleet.JournalProblem) {
	t.Helper()
	ctx := context.Background()
	c, err := fleet.CheckJournal(ctx, s, fl)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := fleet.CheckJournalTail(ctx, s, fl)
	if err != nil {
		t.Fatal(err)
	}
	if (c.Problem == nil) != (tail == nil) {
		t.Fatalf("the whole check says %v, the tail check %v", c.Problem, tail)
	}
	return c, tail
}

// witnessCounter: the counter's mark follows the rounds and sees a cut, a
// rewritten record and a deleted journal.
func witnessCounter(t *testing.T, s fleet.Store, cut Cut) {
	ctx := context.Background()
	if _, ok := s.(fleet.Rounds); !ok {
		t.Fatal("the store keeps no round counter (fleet.Rounds)")
	}
	if c, _ := witnessCheck(t, s, "f"); c.Problem != nil || c.Mark == nil || *c.Mark != (fleet.RoundMark{}) {
		t.Fatalf("an empty fleet: %+v", c)
	}
	witnessAppend(t, s, "f", 3)
	witnessEndRound(t, s, "f", 1)
	c, _ := witnessCheck(t, s, "f")
	if c.Problem != nil || *c.Mark != (fleet.RoundMark{Round: 1, Records: 3, Hash: c.Records[2].Hash}) {
		t.Fatalf("after round 1: mark %+v, problem %v", c.Mark, c.Problem)
	}
	// Records appended outside a round are witnessed by ending "no new
	// round" (what a supervisor's stop and a release do).
	witnessAppend(t, s, "f", 2)
	witnessEndRound(t, s, "f", 0)
	c, _ = witnessCheck(t, s, "f")
	if c.Problem != nil || *c.Mark != (fleet.RoundMark{Round: 1, Records: 5, Hash: c.Records[4].Hash}) {
		t.Fatalf("after two more records: mark %+v, problem %v", c.Mark, c.Problem)
	}

	// The forger drops the last record and rewrites the head.
	cut(t, s, "f", 4)
	recs, _ := s.JournalRecords(ctx, "f", 0)
	head, _ := s.JournalHead(ctx, "f")
	if _, p := fleet.VerifyJournal(recs, head); p != nil || len(recs) != 4 || head.Records != 4 {
		t.Fatalf("the cut is not consistent (%d records, head %d, %v): the test proves nothing", len(recs), head.Records, p)
	}
	c, tail := witnessCheck(t, s, "f")
	if p := c.Problem; p == nil || p.Kind != fleet.TamperDeleted || p.Seq != 5 || !strings.Contains(p.Detail, "record 5 is missing") {
		t.Fatalf("the cut journal checks as %v", p)
	}
	if tail.Kind != fleet.TamperDeleted || tail.Seq != 5 {
		t.Fatalf("the tail check says %v", tail)
	}
	// A later round's end does not move the mark back over the cut.
	witnessEndRound(t, s, "f", 2)
	if c, _ := witnessCheck(t, s, "f"); c.Problem == nil || c.Mark.Round != 2 || c.Mark.Records != 5 {
		t.Fatalf("after another round: mark %+v, problem %v", c.Mark, c.Problem)
	}
	// A different record 5 in place of the one the counter saw.
	witnessAppend(t, s, "f", 1)
	if c, _ := witnessCheck(t, s, "f"); c.Problem == nil || c.Problem.Kind != fleet.TamperEdited || c.Problem.Seq != 5 {
		t.Fatalf("a rewritten record 5 checks as %v", c.Problem)
	}
	// The journal deleted with its head.
	cut(t, s, "f", 0)
	if c, _ := witnessCheck(t, s, "f"); c.Problem == nil || c.Problem.Kind != fleet.TamperDeleted || !strings.Contains(c.Problem.Detail, "the journal is missing") {
		t.Fatalf("a deleted journal checks as %v", c.Problem)
	}
}

// witnessRestart: a person starts a lost journal again, its rounds
// numbered on, another fleet's journal untouched.
func witnessRestart(t *testing.T, s fleet.Store, cut Cut) {
	ctx := context.Background()
	r, ok := s.(fleet.JournalRestarter)
	if !ok {
		t.Fatal("the store cannot start a journal again (fleet.JournalRestarter)")
	}
	witnessAppend(t, s, "h", 5)
	witnessEndRound(t, s, "h", 2)
	witnessAppend(t, s, "other", 2)
	cut(t, s, "h", 0)
	if c, _ := witnessCheck(t, s, "h"); c.Problem == nil {
		t.Fatal("the deleted journal checks clean: the test proves nothing")
	}
	rec, aside, err := r.RestartJournal(ctx, "h", fleet.JournalRecord{Kind: fleet.JournalAccept, Text: "accepted by ana"})
	if err != nil || aside == "" || rec.Seq != 1 || rec.Prev != "" || rec.Fleet != "h" {
		t.Fatalf("RestartJournal: %+v, %q, %v", rec, aside, err)
	}
	c, _ := witnessCheck(t, s, "h")
	if c.Problem != nil || len(c.Records) != 1 || c.Head != (fleet.JournalHead{Records: 1, Hash: rec.Hash}) ||
		*c.Mark != (fleet.RoundMark{Round: 2, Records: 1, Hash: rec.Hash}) {
		t.Fatalf("the new chain: %d records, head %+v, mark %+v, problem %v", len(c.Records), c.Head, c.Mark, c.Problem)
	}
	// It goes on as any journal, its rounds numbered after the last.
	witnessAppend(t, s, "h", 1)
	if last, end, err := s.(fleet.Rounds).StartRound(ctx, "h"); err != nil || last != 2 {
		t.Fatalf("the round after the restart starts after %d, %v; want 2", last, err)
	} else if err := end(3); err != nil {
		t.Fatal(err)
	}
	if c, _ := witnessCheck(t, s, "h"); c.Problem != nil || len(c.Records) != 2 || c.Mark.Round != 3 || c.Mark.Records != 2 {
		t.Fatalf("after a round on the new chain: %d records, mark %+v, %v", len(c.Records), c.Mark, c.Problem)
	}
	// Another fleet's journal is untouched.
	if c, _ := witnessCheck(t, s, "other"); c.Problem != nil || len(c.Records) != 2 {
		t.Fatalf("another fleet's journal: %d records, %v", len(c.Records), c.Problem)
	}
}

// witnessNoJournal: a counter that saw rounds, and no journal.
func witnessNoJournal(t *testing.T, s fleet.Store) {
	witnessEndRound(t, s, "g", 3)
	c, _ := witnessCheck(t, s, "g")
	if c.Problem == nil || c.Problem.Kind != fleet.TamperDeleted || !strings.Contains(c.Problem.Detail, "round 3 ran") {
		t.Fatalf("a fleet whose counter says round 3 ran, without a journal, checks as %v", c.Problem)
	}
}

// Grant stores a person's authorization as laserbrain authorize does: its
// journal record first (fleet.AuthorizationRecord), which the gate needs to
// honour it, then the authorization.
func Grant(ctx context.Context, s fleet.Store, a fleet.Authorization) error {
	if _, err := s.AppendJournal(ctx, fleet.AuthorizationRecord(a)); err != nil {
		return err
	}
	return s.AddAuthorization(ctx, a)
}
