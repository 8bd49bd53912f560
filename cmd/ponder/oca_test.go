package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

func runPonderOCA(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestOCAInitCreatesThenFindsNothingToDo(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	code, out, errOut := runPonderOCA("oca", "init", "--dsn", dsn)
	want := "created enum cognitive_event_type\ncreated table episodic_memory\ncreated table hypotheses\n" +
		"created table deliberations\ncreated table metacognitive_observations\ncreated table cognitive_events\n"
	if code != 0 || out != want {
		t.Fatalf("first init: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runPonderOCA("oca", "init", "--dsn", dsn)
	if code != 0 || out != "schema already complete; nothing to do\n" {
		t.Errorf("second init: exit %d %q", code, out)
	}
}

func TestOCAInitRefusesToAlterAndExits3(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE TABLE cognitive_events (id bigserial PRIMARY KEY, payload jsonb)`); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runPonderOCA("oca", "init", "--dsn", dsn)
	for _, col := range []string{"cognitive_events.timestamp", "cognitive_events.event_type", "cognitive_events.source_layer"} {
		if !strings.Contains(errOut, col) {
			t.Errorf("stderr does not name %s: %s", col, errOut)
		}
	}
	if code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
}

// Usage mistakes exit 2 (the shared exit-code table; 1 before it).
func TestOCAQueriesUsageAndUnreachable(t *testing.T) {
	t.Chdir(t.TempDir()) // no .ponder/current here
	if code, _, errOut := runPonderOCA("oca", "ledger", "--dsn", "postgres://x@127.0.0.1:1/none"); code != 2 || !strings.Contains(errOut, "--slug") {
		t.Errorf("ledger without a slug: exit %d %s", code, errOut)
	}
	if code, _, errOut := runPonderOCA("oca", "prior"); code != 2 || !strings.Contains(errOut, "--subject") {
		t.Errorf("prior without a subject: exit %d %s", code, errOut)
	}
	code, _, errOut := runPonderOCA("oca", "ledger", "--slug", "s", "--dsn", "postgres://x:pw@127.0.0.1:1/none")
	if code != 3 || strings.Contains(errOut, "pw@") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable: exit %d %q", code, errOut)
	}
}

// The ledger subcommand prints the OCA bridge's prediction ledger for rows written
// through the store: forecasts from pass 2, the last one expired.
func TestOCALedgerAndSessionsSubcommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	ctx := context.Background()
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	se := oca.Session{Slug: "cli-2026-01-01", Subject: "the CLI", Lens: "cli", Passes: 3}
	churn := []float64{0, 0.5, 0.25}
	if _, err := s.RecordStart(ctx, se); err != nil {
		t.Fatal(err)
	}
	for pass := 1; pass <= 3; pass++ {
		m := oca.PassMetrics{Coverage: 1, Voices: 4}
		if pass > 1 {
			m.Churn = &churn[pass-1]
		}
		if _, err := s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: pass, Metrics: m}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Converged: true, Passes: 3}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runPonderOCA("oca", "ledger", "--slug", se.Slug, "--dsn", dsn, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Pass 2 forecast 0.6 × 0.5 = 0.3 for pass 3, scored against 0.25: surprise 0.05 → confirmed.
	// Pass 3 forecast 0.6 × 0.25 = 0.15 for pass 4, expired by decide stop.
	if len(rows) != 2 || rows[0]["forecastMadeInPass"] != 2.0 || rows[0]["aboutPass"] != 3.0 ||
		rows[0]["status"] != "confirmed" || rows[1]["status"] != "expired" || rows[1]["surpriseMagnitude"] != nil {
		t.Errorf("ledger JSON: %s", out)
	}

	code, out, _ = runPonderOCA("oca", "ledger", "--slug", se.Slug, "--dsn", dsn)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "MADE_IN_PASS") || !strings.Contains(lines[2], "expired") {
		t.Errorf("ledger table: exit %d\n%s", code, out)
	}
	code, out, _ = runPonderOCA("oca", "sessions", "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "cli-2026-01-01") {
		t.Errorf("sessions: exit %d\n%s", code, out)
	}
	code, out, _ = runPonderOCA("oca", "prior", "--subject", "the cli", "--dsn", dsn)
	if code != 0 || strings.Count(out, "[cli-2026-01-01]") != 2 {
		t.Errorf("prior: exit %d\n%s", code, out)
	}
}
