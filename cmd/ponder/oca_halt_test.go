package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// Issue 6: "a database stopped mid-session under auto (engine unaffected,
// log lines written) and under on (exit 3, nothing half-written)", through
// the real binary (the test binary as `ponder`, put on PATH by
// testscript.Main) against a private PostgreSQL that the test halts and
// resumes. Each ponder command is a process of its own, so each probes once.
func TestOCAStoppedMidSession(t *testing.T) {
	bin, err := exec.LookPath("ponder")
	if err != nil {
		t.Fatalf("the ponder stand-in is not on PATH (testscript.Main sets it up): %v", err)
	}
	c := pgtest.StartCluster(t)
	// trust authentication never asks for the password, so it only has to
	// stay out of oca.log.
	dsn := c.NewOCADatabase(t) + " password=s3cret"
	halted := false
	t.Cleanup(func() { // runs before the database is dropped
		if halted {
			if err := c.Resume(); err != nil {
				t.Errorf("resuming the cluster: %v", err)
			}
		}
	})

	auto := newHaltProject(t, bin, dsn)
	on := newHaltProject(t, bin, dsn)

	// ---- with the database up
	// auto: pass 1 judged (no forecast, one no-churn-signal line), pass 2
	// deliberated, its deliberation row open in OCA.
	auto.ok(t, "auto", "start", "halted under auto", "--lens", "auto")
	autoSlug := "auto-2026-08-24"
	auto.pass1(t, "auto", autoSlug)
	auto.ok(t, "auto", "predict", "--slug", autoSlug, "--churn", "0.4")
	auto.ok(t, "auto", voices("deliberate", "--slug", autoSlug)...)
	if s := auto.sessionJSON(t, autoSlug); s.OCA.SessionRef == nil || s.OCA.Deliberations["2"] == 0 {
		t.Fatalf("the live OCA was not used before the halt: session.json oca = %+v", s.OCA)
	}
	logBefore := auto.read(t, autoSlug, "oca.log")
	if n := strings.Count(logBefore, "\n"); n != 1 || !strings.Contains(logBefore, " recordPass SKIP no-churn-signal") {
		t.Fatalf("oca.log before the halt, want pass 1's no-churn-signal line only:\n%s", logBefore)
	}

	// on: four sessions, each stopped just before one of the four writing
	// commands that refuse under on with OCA down: deliberate, judge, decide stop,
	// committed apply.
	const (
		onDelib = "ondelib-2026-08-24"
		onJudge = "onjudge-2026-08-24"
		onStop  = "onstop-2026-08-24"
		onApply = "onapply-2026-08-24"
	)
	for _, slug := range []string{onDelib, onJudge, onStop, onApply} {
		on.ok(t, "on", "start", "halted under on", "--lens", strings.TrimSuffix(slug, "-2026-08-24"))
		on.pass1(t, "on", slug)
		if slug == onDelib {
			continue
		}
		on.ok(t, "on", "predict", "--slug", slug, "--churn", "0.4")
		on.ok(t, "on", voices("deliberate", "--slug", slug)...)
		on.ok(t, "on", "delta", "--slug", slug, "pass2.jsonl")
		if slug == onJudge {
			continue
		}
		on.ok(t, "on", "judge", "--slug", slug)
		if slug == onApply {
			on.ok(t, "on", "decide", "stop", "--slug", slug)
		}
	}

	if err := c.Halt(); err != nil {
		t.Fatalf("halting the cluster: %v", err)
	}
	halted = true

	t.Run("auto", func(t *testing.T) {
		// The twin is the same project at the moment of the halt, carried on
		// with PONDER_OCA=off: what an OCA-less run leaves behind.
		twin := auto.clone(t)
		steps := [][]string{
			{"delta", "pass2.jsonl"},
			{"judge"},
			{"decide", "continue"},
			{"predict", "--churn", "0.1"},
			voices("deliberate"),
			{"judge"},
			{"decide", "stop"},
			{"apply"},
			{"status"},
			{"report"},
		}
		for _, step := range steps {
			args := append(append([]string{}, step...), "--json")
			got := auto.run(t, "auto", args...)
			want := twin.run(t, "off", args...)
			if got.code != 0 || want.code != 0 {
				t.Fatalf("ponder %s: exit %d under auto with OCA down, %d under off\n%s%s", strings.Join(step, " "), got.code, want.code, got.stderr, want.stderr)
			}
			// auto with OCA down is silent apart from oca.log.
			if got.stderr != want.stderr {
				t.Errorf("ponder %s: stderr under auto with OCA down %q, under off %q", step[0], got.stderr, want.stderr)
			}
			// Paths (apply's planPath) name each run's own directory.
			gotOut := withoutOCA(t, strings.ReplaceAll(got.stdout, auto.dir, "$WORK"))
			wantOut := withoutOCA(t, strings.ReplaceAll(want.stdout, twin.dir, "$WORK"))
			if !reflect.DeepEqual(gotOut, wantOut) {
				t.Errorf("ponder %s --json: apart from .oca, under auto with OCA down:\n%s\nunder off:\n%s", strings.Join(step, " "), got.stdout, want.stdout)
			}
			if step[0] == "judge" {
				// The bridge did nothing: no episode, no forecast, no deliberation.
				var j struct{ OCA map[string]any }
				_ = json.Unmarshal([]byte(got.stdout), &j)
				wantOCA := map[string]any{"pass": nil, "deliberationId": nil, "resolved": nil, "fallbackInsert": false, "observations": nil}
				if !reflect.DeepEqual(j.OCA, wantOCA) {
					t.Errorf("judge --json .oca under auto with OCA down = %v, want %v", j.OCA, wantOCA)
				}
			}
		}

		// The local files are exactly the OCA-less run's: every file of
		// .ponder byte for byte, except oca.log and judge.json's .oca member
		// (null under off; the bridge's null results under auto).
		gotTree, wantTree := auto.tree(t), twin.tree(t)
		logPath := autoSlug + "/oca.log"
		for _, p := range unionKeys(gotTree, wantTree) {
			g, gok := gotTree[p]
			w, wok := wantTree[p]
			switch {
			case p == logPath:
			case !gok || !wok:
				t.Errorf(".ponder/%s exists in only one of the runs (auto with OCA down: %v, off: %v)", p, gok, wok)
			case strings.HasSuffix(p, "/judge.json"):
				if !reflect.DeepEqual(withoutOCA(t, g), withoutOCA(t, w)) {
					t.Errorf(".ponder/%s differs apart from .oca:\n%s\n---- off:\n%s", p, g, w)
				}
			case g != w:
				t.Errorf(".ponder/%s differs:\n%s\n---- off:\n%s", p, g, w)
			}
		}
		var st struct{ Status string }
		if err := json.Unmarshal([]byte(gotTree[autoSlug+"/session.json"]), &st); err != nil || st.Status != "applied" {
			t.Errorf("session status %q (%v), want applied", st.Status, err)
		}
		if wantTree[logPath] != logBefore {
			t.Errorf("off wrote to oca.log:\n%s", wantTree[logPath])
		}

		// oca.log gained, per process, the probe's DISABLED verdict and then
		// one SKIP per bridge call: the probe fails at
		// each process's first call, so there is nothing to FAIL. delta,
		// decide continue, predict, status and report call nothing.
		log := gotTree[logPath]
		if !strings.HasPrefix(log, logBefore) {
			t.Fatalf("oca.log lost its earlier lines:\n%s", log)
		}
		want := []string{
			// judge, pass 2: its deliberation row was opened before the halt
			"probe DISABLED", "openObservations SKIP", "recordPass SKIP", "resolveDeliberation SKIP",
			// deliberate, pass 3
			"probe DISABLED", "recordDeliberation SKIP",
			// judge, pass 3: no open row, so the fallback insert is what is skipped
			"probe DISABLED", "openObservations SKIP", "recordPass SKIP", "recordDeliberation SKIP",
			// decide stop; apply
			"probe DISABLED", "recordConverged SKIP",
			"probe DISABLED", "recordApply SKIP",
		}
		checkLogLines(t, strings.TrimPrefix(log, logBefore), want, "auto", dsn)
	})

	t.Run("on", func(t *testing.T) {
		// start refuses before creating anything, and says so.
		before := on.tree(t)
		r := on.run(t, "on", "start", "too late", "--lens", "late")
		if r.code != 3 || !strings.Contains(r.stderr, "no session was created") {
			t.Errorf("start with OCA down under on: exit %d, stderr %q; want 3, no session was created", r.code, r.stderr)
		}
		diffTrees(t, "start", before, on.tree(t), "")

		// Commands that write no OCA row keep working, and call nothing.
		on.local(t, "status", "--slug", onDelib)
		on.local(t, "report", "--slug", onDelib)
		on.local(t, "list")
		on.local(t, "predict", "--slug", onDelib, "--churn", "0.3")
		on.local(t, "delta", "--slug", onJudge, "pass2b.jsonl")
		on.local(t, "apply", "--dry-run", "--slug", onApply)

		// Each writing command exits 3 and leaves .ponder byte for byte as it
		// was, but for the one FATAL line its probe adds to the session's
		// oca.log.
		on.refused(t, onDelib, voices("deliberate")...)
		on.refused(t, onDelib, "deliberate", "--skip")
		on.refused(t, onJudge, "judge")
		on.refused(t, onStop, "decide", "stop")
		on.refused(t, onApply, "apply")
		// metacognize writes an OCA row too: every row or exit 3.
		on.refused(t, onDelib, "metacognize", "--type", "thrash", "--description", "flips")
		// decide continue is local: the refused stop did not block it.
		on.local(t, "decide", "continue", "--slug", onStop)
	})

	if err := c.Resume(); err != nil {
		t.Fatalf("resuming the cluster: %v", err)
	}
	halted = false

	t.Run("on resumed", func(t *testing.T) {
		logs := map[string]string{}
		for _, slug := range []string{onDelib, onJudge, onStop, onApply} {
			logs[slug] = on.read(t, slug, "oca.log")
		}
		// Every refused command now goes through, and each session finishes.
		if r := on.okJSON(t, voices("deliberate", "--slug", onDelib)...); r["oca"] == nil {
			t.Errorf("deliberate after the resume wrote no OCA row: %v", r)
		}
		on.ok(t, "on", "delta", "--slug", onDelib, "pass2.jsonl")
		on.judge(t, onDelib, "nothing-pending", "opened")
		on.judge(t, onJudge, "nothing-pending", "opened")
		on.ok(t, "on", "predict", "--slug", onStop, "--churn", "0.2")
		on.ok(t, "on", voices("deliberate", "--slug", onStop)...)
		on.judge(t, onStop, "closed", "opened") // closes the forecast pass 2 made before the halt
		for _, slug := range []string{onDelib, onJudge, onStop} {
			r := on.okJSON(t, "decide", "stop", "--slug", slug)
			if o, _ := r["oca"].(map[string]any); o == nil || o["expiredHypotheses"] != 1.0 {
				t.Errorf("decide stop %s: oca = %v, want one expired forecast", slug, r["oca"])
			}
		}
		for _, slug := range []string{onDelib, onJudge, onStop, onApply} {
			if r := on.okJSON(t, "apply", "--slug", slug); r["oca"] == nil {
				t.Errorf("apply %s after the resume wrote no OCA row", slug)
			}
			// A clean run writes nothing to oca.log.
			if got := on.read(t, slug, "oca.log"); got != logs[slug] {
				t.Errorf("%s: oca.log grew after the resume:\n%s", slug, strings.TrimPrefix(got, logs[slug]))
			}
		}

		// Nothing was lost and nothing doubled: every session's episodes
		// and one resolved deliberation row per pass.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		wantEpisodes := map[string]string{
			onDelib:           "ponder_start ponder_pass ponder_pass ponder_stopped ponder_applied",
			onJudge:           "ponder_start ponder_pass ponder_pass ponder_stopped ponder_applied",
			onStop:            "ponder_start ponder_pass ponder_pass ponder_pass ponder_stopped ponder_applied",
			onApply:           "ponder_start ponder_pass ponder_pass ponder_stopped ponder_applied",
			"late-2026-08-24": "",
		}
		for slug, want := range wantEpisodes {
			var got []string
			rows, err := conn.Query(ctx, `SELECT event_type FROM episodic_memory WHERE starts_with(content, '[' || $1::text || '] ') ORDER BY id`, slug)
			if err == nil {
				got, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%s episodes: %v, want [%s]", slug, got, want)
			}
			passes := strings.Count(want, "ponder_pass")
			var rowsN, resolved int
			err = conn.QueryRow(ctx, `SELECT count(*), count(resolution) FROM deliberations WHERE starts_with(decision, 'ponder ' || $1::text || ' pass ')`, slug).Scan(&rowsN, &resolved)
			if err != nil {
				t.Fatal(err)
			}
			if rowsN != passes || resolved != passes {
				t.Errorf("%s deliberations: %d rows, %d resolved; want %d of each", slug, rowsN, resolved, passes)
			}
		}
	})
}

// haltProject is a working directory with two source files and the delta
// batches the test feeds ponder.
type haltProject struct {
	bin, dir, dsn string
}

func newHaltProject(t *testing.T, bin, dsn string) *haltProject {
	t.Helper()
	p := &haltProject{bin: bin, dir: t.TempDir(), dsn: dsn}
	files := map[string]string{
		"src/a.go": "a\n",
		"src/b.go": "b\n",
		// pass 1: a finding on each unit, so coverage is 2/2 from pass 1.
		"pass1.jsonl": `{"voice":"dreamer","op":"add","unitId":"u0001","severity":"should","confidence":0.8,"text":"a is unclear"}
{"voice":"dreamer","op":"add","unitId":"u0002","severity":"should","confidence":0.8,"text":"b is unclear"}
`,
		"pass2.jsonl":  `{"voice":"empath","op":"change","findingId":"f0001","confidence":0.9}` + "\n",
		"pass2b.jsonl": `{"voice":"builder","op":"edit","findingId":"f0002","text":"b hides its error"}` + "\n",
		"home/.keep":   "",
	}
	for name, data := range files {
		path := filepath.Join(p.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

type haltResult struct {
	code           int
	stdout, stderr string
}

// run runs ponder in the project under PONDER_OCA=mode.
func (p *haltProject) run(t *testing.T, mode string, args ...string) haltResult {
	t.Helper()
	// Generous: a loaded machine may be slow; the probe budgets are 2 s and 5 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Dir = p.dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PONDER_") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PONDER_OCA="+mode, "PONDER_OCA_DSN="+p.dsn,
		"PONDER_TEST_NOW=2026-08-24T15:00:00Z", "HOME="+filepath.Join(p.dir, "home"))
	out, errOut, code := proctest.Run(t, cmd)
	return haltResult{code: code, stdout: out, stderr: errOut}
}

// ok runs a command that must succeed.
func (p *haltProject) ok(t *testing.T, mode string, args ...string) haltResult {
	t.Helper()
	r := p.run(t, mode, args...)
	if r.code != 0 {
		t.Fatalf("ponder %s (PONDER_OCA=%s): exit %d\n%s%s", strings.Join(args, " "), mode, r.code, r.stdout, r.stderr)
	}
	return r
}

// okJSON runs a command under on that must succeed, and decodes its --json.
func (p *haltProject) okJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := p.ok(t, "on", append(args, "--json")...)
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("ponder %s --json: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return v
}

// pass1 seeds the units and runs pass 1 through decide continue.
func (p *haltProject) pass1(t *testing.T, mode, slug string) {
	t.Helper()
	p.ok(t, mode, "units", "--slug", slug, "--scan", "src")
	p.ok(t, mode, voices("deliberate", "--slug", slug)...)
	p.ok(t, mode, "delta", "--slug", slug, "pass1.jsonl")
	p.ok(t, mode, "judge", "--slug", slug)
	p.ok(t, mode, "decide", "continue", "--slug", slug)
}

// judge runs judge under on and checks the hypothesis lifecycle's notes.
func (p *haltProject) judge(t *testing.T, slug, closeNote, openNote string) {
	t.Helper()
	r := p.okJSON(t, "judge", "--slug", slug)
	o, _ := r["oca"].(map[string]any)
	pass, _ := o["pass"].(map[string]any)
	if pass == nil || pass["closeNote"] != closeNote || pass["openNote"] != openNote {
		t.Errorf("judge %s: oca.pass = %v, want closeNote %s, openNote %s", slug, o["pass"], closeNote, openNote)
	}
}

// local runs, under on with OCA down, a command that writes no OCA row: it
// succeeds and adds no line to any oca.log (it never probes).
func (p *haltProject) local(t *testing.T, args ...string) {
	t.Helper()
	before := p.tree(t)
	p.ok(t, "on", args...)
	after := p.tree(t)
	for path, data := range after {
		if strings.HasSuffix(path, "/oca.log") && data != before[path] {
			t.Errorf("ponder %s wrote to %s: %q", strings.Join(args, " "), path, strings.TrimPrefix(data, before[path]))
		}
	}
}

// refused runs a writing command under on with OCA down: exit 3, and the
// whole of .ponder unchanged but for one FATAL line in the session's log.
func (p *haltProject) refused(t *testing.T, slug string, args ...string) {
	t.Helper()
	name := strings.Join(args, " ")
	before := p.tree(t)
	r := p.run(t, "on", append(args, "--slug", slug)...)
	if r.code != 3 {
		t.Errorf("ponder %s with OCA down under on: exit %d, want 3\n%s", name, r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "OCA is required (PONDER_OCA=on) but unusable") || !strings.Contains(r.stderr, "nothing was changed") {
		t.Errorf("ponder %s: stderr does not say OCA is required and nothing was changed: %q", name, r.stderr)
	}
	after := p.tree(t)
	logPath := slug + "/oca.log"
	diffTrees(t, name, before, after, logPath)
	added, ok := strings.CutPrefix(after[logPath], before[logPath])
	if !ok {
		t.Fatalf("ponder %s rewrote oca.log:\n%s", name, after[logPath])
	}
	checkLogLines(t, added, []string{"probe FATAL"}, "on", p.dsn)
}

// voices is a deliberate command line with all four voices speaking.
func voices(args ...string) []string {
	return append(args, "--skeptic", "s", "--builder", "b", "--dreamer", "d", "--empath", "e")
}

func (p *haltProject) read(t *testing.T, slug, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".ponder", slug, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

type sessionOCA struct {
	OCA struct {
		SessionRef    *string          `json:"sessionRef"`
		Deliberations map[string]int64 `json:"deliberations"`
	} `json:"oca"`
}

func (p *haltProject) sessionJSON(t *testing.T, slug string) sessionOCA {
	t.Helper()
	var s sessionOCA
	if err := json.Unmarshal([]byte(p.read(t, slug, "session.json")), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// tree reads every file under .ponder, by slash path relative to it.
func (p *haltProject) tree(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join(p.dir, ".ponder")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// clone copies the whole project into a new directory.
func (p *haltProject) clone(t *testing.T) *haltProject {
	t.Helper()
	q := &haltProject{bin: p.bin, dir: t.TempDir(), dsn: p.dsn}
	err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.dir, path)
		target := filepath.Join(q.dir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// diffTrees reports every file added, removed or changed, except skip.
func diffTrees(t *testing.T, what string, before, after map[string]string, skip string) {
	t.Helper()
	for _, p := range unionKeys(before, after) {
		b, bok := before[p]
		a, aok := after[p]
		switch {
		case p == skip:
		case !bok:
			t.Errorf("ponder %s created .ponder/%s", what, p)
		case !aok:
			t.Errorf("ponder %s removed .ponder/%s", what, p)
		case a != b:
			t.Errorf("ponder %s changed .ponder/%s:\n%s\n---- before:\n%s", what, p, a, b)
		}
	}
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// withoutOCA decodes a JSON object and drops its "oca" member.
func withoutOCA(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	delete(v, "oca")
	return v
}

// ocaLogLine is an oca.log line (SPEC.md §8): <ISO-8601 UTC, ms, Z> <function> <KIND>
// <message> dsn=<masked> [mode=<m>] [ms=<n>].
var ocaLogLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ([A-Za-z]+) (FAIL|SKIP|DISABLED|FATAL) (.+) dsn=(.+) mode=([a-z]+)(?: ms=\d+)?$`)

// checkLogLines checks oca.log lines against "<function> <KIND>" in order:
// each in oca.log's format, saying the database is unreachable, with the
// DSN masked and the mode given.
func checkLogLines(t *testing.T, lines string, want []string, mode, dsn string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(lines, "\n"), "\n")
	if lines == "" {
		got = nil
	}
	var kinds []string
	for _, l := range got {
		m := ocaLogLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("oca.log line not in the spec's format: %q", l)
			continue
		}
		kinds = append(kinds, m[1]+" "+m[2])
		if m[4] != oca.MaskDSN(dsn) || strings.Contains(l, "s3cret") || m[5] != mode {
			t.Errorf("oca.log line: dsn %q, mode %q; want %q, %q: %q", m[4], m[5], oca.MaskDSN(dsn), mode, l)
		}
		if !strings.Contains(m[3], "unreachable: ") {
			t.Errorf("oca.log line does not say OCA is unreachable: %q", l)
		}
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("oca.log lines:\n%s\nwant:\n%s\n(the lines:\n%s)", strings.Join(kinds, "\n"), strings.Join(want, "\n"), lines)
	}
}
