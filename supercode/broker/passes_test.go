package broker

import (
	"testing"
	"time"
)

func TestPassSpentOnceForItsCommandOnly(t *testing.T) {
	clock := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	g := &Passes{Now: func() time.Time { return clock }}
	push := "git push origin main"
	issue := func() string {
		t.Helper()
		p, err := g.Issue("run-1", push, "asked in Claude Code")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := issue()
	if q := issue(); q == p || len(p) != 32 {
		t.Fatalf("passes %q and %q: want two different 128-bit values", p, q)
	}
	if why, ok := g.Spend(p, "run-1", push); !ok || why != "asked in Claude Code" {
		t.Fatalf("the first use: ok=%v why=%q", ok, why)
	}
	if _, ok := g.Spend(p, "run-1", push); ok {
		t.Fatal("a pass spent once let the same command through again")
	}
	for _, tc := range []struct{ name, run, action string }{
		{"another command", "run-1", "git push --force origin main"},
		{"another run", "run-2", push},
	} {
		p := issue()
		if _, ok := g.Spend(p, tc.run, tc.action); ok {
			t.Errorf("%s: the pass let it through", tc.name)
		}
		if _, ok := g.Spend(p, "run-1", push); ok {
			t.Errorf("%s: a pass used wrongly was still alive for its own command", tc.name)
		}
	}
	p = issue()
	clock = clock.Add(PassTTL + time.Second)
	if _, ok := g.Spend(p, "run-1", push); ok {
		t.Fatal("a pass past PassTTL let its command through")
	}
	if _, ok := g.Spend("not-a-pass", "run-1", push); ok {
		t.Fatal("a pass never issued let its command through")
	}
}
