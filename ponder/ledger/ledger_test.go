package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var (
	testGenesis = Genesis("t-2026-08-24", "2026-08-24T15:00:00.000Z")
	testChain   = Chain{Genesis: testGenesis}
	testTime    = time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)
)

// chained renders batches of the given sizes as one chained ledger.
func chained(t testing.TB, sizes ...int) []byte {
	t.Helper()
	var out []byte
	head, next := testGenesis, 1
	for _, n := range sizes {
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Type: UnitSeed, UnitID: fmt.Sprintf("u%04d", next+i), Path: fmt.Sprintf("p%d", next+i)}
		}
		Stamp(recs, next, 1, testTime)
		data, h, err := Seal(recs, head)
		if err != nil {
			t.Fatal(err)
		}
		out, head, next = append(out, data...), h, next+n
	}
	return out
}

// lines splits a ledger into its lines, newlines kept.
func lines(data []byte) [][]byte {
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
}

func join(ls ...[]byte) []byte {
	var out []byte
	for _, l := range ls {
		out = append(out, l...)
		if !bytes.HasSuffix(l, []byte{'\n'}) {
			out = append(out, '\n')
		}
	}
	return out
}

func TestParseWholeBatches(t *testing.T) {
	data := chained(t, 2, 3)
	l := Parse(data, testChain, nil)
	if l.Damage != nil {
		t.Fatalf("damage on a sound ledger: %v", l.Damage)
	}
	if l.Count != 5 || l.NextSeq() != 6 || l.Good != int64(len(data)) {
		t.Errorf("records %d, next %d, good %d of %d", l.Count, l.NextSeq(), l.Good, len(data))
	}
	// The head is the hash of the last line's bytes.
	ls := lines(data)
	if want := HashLine(bytes.TrimSuffix(ls[4], []byte{'\n'})); l.Head != want {
		t.Errorf("head %s, want %s", l.Head, want)
	}
	if e := Parse(nil, testChain, nil); e.Damage != nil || e.NextSeq() != 1 || e.Head != testGenesis {
		t.Error("an empty ledger is sound, starts at seq 1 and its head is the genesis")
	}
	// The same lines under another session's genesis are not this ledger.
	if d := Parse(data, Chain{Genesis: Genesis("other", "x")}, nil).Damage; d == nil || !d.Forged || d.Line != 1 {
		t.Errorf("a ledger moved under another session: damage %v", d)
	}
}

func TestParseTornTails(t *testing.T) {
	first := chained(t, 2)
	whole := chained(t, 2, 3)
	second := whole[len(first):]
	ls := lines(second)
	cases := map[string][]byte{
		// A crash mid-write: the last line stops in the middle.
		"mid-line": append(append([]byte{}, first...), second[:len(second)-7]...),
		// One byte short: the record is whole JSON but has no newline.
		"no newline": append(append([]byte{}, first...), second[:len(second)-1]...),
		// Cut on a line boundary: two of the batch's three records.
		"line boundary": append(append(append([]byte{}, first...), ls[0]...), ls[1]...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			l := Parse(data, Chain{Genesis: testGenesis, Anchor: &Anchor{Records: 2, Head: Parse(first, testChain, nil).Head}}, nil)
			if l.Damage == nil || !l.Damage.Torn {
				t.Fatalf("damage = %v, want a torn tail", l.Damage)
			}
			// The whole first batch survives; nothing of the second does.
			if l.Count != 2 || l.Good != int64(len(first)) || l.Damage.Offset != int64(len(first)) || l.Damage.Line != 3 {
				t.Errorf("records %d, good %d, damage at line %d byte %d; want 2 records and the cut at line 3 byte %d",
					l.Count, l.Good, l.Damage.Line, l.Damage.Offset, len(first))
			}
			if !strings.Contains(l.Damage.Error(), "ponder repair") {
				t.Errorf("the message does not say how to recover: %s", l.Damage.Error())
			}
			// The same cut inside an acknowledged append is not torn.
			acked := Chain{Genesis: testGenesis, Anchor: &Anchor{Records: 5, Head: Parse(whole, testChain, nil).Head}}
			if d := Parse(data, acked, nil).Damage; d == nil || !d.Forged || d.Tamper != Deleted || d.Seq != 3 {
				t.Errorf("a cut past the anchor: damage %+v, want records from seq 3 deleted", d)
			}
		})
	}
}

func TestParseCorruption(t *testing.T) {
	// A line that is not JSON, in the middle: corrupt, not repairable.
	ls := lines(chained(t, 1, 1, 1))
	l := Parse(join(ls[0], []byte("{nope}"), ls[2]), testChain, nil)
	if l.Damage == nil || l.Damage.Torn || l.Damage.Forged || l.Damage.Line != 2 {
		t.Fatalf("damage = %+v, want corruption at line 2", l.Damage)
	}
}

// TestForgeryIsNamed: for each kind of tamper, the first forged record is
// named — its line, its seq and what was done.
func TestForgeryIsNamed(t *testing.T) {
	data := chained(t, 2, 3, 1, 2) // eight records in four batches
	ls := lines(data)
	edited := bytes.Replace(ls[3], []byte(`"path":"p4"`), []byte(`"path":"p9"`), 1)
	anchor := Parse(data, testChain, nil).Anchor()
	cases := []struct {
		name         string
		data         []byte
		tamper       string
		line, seq    int
		detailPrefix string
	}{
		{"edited", join(ls[0], ls[1], ls[2], edited, ls[4], ls[5], ls[6], ls[7]), Edited, 4, 4, "line 4 (seq 4) was edited"},
		{"edited seq", join(ls[0], ls[1], ls[2], bytes.Replace(ls[3], []byte(`"seq":4`), []byte(`"seq":3`), 1), ls[4], ls[5], ls[6], ls[7]), Edited, 4, 3, "line 4 (seq 3) was edited"},
		{"inserted copy", join(ls[0], ls[1], ls[2], ls[2], ls[3], ls[4], ls[5], ls[6], ls[7]), Inserted, 4, 3, "line 4 (seq 3) was inserted"},
		{"inserted new", join(ls[0], ls[1], ls[2], []byte(`{"seq":4,"ts":"x","pass":1,"batch":3,"batchSize":3,"type":"unit-seed","unitId":"u0099","path":"z","prev":"00"}`), ls[3], ls[4], ls[5], ls[6], ls[7]), Inserted, 4, 4, "line 4 (seq 4) was inserted"},
		{"deleted", join(ls[0], ls[1], ls[2], ls[4], ls[5], ls[6], ls[7]), Deleted, 4, 4, "record(s) seq 4–4 were deleted before line 4"},
		{"reordered", join(ls[0], ls[1], ls[2], ls[4], ls[3], ls[5], ls[6], ls[7]), Reordered, 4, 5, "line 4 (seq 5) is out of order"},
		{"first line deleted", join(ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], ls[7]), Deleted, 1, 1, "record(s) seq 1–1 were deleted"},
		{"last line edited", join(ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], bytes.Replace(ls[7], []byte(`"p8"`), []byte(`"p0"`), 1)), Edited, 8, 8, "line 8 (seq 8) was edited"},
		{"last batch deleted", join(ls[0], ls[1], ls[2], ls[3], ls[4], ls[5]), Deleted, 7, 7, "record(s) seq 7–8 are missing from the end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Parse(c.data, Chain{Genesis: testGenesis, Anchor: &anchor}, nil)
			d := l.Damage
			if d == nil || !d.Forged || d.Tamper != c.tamper || d.Line != c.line || d.Seq != c.seq || !strings.HasPrefix(d.Detail, c.detailPrefix) {
				t.Fatalf("damage = %+v\nwant forged (%s) at line %d seq %d: %q…", d, c.tamper, c.line, c.seq, c.detailPrefix)
			}
			if !strings.Contains(d.Error(), "tampered") {
				t.Errorf("message: %s", d.Error())
			}
			if r, err := Repair(writeTemp(t, c.data), filepath.Join(t.TempDir(), "torn"), Chain{Genesis: testGenesis, Anchor: &anchor}); err == nil || r != nil {
				t.Errorf("repair of a forged ledger = %v, %v; want a refusal", r, err)
			}
		})
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ledger.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRepairCutsInPlaceAndKeepsTheTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	first := chained(t, 2)
	whole := chained(t, 2, 2)
	torn := whole[:len(whole)-5]
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	r, err := Repair(path, filepath.Join(dir, "ledger.torn.jsonl"), testChain)
	if err != nil || r == nil {
		t.Fatalf("Repair = %v, %v", r, err)
	}
	kept, _ := os.ReadFile(path)
	moved, _ := os.ReadFile(r.MovedTo)
	if !bytes.Equal(kept, first) {
		t.Errorf("the ledger kept %q, want the first batch", kept)
	}
	// Nothing lost: kept + moved is the file as it was.
	if !bytes.Equal(append(kept, moved...), torn) || r.RemovedBytes != int64(len(moved)) || r.RemovedRecords != 1 {
		t.Errorf("moved %q (%d bytes, %d lines)", moved, r.RemovedBytes, r.RemovedRecords)
	}
	// Cut in place: the same file, not a copy renamed over it.
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("repair replaced the ledger instead of cutting it in place")
	}
	// The chain survives: what is left is sound, and appends continue it.
	l, _ := Read(path, testChain, nil)
	if l.Damage != nil || l.Count != 2 {
		t.Fatalf("after repair: %+v", l)
	}
	if again, err := Repair(path, filepath.Join(dir, "x"), testChain); again != nil || err != nil {
		t.Errorf("a second repair = %v, %v; want nothing to do", again, err)
	}
	// Where the tail cannot be kept, the cut still happens and the bytes
	// come back to the caller.
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Repair(path, filepath.Join(dir, "no", "such", "dir", "\x00"), testChain)
	if err != nil || r == nil || r.MovedTo != "" || r.SaveError == nil || !bytes.Equal(r.Tail, torn[len(first):]) {
		t.Fatalf("repair with an unwritable torn file = %+v, %v", r, err)
	}
	// Corruption is refused and the file left alone.
	ls := lines(first)
	bad := join([]byte("{nope}"), ls[1])
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(path, filepath.Join(dir, "y"), testChain); err == nil {
		t.Error("Repair accepted a corrupt ledger")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
		t.Error("Repair changed a corrupt ledger")
	}
}

// Records past the anchor — whole, chained batches the session never
// acknowledged — are not read: the damage is repairable (Torn,
// Unacknowledged), visit never sees them, and the log ends at the anchor.
// An anchor of no records (a session before its first append) bounds too;
// a bare ledger (no anchor at all) is read whole.
func TestRecordsPastTheAnchor(t *testing.T) {
	data := chained(t, 2, 1, 2)
	head := func(n int) string { return HashLine(bytes.TrimSuffix(lines(data)[n-1], []byte{'\n'})) }
	for _, c := range []struct {
		name    string
		anchor  Anchor
		visited int
		line    int
	}{
		{"after the first batch", Anchor{Records: 2, Head: head(2)}, 2, 3},
		{"after the second", Anchor{Records: 3, Head: head(3)}, 3, 4},
		{"before any append", Anchor{Records: 0, Head: testGenesis}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			anchor := c.anchor
			visited := 0
			l := Parse(data, Chain{Genesis: testGenesis, Anchor: &anchor}, func(*Record) { visited++ })
			d := l.Damage
			if d == nil || !d.Torn || !d.Unacknowledged || d.Forged || d.Line != c.line || d.Seq != c.anchor.Records+1 {
				t.Fatalf("damage = %+v, want unacknowledged records from line %d", d, c.line)
			}
			if visited != c.visited || l.Count != c.anchor.Records || l.Head != c.anchor.Head || l.Good != int64(len(bytes.Join(lines(data)[:c.anchor.Records], nil))) {
				t.Errorf("visited %d, log %+v; want %d records up to the anchor", visited, l, c.visited)
			}
			if !strings.Contains(d.Error(), "past session.json's anchor") {
				t.Errorf("message %q", d.Error())
			}
			path := writeTemp(t, data)
			r, err := Repair(path, filepath.Join(t.TempDir(), "torn"), Chain{Genesis: testGenesis, Anchor: &anchor})
			if err != nil || r == nil || r.RemovedRecords != 5-c.anchor.Records {
				t.Fatalf("repair = %+v, %v", r, err)
			}
			if l, _ := Read(path, Chain{Genesis: testGenesis, Anchor: &anchor}, nil); l.Damage != nil || l.Count != c.anchor.Records {
				t.Errorf("after repair: %+v", l)
			}
		})
	}
	if l := Parse(data, testChain, nil); l.Damage != nil || l.Count != 5 {
		t.Errorf("a bare ledger: %+v", l)
	}
}

func TestAppendChainsOneBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	var anchor Anchor
	for _, n := range []int{3, 1, 2} {
		l, err := Read(path, Chain{Genesis: testGenesis, Anchor: &anchor}, nil)
		if err != nil || l.Damage != nil {
			t.Fatal(err, l.Damage)
		}
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Type: UnitGrade, UnitID: "u0001"}
		}
		Stamp(recs, l.NextSeq(), 1, time.Now())
		a, err := Append(path, l, recs)
		if err != nil {
			t.Fatal(err)
		}
		anchor = a.Anchor
	}
	var all []Record
	l, err := Read(path, Chain{Genesis: testGenesis, Anchor: &anchor}, func(r *Record) { all = append(all, *r) })
	if err != nil || l.Damage != nil || l.Count != 6 || len(all) != 6 || anchor.Records != 6 || anchor.Head != l.Head {
		t.Fatalf("after three appends: %d records, damage %v, err %v, anchor %+v", l.Count, l.Damage, err, anchor)
	}
	if r := all[3]; r.Seq != 4 || r.Batch != 4 || r.BatchSize != 1 {
		t.Errorf("record 4 = seq %d batch %d size %d, want 4/4/1", r.Seq, r.Batch, r.BatchSize)
	}
	if all[0].Prev != testGenesis {
		t.Errorf("the first record's prev is %q, want the genesis", all[0].Prev)
	}
	// Undo takes the last append back, byte for byte.
	before, _ := os.ReadFile(path)
	l, _ = Read(path, Chain{Genesis: testGenesis}, nil)
	a, err := Append(path, l, []Record{{Type: UnitGrade, UnitID: "u0002"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Undo(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("Undo left the ledger changed")
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for _, raw := range []string{"a/b.go", "caf\xe9.go", "\xff\xfe", `"quoted".go`, "日本.go", "tab\tand\nnewline", "", `back\slash`} {
		stored := EncodeName(raw)
		if !utf8.ValidString(stored) {
			t.Errorf("EncodeName(%q) = %q is not UTF-8", raw, stored)
		}
		back, err := DecodeName(stored)
		if err != nil || back != raw {
			t.Errorf("%q → %q → %q, %v", raw, stored, back, err)
		}
		// Through JSON too.
		j, _ := json.Marshal(stored)
		var s string
		if err := json.Unmarshal(j, &s); err != nil || s != stored {
			t.Errorf("JSON changed %q to %q", stored, s)
		}
	}
	if EncodeName("plain/name.go") != "plain/name.go" {
		t.Error("a UTF-8 name is not stored as itself")
	}
	if got := EncodeName("caf\xe9.go"); got != `"caf\xe9.go"` {
		t.Errorf("EncodeName(caf\\xe9.go) = %s", got)
	}
	if _, err := DecodeName(`"unterminated`); err == nil {
		t.Error("a broken quoted name decoded")
	}
}

func TestParseBatch(t *testing.T) {
	lines := "\n" + `{"voice":"dreamer","op":"add","unitId":"u0001","severity":"must","confidence":0.5,"text":"t"}` + "\n\n" +
		`{"type":"unit-delete","unitId":"u0002","phantom":true}` + "\r\n"
	ds, v := ParseBatch([]byte(lines))
	if len(v) != 0 || len(ds) != 2 {
		t.Fatalf("JSON Lines: %d deltas, violations %v", len(ds), v)
	}
	if ds[0].Type != Finding || ds[0].Line != 2 || ds[1].Line != 4 || *ds[1].Phantom != true {
		t.Errorf("deltas = %+v", ds)
	}
	if got := strings.Join(ds[1].Fields, ","); got != "phantom,type,unitId" {
		t.Errorf("fields = %s", got)
	}
	arr := `[{"voice":"skeptic","op":"delete","findingId":"f0001"}]`
	if ds, v := ParseBatch([]byte(arr)); len(v) != 0 || len(ds) != 1 || ds[0].Line != 0 {
		t.Errorf("array: %+v %v", ds, v)
	}
	// Schema failures mark their records Invalid and keep the others.
	mixed := `{"voice":"skeptic","op":"delete","findingId":"f0001"}` + "\n" + `{"voice":"skeptic","op":"delete"}`
	ds, v = ParseBatch([]byte(mixed))
	if len(ds) != 2 || ds[0].Invalid || !ds[1].Invalid || len(v) != 1 || v[0].Record != 2 {
		t.Errorf("mixed: %+v, %v", ds, v)
	}
	for _, in := range []string{"", "  \n ", "[1,", `{"a":`} {
		if ds, v := ParseBatch([]byte(in)); ds != nil || len(v) == 0 {
			t.Errorf("ParseBatch(%q) = %v, %v; want a rejection", in, ds, v)
		}
	}
}

func FuzzParse(f *testing.F) {
	good := chained(f, 1, 2)
	f.Add(good)
	f.Add(good[:20])
	f.Add(append(good, good...))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := Parse(data, testChain, nil)
		if l.Good > l.Size || (l.Damage == nil && l.Good != l.Size) {
			t.Fatalf("good %d of %d with damage %v", l.Good, l.Size, l.Damage)
		}
		// What survives a parse parses again to the same records.
		again := Parse(data[:l.Good], testChain, nil)
		if again.Damage != nil || again.Count != l.Count {
			t.Fatalf("the sound prefix is not sound: %v", again.Damage)
		}
	})
}

// FuzzDecodeMatchesEncodingJSON: whenever the fast path accepts a line, it
// reads exactly what encoding/json reads; whenever encoding/json rejects a
// line, so does the decoder.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	f.Add(`{"seq":1,"ts":"t","pass":2,"batch":1,"batchSize":3,"type":"finding","voice":"dreamer","op":"add","findingId":"f0001","unitId":"u0001","severity":"must","confidence":0.75,"text":"a","recommendation":"","evidence":"x:1"}`)
	f.Add(`{"seq":1,"type":"unit-delete","unitId":"u0002","phantom":true,"reason":"gone"}`)
	f.Add(`{ "seq" : 1 , "text" : "with \"escape\"" }`)
	f.Add(`{"seq":"1"}`)
	f.Add(`{"confidence":1e-3,"grade":null,"extra":[1,2],"phantom":false}`)
	f.Add(`{"text":"é ☃"}`)
	f.Fuzz(func(t *testing.T, line string) {
		var want Record
		werr := json.Unmarshal([]byte(line), &want)
		d := &decoder{src: line}
		var got Record
		fast := d.fast(0, len(line), &got)
		gerr := d.decode([]byte(line), 0, len(line), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json err %v, decoder err %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("fast=%v\n got %+v\nwant %+v", fast, got, want)
		}
	})
}

func TestReadMappedMatchesRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	whole := chained(t, 2, 2)
	torn := whole[:len(chained(t, 2))+30]
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	var heap, mapped []Record
	lh, err1 := Read(path, testChain, func(r *Record) { heap = append(heap, *r) })
	lm, err2 := ReadMapped(path, testChain, func(r *Record) { mapped = append(mapped, *r) })
	if err1 != nil || err2 != nil || !reflect.DeepEqual(heap, mapped) || lh.Count != lm.Count || lh.Good != lm.Good || lh.Head != lm.Head || lm.Damage == nil || !lm.Damage.Torn {
		t.Fatalf("Read and ReadMapped disagree: %+v %+v (%v, %v)", lh, lm, err1, err2)
	}
	if l, err := ReadMapped(filepath.Join(dir, "missing"), testChain, nil); err != nil || l.Count != 0 || l.Head != testGenesis {
		t.Errorf("missing ledger: %+v, %v", l, err)
	}
}
