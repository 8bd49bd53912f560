package ledger

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// batch renders n records as one stamped batch starting at seq next.
func batch(t *testing.T, next, n int) []byte {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Type: UnitSeed, UnitID: "u000" + string(rune('1'+next+i-1)), Path: "p"}
	}
	Stamp(recs, next, 1, time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC))
	data, err := Encode(recs)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseWholeBatches(t *testing.T) {
	data := append(batch(t, 1, 2), batch(t, 3, 3)...)
	l := Parse(data, nil)
	if l.Damage != nil {
		t.Fatalf("damage on a sound ledger: %v", l.Damage)
	}
	if l.Count != 5 || l.NextSeq() != 6 || l.Good != int64(len(data)) {
		t.Errorf("records %d, next %d, good %d of %d", l.Count, l.NextSeq(), l.Good, len(data))
	}
	if Parse(nil, nil).Damage != nil || Parse(nil, nil).NextSeq() != 1 {
		t.Error("an empty ledger is sound and starts at seq 1")
	}
}

func TestParseTornTails(t *testing.T) {
	first := batch(t, 1, 2)
	second := batch(t, 3, 3)
	lines := bytes.SplitAfter(second, []byte{'\n'})
	cases := map[string][]byte{
		// A crash mid-write: the last line stops in the middle.
		"mid-line": append(append([]byte{}, first...), second[:len(second)-7]...),
		// One byte short: the record is whole JSON but has no newline.
		"no newline": append(append([]byte{}, first...), second[:len(second)-1]...),
		// Cut on a line boundary: two of the batch's three records.
		"line boundary": append(append(append([]byte{}, first...), lines[0]...), lines[1]...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			l := Parse(data, nil)
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
		})
	}
}

func TestParseCorruption(t *testing.T) {
	first := batch(t, 1, 2)
	cases := map[string][]byte{
		"bad middle line": append(append([]byte("{nope}\n"), first...), batch(t, 3, 1)...),
		"seq gap":         append(append([]byte{}, first...), batch(t, 4, 1)...),
		"seq repeated":    append(append([]byte{}, first...), batch(t, 2, 1)...),
		"batch broken":    append(bytes.SplitAfter(first, []byte{'\n'})[0], batch(t, 2, 1)...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			l := Parse(data, nil)
			if l.Damage == nil || l.Damage.Torn {
				t.Fatalf("damage = %+v, want corruption (not repairable)", l.Damage)
			}
		})
	}
}

func TestRepairMovesTheTornTailAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	first := batch(t, 1, 2)
	second := batch(t, 3, 2)
	torn := append(append([]byte{}, first...), second[:len(second)-5]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Repair(path, filepath.Join(dir, "ledger.torn.jsonl"))
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
	if again, err := Repair(path, filepath.Join(dir, "x")); again != nil || err != nil {
		t.Errorf("a second repair = %v, %v; want nothing to do", again, err)
	}
	// Corruption is refused and the file left alone.
	bad := append([]byte("{nope}\n"), first...)
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(path, filepath.Join(dir, "y")); err == nil {
		t.Error("Repair accepted a corrupt ledger")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
		t.Error("Repair changed a corrupt ledger")
	}
}

func TestAppendIsOneBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	for _, n := range []int{3, 1, 2} {
		l, err := Read(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Type: UnitGrade, UnitID: "u0001"}
		}
		Stamp(recs, l.NextSeq(), 1, time.Now())
		if err := Append(path, recs); err != nil {
			t.Fatal(err)
		}
	}
	var all []Record
	l, err := Read(path, func(r *Record) { all = append(all, *r) })
	if err != nil || l.Damage != nil || l.Count != 6 || len(all) != 6 {
		t.Fatalf("after three appends: %d records, damage %v, err %v", l.Count, l.Damage, err)
	}
	if r := all[3]; r.Seq != 4 || r.Batch != 4 || r.BatchSize != 1 {
		t.Errorf("record 4 = seq %d batch %d size %d, want 4/4/1", r.Seq, r.Batch, r.BatchSize)
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
	good := []byte(`{"seq":1,"ts":"t","pass":1,"batch":1,"batchSize":1,"type":"unit-seed","unitId":"u0001","path":"a"}` + "\n")
	f.Add(good)
	f.Add(good[:20])
	f.Add(append(good, good...))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := Parse(data, nil)
		if l.Good > l.Size || (l.Damage == nil && l.Good != l.Size) {
			t.Fatalf("good %d of %d with damage %v", l.Good, l.Size, l.Damage)
		}
		// What survives a parse parses again to the same records.
		again := Parse(data[:l.Good], nil)
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
	first := batch(t, 1, 2)
	torn := append(append([]byte{}, first...), batch(t, 3, 2)[:30]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	var heap, mapped []Record
	lh, err1 := Read(path, func(r *Record) { heap = append(heap, *r) })
	lm, err2 := ReadMapped(path, func(r *Record) { mapped = append(mapped, *r) })
	if err1 != nil || err2 != nil || !reflect.DeepEqual(heap, mapped) || lh.Count != lm.Count || lh.Good != lm.Good || lm.Damage == nil || !lm.Damage.Torn {
		t.Fatalf("Read and ReadMapped disagree: %+v %+v (%v, %v)", lh, lm, err1, err2)
	}
	// Repair replaces the file rather than truncating it, so the strings
	// read through the map stay readable afterwards.
	if _, err := Repair(path, filepath.Join(dir, "torn")); err != nil {
		t.Fatal(err)
	}
	for _, r := range mapped {
		if !strings.HasPrefix(r.UnitID, "u000") || r.TS == "" {
			t.Errorf("a mapped record went bad after repair: %+v", r)
		}
	}
	if l, err := ReadMapped(filepath.Join(dir, "missing"), nil); err != nil || l.Count != 0 {
		t.Errorf("missing ledger: %+v, %v", l, err)
	}
}
