// Package fleettest is the behaviour every fleet.Store must have, as one
// test suite: the local store runs it, and so must the PostgreSQL store
// (issue 16).
package fleettest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Run runs the suite; open returns an empty store each time it is called.
func Run(t *testing.T, open func(t *testing.T) fleet.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

	t.Run("runs", func(t *testing.T) {
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
	})

	t.Run("concurrent updates lose nothing", func(t *testing.T) {
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
	})

	t.Run("sessions", func(t *testing.T) {
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
	})

	t.Run("events are idempotent on their id", func(t *testing.T) {
		s := open(t)
		yes := true
		e := fleet.Event{ID: "post:toolu_1", At: t0, Kind: fleet.KindTool, Name: "Bash", OK: &yes, Text: "hi"}
		for i, want := range []bool{true, false} {
			added, err := s.AppendEvent(ctx, "r", e)
			if err != nil || added != want {
				t.Fatalf("append #%d: added=%v err=%v, want added=%v", i+1, added, err, want)
			}
		}
		if _, err := s.AppendEvent(ctx, "r", fleet.Event{Kind: fleet.KindCheck, At: t0}); err != nil {
			t.Fatal(err)
		}
		evs, err := s.Events(ctx, "r")
		if err != nil || len(evs) != 2 || evs[0].ID != "post:toolu_1" || evs[0].OK == nil || !*evs[0].OK || evs[1].ID == "" {
			t.Fatalf("Events = %+v, %v", evs, err)
		}
		if evs, err := s.Events(ctx, "none"); err != nil || len(evs) != 0 {
			t.Fatalf("Events(none) = %v, %v", evs, err)
		}
	})

	t.Run("authorizations", func(t *testing.T) {
		s := open(t)
		a := fleet.Authorization{ID: "au1", Fleet: "f", Action: "npm   publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
		a.Action = fleet.NormalizeAction(a.Action)
		if err := s.AddAuthorization(ctx, a); err != nil {
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
		if err := s.AddAuthorization(ctx, b); err != nil {
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
	})

	t.Run("an authorization is spent once under contention", func(t *testing.T) {
		s := open(t)
		a := fleet.Authorization{ID: "one", Fleet: "f", Action: "npm publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 1}
		if err := s.AddAuthorization(ctx, a); err != nil {
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
	})

	runHalts(t, open, t0)
	runJournal(t, open, t0)
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
	ctx := context.Background()
	t.Run("journal", func(t *testing.T) {
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
	})

	t.Run("concurrent appends form one chain", func(t *testing.T) {
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
	})
}

func ids(rs []fleet.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
