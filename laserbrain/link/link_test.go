package link

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// TestMain lets the test binary double as a writer process.
func TestMain(m *testing.M) {
	if path := os.Getenv("LINK_TEST_WRITER"); path != "" {
		os.Exit(writerProcess(path))
	}
	os.Exit(m.Run())
}

// writerProcess appends records w-N for its own writer name, with texts of
// several sizes (some far beyond PIPE_BUF), and payloads.
func writerProcess(path string) int {
	name := os.Getenv("LINK_TEST_NAME")
	n, _ := strconv.Atoi(os.Getenv("LINK_TEST_COUNT"))
	l := &Link{Path: path, Agent: name}
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("%s-%d ", name, i) + strings.Repeat(name[:1], (i*37)%9000)
		if _, err := l.Write(Entry{Text: text, Kind: "load", Payload: map[string]any{"i": i, "w": name}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// 8 processes × 500 records, appended at once: nothing lost, nothing torn,
// every record intact and in its writer's order.
func TestConcurrentWritersLoseAndTearNothing(t *testing.T) {
	const writers, each = 8, 500
	path := filepath.Join(t.TempDir(), "link.jsonl")
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINK_TEST_WRITER="+path, fmt.Sprintf("LINK_TEST_NAME=%c%d", 'a'+w, w), fmt.Sprintf("LINK_TEST_COUNT=%d", each))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errs[w] = fmt.Errorf("writer %d: %v: %s", w, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	next := map[string]int{}
	for i, line := range lines {
		var rec struct {
			Agent, Text string
			Payload     struct {
				I int
				W string
			}
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is torn: %v: %.80q", i+1, err, line)
		}
		want := fmt.Sprintf("%s-%d ", rec.Agent, next[rec.Agent]) + strings.Repeat(rec.Agent[:1], (next[rec.Agent]*37)%9000)
		if rec.Text != want || rec.Payload.I != next[rec.Agent] || rec.Payload.W != rec.Agent {
			t.Fatalf("line %d: %s record %d out of order or damaged", i+1, rec.Agent, next[rec.Agent])
		}
		next[rec.Agent]++
	}
	recs, err := (&Link{Path: path}).Records()
	if err != nil || len(recs) != writers*each {
		t.Fatalf("Records: %d, %v", len(recs), err)
	}
	v, _ := (&Link{Path: path}).Agents()
	if v.Count != writers {
		t.Fatalf("Agents: %+v", v.Agents)
	}
	for _, a := range v.Agents {
		if v.Wrote[a] != each {
			t.Errorf("%s wrote %d, want %d", a, v.Wrote[a], each)
		}
	}
}

func sp(s string) *string { return &s }

// A file the Python reference wrote (testdata/python-link.md says how it
// was made) reads back record for record, skipping the blank, torn and
// whitespace lines; and each record renders back to its line byte for byte.
func TestPythonWrittenLinkReadsBack(t *testing.T) {
	path := filepath.Join("testdata", "python-link.jsonl")
	l := &Link{Path: path}
	recs, err := l.Records()
	if err != nil {
		t.Fatal(err)
	}
	hub := "https://phronesis.world/api/laserbrain"
	sup := "keep every agent on its own ground"
	want := []Record{
		{TS: "2026-07-27T09:14:03.000Z", Agent: "writer", Hub: hub, Kind: "note", Text: "parser done, handing over the benchmark"},
		{TS: "2026-07-27T09:14:05.000Z", Agent: "builder", Hub: hub, Kind: "handoff", Text: "benchmark the cache — Φ held at 0.00, naïve path first", Goal: sp("benchmark the LRU cache")},
		{TS: "2026-07-27T09:15:00.000Z", Agent: "supercode", Hub: hub, Kind: "supervision", Text: "builder and tester share a ground (overlap 1.00) — suggest builder yields", Goal: sp(sup),
			Payload: json.RawMessage(`{"agents": ["builder", "tester"], "overlap": 1.0, "ground": "write a JSON parser in Python", "keep": "tester", "yield_": "builder", "why": "tester has 0 catch(es) over 3 step(s); builder has 1 over 1"}`)},
		{TS: "2026-07-27T09:15:00.000Z", Agent: "supercode", Hub: hub, Kind: "supervision", Text: "ponder-arch: goal-drift · unfalsified, unrun", Goal: sp(sup),
			Payload: json.RawMessage(`{"agent": "ponder-arch", "steps": 5, "reason": "goal-drift", "phi": 0.68, "drifting": true, "laserscore": "⟨json|pars|write⟩ advancing d4", "catches": ["unfalsified", "unrun"]}`)},
		{TS: "2026-07-27T09:15:01.000Z", Agent: "supercode", Hub: hub, Kind: "supervision", Text: "writer: None · unfalsified", Goal: sp(sup),
			Payload: json.RawMessage(`{"agent": "writer", "steps": 0, "reason": null, "phi": null, "drifting": false, "laserscore": null, "catches": ["unfalsified"]}`)},
		{TS: "2026-07-27T09:16:30.000Z", Agent: "tester", Hub: "http://127.0.0.1:8787/api/laserbrain", Kind: "note", Text: "quote \" backslash \\ line\nbreak\ttab \a bell, emoji 🦀, <html> & 'single'", Goal: sp("")},
		{TS: "2026-07-27T09:17:00.000Z", Agent: "writer", Hub: hub, Kind: "handoff", Text: "tests pass: 12 passed in 0.31s",
			Payload: json.RawMessage(`{"nested": {"list": [1, 2.5, -3e-07, true, null], "empty": {}, "n": 1e+16}}`)},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i := range want {
		g, w := recs[i], want[i]
		if g.TS != w.TS || g.Agent != w.Agent || g.Hub != w.Hub || g.Kind != w.Kind || g.Text != w.Text ||
			(g.Goal == nil) != (w.Goal == nil) || (g.Goal != nil && *g.Goal != *w.Goal) || !bytes.Equal(g.Payload, w.Payload) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	data, _ := os.ReadFile(path)
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		var probe map[string]any
		if json.Unmarshal([]byte(line), &probe) == nil {
			lines = append(lines, line)
		}
	}
	for i, r := range recs {
		got, err := r.MarshalLine()
		if err != nil || string(got) != lines[i] {
			t.Errorf("record %d renders as\n%s\nthe reference wrote\n%s", i, got, lines[i])
		}
	}
	// The readings over it.
	if got, _ := l.Read(Filter{Agent: "supercode", Limit: 2}); len(got) != 2 || got[1].TS != "2026-07-27T09:15:01.000Z" {
		t.Errorf("Read supercode limit 2: %+v", got)
	}
	if got, _ := l.Read(Filter{Kind: "handoff"}); len(got) != 2 || got[0].Agent != "builder" || got[1].Agent != "writer" {
		t.Errorf("Read handoff: %+v", got)
	}
	v, _ := l.Agents()
	if !slices.Equal(v.Agents, []string{"builder", "supercode", "tester", "writer"}) || v.Wrote["supercode"] != 3 || v.LastSeen["writer"] != "2026-07-27T09:17:00.000Z" || v.Count != 4 {
		t.Errorf("Agents: %+v", v)
	}
}

// What Go writes, the reference's reader reads: when python3 is on PATH,
// the reference's read loop (splitlines, strip, json.loads, skip what does
// not parse) runs over a Go-written file, including the characters
// splitlines would break a line at.
func TestGoWrittenLinkReadsInPython(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	path := filepath.Join(t.TempDir(), "link.jsonl")
	l := &Link{Path: path, Agent: "go-agent", Now: func() time.Time { return time.Date(2026, 7, 27, 9, 14, 3, 999e6, time.UTC) }}
	texts := []string{"plain", "Φ=0.00 — naïve", "sep\u2028line\u2029para\u0085nel\x0bvt\x1cfs", "quote \" \\ \n"}
	for _, s := range texts {
		if _, err := l.Write(Entry{Text: s, Goal: sp("g"), Payload: map[string]any{"k": []any{1, "é"}}}); err != nil {
			t.Fatal(err)
		}
	}
	script := `import json,sys
out=[]
for line in open(sys.argv[1],encoding='utf-8').read().splitlines():
    line=line.strip()
    if not line: continue
    try: out.append(json.loads(line))
    except json.JSONDecodeError: continue
print(json.dumps(out))`
	raw, err := exec.Command(py, "-c", script, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("python read %d records, want %d", len(got), len(texts))
	}
	for i, r := range got {
		if r["text"] != texts[i] || r["ts"] != "2026-07-27T09:14:03.000Z" || r["agent"] != "go-agent" || r["hub"] != DefaultHub || r["kind"] != "note" || r["goal"] != "g" {
			t.Errorf("record %d as python read it: %v", i, r)
		}
	}
}

func TestDefaultPathFromEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", home)
	t.Setenv("LASERBRAIN_LINK_LOG", "")
	t.Setenv("LASERBRAIN_TANDEM_LOG", "")
	t.Setenv("LASERBRAIN_AGENT", "")
	t.Setenv("LASERBRAIN_HUB", "")
	cfg := filepath.Join(home, "config")
	check := func(want string) {
		t.Helper()
		l, err := Default()
		if err != nil || l.Path != want {
			t.Errorf("Default path %q, %v; want %q", l.Path, err, want)
		}
	}
	check(filepath.Join(cfg, "link.jsonl"))
	// Only the pre-rename file exists: keep its history.
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "tandem.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check(filepath.Join(cfg, "tandem.jsonl"))
	// Both exist: the new one.
	if err := os.WriteFile(filepath.Join(cfg, "link.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check(filepath.Join(cfg, "link.jsonl"))
	t.Setenv("LASERBRAIN_TANDEM_LOG", "/x/tandem-env.jsonl")
	check("/x/tandem-env.jsonl")
	t.Setenv("LASERBRAIN_LINK_LOG", "/x/link-env.jsonl")
	check("/x/link-env.jsonl")

	l, _ := Default()
	if w := l.Whoami(); w.Agent != "unknown" || w.Hub != DefaultHub || w.Log != "/x/link-env.jsonl" || w.Exists {
		t.Errorf("Whoami: %+v", w)
	}
	t.Setenv("LASERBRAIN_AGENT", "builder")
	t.Setenv("LASERBRAIN_HUB", "http://hub")
	l, _ = Default()
	if w := l.Whoami(); w.Agent != "builder" || w.Hub != "http://hub" {
		t.Errorf("Whoami from env: %+v", w)
	}
}

func TestWriteDefaultsAndErrors(t *testing.T) {
	dir := t.TempDir()
	l := &Link{Path: filepath.Join(dir, "sub", "link.jsonl")}
	rec, err := l.Write(Entry{Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Agent != "unknown" || rec.Kind != "note" || rec.Hub != DefaultHub || !strings.HasSuffix(rec.TS, ".000Z") || len(rec.TS) != 24 {
		t.Errorf("defaults: %+v", rec)
	}
	if _, err := l.Write(Entry{Text: "x", Payload: func() {}}); err == nil || !strings.Contains(err.Error(), "payload") {
		t.Errorf("an unmarshalable payload: %v", err)
	}
	// A link path under a file cannot be written: the error names it, and
	// nothing is half-written.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := &Link{Path: filepath.Join(blocker, "link.jsonl")}
	if _, err := bad.Write(Entry{Text: "x"}); err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("write under a file: %v", err)
	}
	// Foreign and broken lines are skipped, the rest read.
	if err := os.WriteFile(l.Path, []byte("42\n[1]\n{\"agent\": 5}\nnot json\n"+`{"text": "no agent"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write(Entry{Text: "after"}); err != nil {
		t.Fatal(err)
	}
	recs, _ := l.Records()
	if len(recs) != 2 || recs[0].Text != "no agent" || recs[1].Text != "after" {
		t.Errorf("records: %+v", recs)
	}
	if v, _ := l.Agents(); !slices.Equal(v.Agents, []string{"unknown"}) || v.Wrote["unknown"] != 2 {
		t.Errorf("a record without agent counts as unknown: %+v", v)
	}
	if recs, err := (&Link{Path: filepath.Join(dir, "none.jsonl")}).Records(); err != nil || len(recs) != 0 {
		t.Errorf("missing file: %v %v", recs, err)
	}
}
