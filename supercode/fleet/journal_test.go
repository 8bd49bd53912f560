package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/fleettest"
)

// TestMain lets the test binary act as a supervisor appending to a journal,
// for TestJournalConcurrentProcesses, and as a run's writer for
// TestRunUpdatesSurviveAKilledWriter.
func TestMain(m *testing.M) {
	fleettest.Child(func() (fleet.Store, error) { return fleet.OpenLocal(os.Getenv("LASERKIT_FLEET_TEST_DIR")) })
	if dir := os.Getenv("FLEET_TEST_UPDATE_DIR"); dir != "" {
		os.Exit(updateChild(dir))
	}
	if dir := os.Getenv("FLEET_TEST_APPEND_DIR"); dir != "" {
		os.Exit(appendChild(dir, os.Getenv("FLEET_TEST_APPEND_NAME")))
	}
	os.Exit(m.Run())
}

func appendChild(dir, name string) int {
	s, err := fleet.OpenLocal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; i < 40; i++ {
		if _, err := s.AppendJournal(context.Background(), fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Agent: name, Round: int64(i)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestJournalConcurrentProcesses: four supervisor processes append to one
// fleet's journal at once; the records form one chain, none lost. Without
// the journal's lock two appenders read the same head and fork the chain
// (checked by hand: with the lock taken out this test fails at once).
func TestJournalConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs = 4
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "FLEET_TEST_APPEND_DIR="+dir, fmt.Sprintf("FLEET_TEST_APPEND_NAME=p%d", p))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[p] = fmt.Errorf("child %d: %v\n%s", p, err, out)
			}
		}(p)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, _ := fleet.OpenLocal(dir)
	recs, err := s.JournalRecords(context.Background(), "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.JournalHead(context.Background(), "f")
	if len(recs) != procs*40 || head.Records != procs*40 {
		t.Fatalf("%d records, head %d; want %d", len(recs), head.Records, procs*40)
	}
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		t.Fatalf("concurrent processes forked the chain: %v", p)
	}
	per := map[string]int{}
	for _, r := range recs {
		per[r.Agent]++
	}
	for p := 0; p < procs; p++ {
		if per[fmt.Sprintf("p%d", p)] != 40 {
			t.Fatalf("records per process = %v", per)
		}
	}
}

// journalFile writes n records and returns the store, the file and its lines.
func journalFile(t *testing.T, n int) (*fleet.Local, string, [][]byte) {
	t.Helper()
	dir := t.TempDir()
	s, err := fleet.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		_, err := s.AppendJournal(context.Background(), fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Round: int64(i),
			At: fleet.JournalTime(t0.Add(time.Duration(i) * time.Second)), Text: fmt.Sprintf("round %d", i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "journal", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("journal files: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	return s, files[0], lines
}

func verifyFile(t *testing.T, s *fleet.Local) (int, *fleet.JournalProblem) {
	t.Helper()
	recs, err := s.JournalRecords(context.Background(), "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	head, err := s.JournalHead(context.Background(), "f")
	if err != nil {
		t.Fatal(err)
	}
	return fleet.VerifyJournal(recs, head)
}

// rehash rewrites a record's hash after a change, as a forger who knows the
// format would.
func rehash(t *testing.T, line []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	delete(m, "hash")
	body, _ := json.Marshal(m)
	h, err := fleet.JournalHash(m["prev"].(string), body)
	if err != nil {
		t.Fatal(err)
	}
	m["hash"] = h
	out, _ := json.Marshal(m)
	return out
}

// TestVerifyJournalTamper: an honest journal verifies; each kind of tamper
// is named with the first bad record.
func TestVerifyJournalTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, lines [][]byte) [][]byte
		index  int
		seq    int64
		kind   string
	}{
		{"honest", func(t *testing.T, l [][]byte) [][]byte { return l }, 0, 0, ""},
		{"edit a word", func(t *testing.T, l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte("round 3"), []byte("round 9"), 1)
			return l
		}, 3, 3, fleet.TamperEdited},
		{"edit and rewrite the hash", func(t *testing.T, l [][]byte) [][]byte {
			l[2] = rehash(t, l[2], func(m map[string]any) { m["text"] = "nothing happened" })
			return l
		}, 3, 3, fleet.TamperEdited},
		{"add a key", func(t *testing.T, l [][]byte) [][]byte {
			l[1] = bytes.Replace(l[1], []byte(`{"seq"`), []byte(`{"forged":true,"seq"`), 1)
			return l
		}, 2, 2, fleet.TamperEdited},
		{"delete one in the middle", func(t *testing.T, l [][]byte) [][]byte { return append(l[:2:2], l[3:]...) }, 3, 3, fleet.TamperDeleted},
		{"delete the first", func(t *testing.T, l [][]byte) [][]byte { return l[1:] }, 1, 1, fleet.TamperDeleted},
		{"delete the last", func(t *testing.T, l [][]byte) [][]byte { return l[:len(l)-1] }, 5, 5, fleet.TamperDeleted},
		{"swap two", func(t *testing.T, l [][]byte) [][]byte { l[2], l[3] = l[3], l[2]; return l }, 3, 4, fleet.TamperReordered},
		{"copy one", func(t *testing.T, l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{l[1]}, l[2:]...)...)
		}, 3, 2, fleet.TamperInserted},
		{"not JSON", func(t *testing.T, l [][]byte) [][]byte { l[3] = []byte("oops"); return l }, 4, 4, fleet.TamperCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, path, lines := journalFile(t, 5)
			lines = c.tamper(t, lines)
			if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			_, p := verifyFile(t, s)
			if c.kind == "" {
				if p != nil {
					t.Fatalf("honest journal: %v", p)
				}
				return
			}
			if p == nil || p.Kind != c.kind || p.Index != c.index || p.Seq != c.seq {
				t.Fatalf("got %v; want record %d (seq %d) %s", p, c.index, c.seq, c.kind)
			}
		})
	}
}

// TestJournalUnacknowledgedTail: records a crashed writer appended without
// moving the head verify (they chain) and are cut, and kept aside, by the
// next append.
func TestJournalUnacknowledgedTail(t *testing.T) {
	s, path, _ := journalFile(t, 3)
	ctx := context.Background()
	headBefore, _ := s.JournalHead(ctx, "f")
	// A fourth record chained after the third, written by hand as a writer
	// that died before moving the head leaves it.
	rec, err := fleet.SealJournal(fleet.JournalRecord{Seq: 4, At: fleet.JournalTime(time.Now()), Fleet: "f", Kind: fleet.JournalRound}, headBefore.Hash)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.Write(append(rec.Raw, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n, p := verifyFile(t, s); p != nil || n != 1 {
		t.Fatalf("verify with an unacknowledged record = %d, %v", n, p)
	}
	got, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalStart})
	if err != nil || got.Seq != 4 || got.Prev != headBefore.Hash {
		t.Fatalf("append after a crash = %+v, %v", got, err)
	}
	if n, p := verifyFile(t, s); p != nil || n != 0 {
		t.Fatalf("verify after = %d, %v", n, p)
	}
	torn, _ := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + ".torn-*.jsonl")
	if len(torn) != 1 {
		t.Fatalf("the cut tail was not kept: %v", torn)
	}
	// A journal cut shorter than its head is refused, not appended to.
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalStart}); err == nil || !strings.Contains(err.Error(), "was cut") {
		t.Fatalf("append to a cut journal: %v", err)
	}
}

// TestJournalPythonOracle: the reference's own check — hash =
// sha256(prev + json.dumps(body, sort_keys=True, separators=(",", ":"))) —
// run by Python over the journal as written, non-ASCII text and floats
// included. Python's json module is the oracle for the canonical form.
func TestJournalPythonOracle(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	dir := t.TempDir()
	s, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	for i, data := range []string{`{"phi":0.1,"overlap":1.0,"big":1e21,"small":0.00001,"n":3}`, `{"why":"no basis to choose — équal","esc":"\u2028"}`, `null`, `[1.5,-0.0,2e-7]`} {
		rec := fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Round: int64(i + 1), Text: "Φ rounds ✓ <&>", Data: json.RawMessage(data)}
		if data == "null" {
			rec.Data = nil
		}
		if _, err := s.AppendJournal(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "journal", "*.jsonl"))
	script := `
import hashlib, json, sys
chain = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
prev = ""
for i, rec in enumerate(chain):
    body = {k: rec[k] for k in rec if k != "hash"}
    h = hashlib.sha256((prev + json.dumps(body, sort_keys=True, separators=(",", ":"))).encode()).hexdigest()
    if rec.get("prev") != prev or h != rec.get("hash"):
        print("bad", i); sys.exit(1)
    prev = rec["hash"]
print("ok", len(chain))
`
	out, err := exec.Command(py, "-c", script, files[0]).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok "+strconv.Itoa(4) {
		t.Fatalf("python verify_audit: %v\n%s", err, out)
	}
}
