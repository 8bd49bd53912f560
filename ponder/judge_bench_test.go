package ponder

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// -benchsession DIR keeps the generated sessions in DIR (as DIR/.ponder),
// so that the real binary can be timed on them: cd DIR && ponder judge
// --slug bench-100000.
var benchSessionDir = flag.String("benchsession", "", "write the judge benchmark's sessions under this directory and keep them")

// genSession writes a session with units units and records ledger records
// (one tenth units), in pass 4 after deliberate: seeds and grades in pass 1,
// then adds, edits, changes and deletes over four passes in batches of 100,
// with realistic text. It returns the engine and the slug.
func genSession(tb testing.TB, root string, records int) (*Engine, string) {
	tb.Helper()
	units := records / 10
	off := oca.New(oca.Config{Getenv: func(string) string { return "off" }})
	e := New(root, off)
	e.MapLedger = true // as the binary reads
	e.Now = func() time.Time { return time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC) }
	slug := "bench-" + strconv.Itoa(records)
	dir := e.sessionDir(slug)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(records)))
	var all []ledger.Record
	flush := func(batch []ledger.Record, pass int) {
		ledger.Stamp(batch, len(all)+1, pass, e.Now())
		all = append(all, batch...)
	}
	var batch []ledger.Record
	for i := 1; i <= units; i++ {
		batch = append(batch, ledger.Record{Type: ledger.UnitSeed, UnitID: unitID(i), Path: fmt.Sprintf("src/pkg%03d/file%05d.go", i%500, i), Kind: "file"})
	}
	flush(batch, 1)
	batch = nil
	for i := 1; i <= units; i++ {
		batch = append(batch, ledger.Record{Type: ledger.UnitGrade, UnitID: unitID(i)})
		if len(batch) == 100 {
			flush(batch, 1)
			batch = nil
		}
	}
	if batch != nil {
		flush(batch, 1)
	}
	str := func(s string) *string { return &s }
	var live []string
	next := 1
	sevs := ledger.Severities
	for pass := 1; pass <= 4; pass++ {
		target := 2*units + (records-2*units)*pass/4
		for len(all) < target {
			batch = batch[:0:0]
			for j := 0; j < 100 && len(all)+len(batch) < target; j++ {
				u := unitID(1 + rng.IntN(units))
				conf := 0.5 + rng.Float64()/2
				op := ledger.OpAdd
				if pass > 1 && len(live) > 0 {
					op = []string{ledger.OpAdd, ledger.OpEdit, ledger.OpChange, ledger.OpDelete}[rng.IntN(4)]
				}
				var r ledger.Record
				switch op {
				case ledger.OpAdd:
					id := findingID(next)
					next++
					live = append(live, id)
					r = ledger.Record{Type: ledger.Finding, Voice: ledger.Dreamer, Op: op, FindingID: id, UnitID: u,
						Severity: sevs[rng.IntN(3)], Confidence: &conf,
						Text:           str("the handler reads the request body twice and drops the second error"),
						Recommendation: str("read once into a buffer and check the error"),
						Evidence:       str(fmt.Sprintf("src/pkg%03d/file.go:%d", rng.IntN(500), rng.IntN(900)))}
				case ledger.OpEdit:
					r = ledger.Record{Type: ledger.Finding, Voice: ledger.Builder, Op: op, FindingID: live[rng.IntN(len(live))],
						Recommendation: str("wrap with io.LimitReader(r.Body, 1<<20) at the call site")}
				case ledger.OpChange:
					r = ledger.Record{Type: ledger.Finding, Voice: ledger.Empath, Op: op, FindingID: live[rng.IntN(len(live))],
						Severity: sevs[rng.IntN(3)], Confidence: &conf}
				case ledger.OpDelete:
					k := rng.IntN(len(live))
					r = ledger.Record{Type: ledger.Finding, Voice: ledger.Skeptic, Op: op, FindingID: live[k], Reason: str("falsified by the helper")}
					live[k] = live[len(live)-1]
					live = live[:len(live)-1]
				}
				batch = append(batch, r)
			}
			flush(batch, pass)
		}
	}
	createdAt := e.stamp()
	data, head, err := ledger.Seal(all, ledger.Genesis(slug, createdAt))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ledgerFile), data, 0o644); err != nil {
		tb.Fatal(err)
	}
	s := &Session{Slug: slug, Subject: "a large subject", Project: "bench", PassBudget: 8, Mode: modeDeliberate,
		Ledger: &ledger.Anchor{Records: len(all), Head: head},
		Status: StatusActive, CreatedAt: createdAt, CurrentPass: 4, Phase: PhaseDeliberated, ConfidenceFloorValue: DefaultConfidenceFloor,
		History: []PassHistory{{Pass: 1}, {Pass: 2}, {Pass: 3}, {Pass: 4}},
		OCA:     SessionOCA{Deliberations: map[string]int64{}, Hypotheses: map[string]HypothesisNote{}}}
	if err := writeSession(dir, s); err != nil {
		tb.Fatal(err)
	}
	a := "verified"
	d := Deliberation{Pass: 4, Stakes: "medium", Voices: Voices{Skeptic: VoiceArg{Argument: &a}, Builder: VoiceArg{Argument: &a}, Dreamer: VoiceArg{Argument: &a}, Empath: VoiceArg{Argument: &a}}}
	if err := writeJSON(filepath.Join(passDir(dir, 4), deliberationFile), d); err != nil {
		tb.Fatal(err)
	}
	prev := Judgement{Slug: slug, Pass: 3, Metrics: Metrics{Graded: units, Counted: units, Coverage: 1, Voices: 4, Skeptic: true, Churn: new(float64), Novelty: new(float64), Thrash: new(float64)}}
	if err := writeJSON(filepath.Join(passDir(dir, 3), judgeFile), prev); err != nil {
		tb.Fatal(err)
	}
	if len(all) != records {
		tb.Fatalf("generated %d records, want %d", len(all), records)
	}
	return e, slug
}

// BenchmarkJudge times `ponder judge` (the engine's whole command: read and
// check the ledger, replay it, measure, decide, write judge.json and
// session.json) on sessions of 25k, 50k and 100k records with a tenth as
// many units. Linear cost shows as ns/op doubling with the records.
func BenchmarkJudge(b *testing.B) {
	for _, records := range []int{25_000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			root := b.TempDir()
			if *benchSessionDir != "" {
				root = *benchSessionDir
			}
			e, slug := genSession(b, root, records)
			info, err := os.Stat(filepath.Join(e.sessionDir(slug), ledgerFile))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(info.Size())/1e6, "ledger-MB")
			for b.Loop() {
				j, err := e.Judge(slug)
				if err != nil {
					b.Fatal(err)
				}
				if j.Metrics.Counted != records/10 {
					b.Fatalf("counted %d", j.Metrics.Counted)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
		})
	}
}

// TestGeneratedSessionJudges keeps the generator honest in the ordinary
// test run: a small generated session is sound and judges.
func TestGeneratedSessionJudges(t *testing.T) {
	e, slug := genSession(t, t.TempDir(), 2000)
	j, err := e.Judge(slug)
	if err != nil {
		t.Fatal(err)
	}
	if j.Metrics.Counted != 200 || j.Metrics.Graded != 200 || j.Metrics.Churn == nil || j.Metrics.Voices != 4 {
		t.Errorf("judge of the generated session: %+v", j.Metrics)
	}
}

var verified = "verified"

// allVoices is a deliberation in which all four voices argued.
var allVoices = Voices{Skeptic: VoiceArg{Argument: &verified}, Builder: VoiceArg{Argument: &verified},
	Dreamer: VoiceArg{Argument: &verified}, Empath: VoiceArg{Argument: &verified}}

// BenchmarkJudgeLedger isolates the part of judge that grows with the
// ledger — read and check it, replay it, measure the pass — from judge's
// fixed cost of writing two small files with fsync. Linear cost shows as a
// constant ns/record across the sizes.
func BenchmarkJudgeLedger(b *testing.B) {
	for _, records := range []int{25_000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			e, slug := genSession(b, b.TempDir(), records)
			// Locked, as judge reads: through the memory map. Opened without
			// the writer's own first read, so every iteration reads the
			// ledger.
			h, err := e.open(slug, access{cmd: "judge", evenDamaged: true})
			if err != nil {
				b.Fatal(err)
			}
			defer h.release()
			for b.Loop() {
				st, _, err := h.state()
				if err != nil {
					b.Fatal(err)
				}
				m := computeMetrics(st, 4, &allVoices, nil, DefaultConfidenceFloor)
				if m.Counted != records/10 {
					b.Fatalf("counted %d", m.Counted)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
		})
	}
}
