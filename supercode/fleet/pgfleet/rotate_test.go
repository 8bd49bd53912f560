package pgfleet

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A database made by the schema before the journal's archive (its tables
// created with that schema's DDL, no archive table, no schema versions)
// is used as it is: its status holds, and the first rotation makes the
// archive table and records the schema's version. The journal rotates
// there as on the local store: the live journal verifies from its
// checkpoint, the archive chains into it, both read together verify from
// seq 1, the halt archived is still witnessed, and a second rotation
// chains on.
func TestRotationOnADatabaseOfTheEarlierSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	earlier := SuperviseComponent
	earlier.Tables = nil
	for _, tb := range SuperviseComponent.Tables {
		if tb.Since == 0 {
			earlier.Tables = append(earlier.Tables, tb)
		}
	}
	if _, err := pgdb.InitDSN(ctx, dsn, Component, earlier); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The earlier schema recorded no versions.
	if _, err := conn.Exec(ctx, `DROP TABLE laserbrain.schema_versions`); err != nil {
		t.Fatal(err)
	}
	tableThere := func() bool {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('laserbrain.journal_archive') IS NOT NULL`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	st := database(dsn).Open(t).(*Store)
	if err := pgdb.Check(ctx, st.pool, Component, SuperviseComponent); err != nil || tableThere() {
		t.Fatalf("the earlier schema's status: %v (archive table there: %v)", err, tableThere())
	}
	add := func(kind string, data any) {
		t.Helper()
		b, _ := json.Marshal(data)
		if _, err := st.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: kind, Text: kind, Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	rotate := func(at int64) {
		t.Helper()
		if ok, err := st.RotateJournal(ctx, "f", at, 1); err != nil || !ok {
			t.Fatalf("RotateJournal(%d): %v, %v", at, ok, err)
		}
	}
	check := func(archived int64) {
		t.Helper()
		c, err := fleet.CheckJournal(ctx, st, "f")
		if err != nil || c.Problem != nil {
			t.Fatalf("CheckJournal: %v, %v", c.Problem, err)
		}
		n, p, err := fleet.CheckArchive(ctx, st, "f", c.Records)
		if err != nil || p != nil || n != archived {
			t.Fatalf("CheckArchive: %d archived, %v, %v", n, p, err)
		}
		all, missing, err := fleet.ReadJournal(ctx, st, "f")
		if err != nil || missing != nil {
			t.Fatal(err, missing)
		}
		if _, p := fleet.VerifyJournal(all, c.Head); p != nil || int64(len(all)) != c.Head.Records || all[0].Seq != 1 {
			t.Fatalf("archive and journal read as one: %d records, %v", len(all), p)
		}
	}
	add(fleet.JournalHalt, fleet.Halt{ID: "h1", Fleet: "f", Agent: "a:r1", Reason: "yields"})
	for i := range 3 {
		add(fleet.JournalRound, map[string]int{"n": i})
	}
	add(fleet.JournalCheckpoint, map[string]int{"round": 3})
	add(fleet.JournalRound, map[string]int{"n": 4})
	rotate(5)
	var version int
	if err := conn.QueryRow(ctx, `SELECT version FROM laserbrain.schema_versions WHERE component = 'supervise'`).Scan(&version); err != nil || !tableThere() || version != 1 {
		t.Fatalf("after the first rotation: the archive table there: %v, the schema version %d (%v)", tableThere(), version, err)
	}
	live, err := st.JournalRecords(ctx, "f", 0)
	if err != nil || len(live) != 3 || live[0].Seq != 5 || live[2].Kind != fleet.JournalRotate {
		t.Fatalf("the live journal after the rotation: %d records from %d, %v", len(live), fleet.JournalFrom(live), err)
	}
	check(4)
	if w, err := fleet.ReadWitness(ctx, st, "f", nil); err != nil || w.Problem != nil || len(w.Halts) != 1 || w.Halts[0].ID != "h1" {
		t.Fatalf("the halt archived, read from the live journal: %+v, %v", w, err)
	}
	add(fleet.JournalRelease, fleet.Halt{ID: "h1", Fleet: "f", Agent: "a:r1"})
	add(fleet.JournalCheckpoint, map[string]int{"round": 5})
	add(fleet.JournalRound, map[string]int{"n": 6})
	rotate(9)
	check(8)
	if w, err := fleet.ReadWitness(ctx, st, "f", nil); err != nil || !w.Lifts("h1") || len(w.Halts) != 0 {
		t.Fatalf("across two rotations, after the release: %+v, %v", w, err)
	}
	// Below the size asked for, nothing rotates.
	add(fleet.JournalCheckpoint, map[string]int{"round": 7})
	if ok, err := st.RotateJournal(ctx, "f", 12, 1<<20); err != nil || ok {
		t.Fatalf("a rotation of a few hundred bytes asked for 1 MB: %v, %v", ok, err)
	}
}
