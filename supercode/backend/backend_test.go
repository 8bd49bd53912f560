package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func TestParse(t *testing.T) {
	home := t.TempDir()
	for spec, kind := range map[string]string{"": Local, " local ": Local, "postgres://u@h/db": Postgres, "postgresql:///db?host=/tmp": Postgres} {
		c, err := Parse(spec, home)
		if err != nil || c.Kind != kind || c.Home.Home != home || c.FleetDir != filepath.Join(home, "fleet") {
			t.Errorf("Parse(%q) = %+v, %v", spec, c, err)
		}
	}
	_, err := Parse("mysql://ann:s3cr3t@h/db", home)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "postgres://") {
		t.Errorf("Parse of another database: %v", err)
	}
	t.Setenv(Env, "postgres://ann:s3cr3t@h/db")
	c, err := FromEnv()
	if err != nil || c.String() != "postgres://ann:***@h/db" {
		t.Errorf("FromEnv: %v, shown as %q", err, c)
	}
}

// bothStores opens a backend's run store and its fleet store.
func bothStores(tb testing.TB, b *Backend) (laserbrain.Store, fleet.Store) {
	tb.Helper()
	runs, err := b.Runs()
	if err != nil {
		tb.Fatal(err)
	}
	st, err := b.Fleet()
	if err != nil {
		tb.Fatal(err)
	}
	return runs, st
}

// fill gives a backend runs with histories, contexts, fleet runs with
// sessions and events, and an authorization.
func fill(t *testing.T, b *Backend) {
	t.Helper()
	ctx := context.Background()
	runs, st := bothStores(t, b)
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	goals := []string{"write a JSON parser in Python", "ship the sky billboard", "add an LRU cache"}
	for i, g := range goals {
		id := fmt.Sprintf("run%d", i)
		h, err := runs.OpenRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 3+i; k++ {
			if _, err := h.Run().Step(laserbrain.StepInput{Goal: g, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(8 - k)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Save(ctx); err != nil {
			t.Fatal(err)
		}
		h.Close()
		r := fleet.Run{ID: id, Agent: fmt.Sprintf("a%d", i), Fleet: "f1", Created: t0.Add(time.Duration(i) * time.Second), Task: id, Tasks: 1,
			Sessions: []string{fmt.Sprintf("sess-%d", i)}, Checks: 3 + i}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 4; k++ {
			if _, err := st.AppendEvent(ctx, id, fleet.RunEvent{ID: fmt.Sprintf("tool:%d", k), At: t0.Add(time.Duration(k) * time.Minute), Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "make test"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.AddAuthorization(ctx, fleet.Authorization{ID: "au1", Fleet: "f1", Action: "npm publish", Created: t0, Expires: t0.Add(time.Hour), Uses: 2,
		Used: []fleet.Use{{At: t0.Add(time.Minute), Run: "run0"}}}); err != nil {
		t.Fatal(err)
	}
	// A halt released, one in force, and a short journal.
	for i, agent := range []string{"a0:run0", "a1:run1"} {
		h := fleet.Halt{ID: fmt.Sprintf("h%d", i), Fleet: "f1", Agent: agent, Reason: "shares a ground", By: "supervisor", Round: int64(i + 1), At: t0.Add(time.Duration(i) * time.Minute)}
		if err := st.PutHalt(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.ReleaseHalt(ctx, "f1", "a0:run0", fleet.Release{At: t0.Add(time.Hour), By: "ana", Reason: "merged by hand"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if _, err := st.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f1", Kind: fleet.JournalRound, Round: int64(i), At: fleet.JournalTime(t0.Add(time.Duration(i) * time.Second)),
			Text: fmt.Sprintf("round %d — ünïcode", i), Data: json.RawMessage(`{"phi":0.35}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := runs.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// content is everything a backend holds, as JSON, for comparing two.
func content(t *testing.T, c Config) string {
	t.Helper()
	ctx := context.Background()
	b := New(c)
	defer b.Close()
	runs, st := bothStores(t, b)
	out := map[string]any{}
	ids, err := runs.(laserbrain.Exporter).RunIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		r, err := runs.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out["run "+id] = []any{r, r.Steps()}
	}
	if out["contexts"], err = runs.(laserbrain.Exporter).ContextEntries(ctx); err != nil {
		t.Fatal(err)
	}
	frs, err := st.ListRuns(ctx, fleet.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out["fleet runs"] = frs
	for _, r := range frs {
		if out["events "+r.ID], err = st.Events(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		got, err := st.RunForSession(ctx, r.Sessions[0])
		if err != nil || got.ID != r.ID {
			t.Fatalf("session %s: %v", r.Sessions[0], err)
		}
	}
	if out["authorizations"], err = st.ListAuthorizations(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if out["halts"], err = st.ListHalts(ctx, ""); err != nil {
		t.Fatal(err)
	}
	recs, err := st.JournalRecords(ctx, "f1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	for _, r := range recs {
		raws = append(raws, string(r.Raw))
	}
	out["journal"] = raws
	if out["journal head"], err = st.JournalHead(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.MarshalIndent(out, "", " ")
	return string(b2)
}

// A home copied into the database and back out into another home holds
// the same: runs with their histories, contexts, fleet runs (sessions
// included), events in order, authorizations with their uses. A second
// migration copies nothing and does not count the contexts twice.
func TestMigrateRoundTrip(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	home1, home2 := filepath.Join(t.TempDir(), "h1"), filepath.Join(t.TempDir(), "h2")
	local1, _ := Parse("local", home1)
	local2, _ := Parse("local", home2)
	pg, _ := Parse(dsn, filepath.Join(t.TempDir(), "h3"))
	if _, err := Init(ctx, pg); err != nil {
		t.Fatal(err)
	}
	b := New(local1)
	fill(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	want := content(t, local1)
	rep, err := Migrate(ctx, local1, pg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs.Copied != 3 || rep.FleetRuns.Copied != 3 || rep.Events.Copied != 12 || rep.Authorizations.Copied != 1 || rep.ContextsBefore ||
		rep.Halts.Copied != 2 || rep.Journals.Copied != 1 {
		t.Fatalf("first migration: %+v", rep)
	}
	if got := content(t, pg); got != want {
		t.Fatalf("the database differs from the home:\n%s\nwant\n%s", got, want)
	}
	rep, err = Migrate(ctx, local1, pg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs.Present != 3 || rep.Runs.Copied != 0 || rep.Events.Present != 12 || rep.Authorizations.Present != 1 || !rep.ContextsBefore ||
		rep.Halts.Present != 2 || rep.Journals.Present != 1 {
		t.Fatalf("second migration: %+v", rep)
	}
	if got := content(t, pg); got != want {
		t.Fatalf("a second migration changed the database:\n%s", got)
	}
	if _, err := Migrate(ctx, pg, local2); err != nil {
		t.Fatal(err)
	}
	if got := content(t, local2); got != want {
		t.Fatalf("the home copied back differs:\n%s\nwant\n%s", got, want)
	}
}

// A fleet's link under PostgreSQL is one for every machine (two homes
// here), and a supervisor's Link (what the MCP server's link tools use)
// reaches it through the binary's opener; another fleet's link is apart.
func TestLinkAcrossHomes(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	c1, _ := Parse(dsn, filepath.Join(t.TempDir(), "h1"))
	c2, _ := Parse(dsn, filepath.Join(t.TempDir(), "h2"))
	if _, err := Init(ctx, c1); err != nil {
		t.Fatal(err)
	}
	b1, b2 := New(c1), New(c2)
	defer b1.Close()
	defer b2.Close()
	l1, err := b1.Link("f")
	if err != nil {
		t.Fatal(err)
	}
	l1.Agent = "a1"
	if _, err := l1.Write(link.Entry{Text: "I take the parser"}); err != nil {
		t.Fatal(err)
	}
	sup := &agentrun.Tracker{Stores: func() (agentrun.Stores, error) { return New(c2), nil }}
	defer sup.Close()
	l2, err := sup.Link("f")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := l2.Records()
	if err != nil || len(recs) != 1 || recs[0].Agent != "a1" || recs[0].Text != "I take the parser" {
		t.Fatalf("the other home reads %+v, %v", recs, err)
	}
	other, _ := b2.Link("g")
	if recs, _ := other.Records(); len(recs) != 0 {
		t.Fatalf("fleet g's link holds %d records of fleet f", len(recs))
	}
}

// TestRemoteOnceConnected: a PostgreSQL backend says it may wait on close
// once it holds connections (a hook then closes it with a deadline); a
// local one never does.
func TestRemoteOnceConnected(t *testing.T) {
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	pg, _ := Parse(dsn, filepath.Join(t.TempDir(), "h"))
	if _, err := Init(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	local, _ := Parse("local", filepath.Join(t.TempDir(), "l"))
	for _, c := range []struct {
		cfg  Config
		want bool
	}{{pg, true}, {local, false}} {
		b := New(c.cfg)
		if b.Remote() {
			t.Errorf("%v: remote before anything was opened", c.cfg.Kind)
		}
		if _, err := b.Runs(); err != nil {
			t.Fatal(err)
		}
		if got := b.Remote(); got != c.want {
			t.Errorf("%v: Remote %v once the run store is open, want %v", c.cfg.Kind, got, c.want)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if b.Remote() {
			t.Errorf("%v: remote after Close", c.cfg.Kind)
		}
	}
}
