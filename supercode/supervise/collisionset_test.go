package supervise

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// A checkpoint's collision set reads back as the same pairs, however the
// collisions fall: complete groups, chains, stars and stray pairs.
func TestCollisionSetThroughJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200; n++ {
		set := collisionSet{}
		agents := 2 + rng.IntN(12)
		density := rng.Float64()
		for i := 0; i < agents; i++ {
			for j := i + 1; j < agents; j++ {
				if rng.Float64() < density {
					set[pairKey(fmt.Sprint("a", i), fmt.Sprint("a", j))] = true
				}
			}
		}
		b, err := json.Marshal(set)
		if err != nil {
			t.Fatal(err)
		}
		var back collisionSet
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if len(back) != len(set) {
			t.Fatalf("%d pairs through %s: %d back", len(set), b, len(back))
		}
		for p := range set {
			if !back[p] {
				t.Fatalf("%v lost through %s", p, b)
			}
		}
	}
	// 45 agents on one job are one group, not 990 pairs.
	var group []string
	for i := 0; i < 45; i++ {
		group = append(group, fmt.Sprint("agent:run", i))
	}
	set := collisionSet{}
	for i, a := range group {
		for _, b := range group[i+1:] {
			set[pairKey(a, b)] = true
		}
	}
	b, _ := json.Marshal(set)
	var in collisionSetJSON
	if err := json.Unmarshal(b, &in); err != nil || len(in.Groups) != 1 || len(in.Groups[0]) != 45 || len(in.Pairs) != 0 {
		t.Fatalf("a complete group of 45 written as %d groups and %d pairs (%v)", len(in.Groups), len(in.Pairs), err)
	}
}

// A round journals the collisions that began and ended since the last
// journaled round, not every collision standing: the first round all of
// them, a round in which no agent's ground or state changed none, a round
// after an agent ended those it was in. Folded from the journal — whole,
// or through a checkpoint — they are the collisions the round reported.
func TestRoundJournalsCollisionChanges(t *testing.T) {
	goal := func(a int) string {
		if a < 3 {
			return clusteredGoal(22 * a) // one cluster
		}
		return spreadGoal(a)
	}
	o := buildFleetSteps(t, t.TempDir(), 4, func(a int) int { return 3 + a }, goal)
	rounds := func() []roundData {
		var out []roundData
		for _, r := range journalOf(t, o) {
			if r.Kind == fleet.JournalRound {
				var d roundData
				if err := json.Unmarshal(r.Data, &d); err != nil {
					t.Fatal(err)
				}
				out = append(out, d)
			}
		}
		return out
	}
	same := func(what string, got [][2]string, want ...[2]string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	reported := func(rd *Round) collisionSet {
		set := collisionSet{}
		for _, c := range rd.Collisions {
			set[pairKey(c.Agents[0], c.Agents[1])] = true
		}
		return set
	}
	first := o.once(t)
	a0, a1, a2 := "agent:run00", "agent:run01", "agent:run02"
	if len(first.Collisions) != 3 {
		t.Fatalf("the fixture's first round reports %d collisions, want the 3 of one cluster", len(first.Collisions))
	}
	d := rounds()
	same("the first round began", d[0].Began, [2]string{a0, a1}, [2]string{a0, a2}, [2]string{a1, a2})
	if d[0].Standing != 3 || d[0].Collisions != nil || d[0].Route != nil {
		t.Fatalf("the first round: %+v", d[0])
	}
	o.check(t, 3)
	o.once(t)
	d = rounds()
	if len(d) != 2 || len(d[1].Began)+len(d[1].Ended) != 0 || d[1].Standing != 3 {
		t.Fatalf("a round in which only agent 3 checked journals %+v", d[len(d)-1])
	}
	fl, _ := o.stores(t)
	if _, err := fl.UpdateRun(context.Background(), "run01", func(r *fleet.Run) error { r.Ended = time.Now(); return nil }); err != nil {
		t.Fatal(err)
	}
	last := o.once(t)
	d = rounds()
	same("after agent 1 ended, ended", d[2].Ended, [2]string{a0, a1}, [2]string{a1, a2})
	same("after agent 1 ended, began", d[2].Began)
	if d[2].Standing != 1 || len(last.Collisions) != 1 {
		t.Fatalf("standing %d, reported %d", d[2].Standing, len(last.Collisions))
	}
	want := reported(last)
	whole := fullFold(t, o)
	b, _ := json.Marshal(whole)
	var back resumeState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]collisionSet{"the whole journal": whole.Collisions, "a checkpoint of it": back.Collisions} {
		if len(got) != len(want) || !got[pairKey(a0, a2)] {
			t.Fatalf("%s folds to %v, the round reported %v", what, got, want)
		}
	}
}
