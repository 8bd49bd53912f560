package jsonl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type rec struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

func write(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ns(t *testing.T, path string, from Pos) ([]int, Pos) {
	t.Helper()
	var got []int
	end, err := Decode(path, from, func(r rec, _ int) error { got = append(got, r.N); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return got, end
}

// A last line without its line feed is not a record: it is left out, and
// the position returned stops before it, so the reader that comes back
// after the writer finished reads it whole.
func TestTornLastLineIsLeftOut(t *testing.T) {
	p := write(t, `{"n":1}`+"\n"+`{"n":2}`+"\n"+`{"n":3,"s":"unfin`)
	got, end := ns(t, p, Start)
	if fmt.Sprint(got) != "[1 2]" || end != (Pos{Off: 16, Line: 3}) {
		t.Fatalf("read %v up to %+v, want [1 2] up to {16 3}", got, end)
	}
	// The writer finishes its line: the next read from end takes it.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString(`ished"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, end = ns(t, p, end)
	if fmt.Sprint(got) != "[3]" || end.Line != 4 {
		t.Fatalf("after the write finished: %v up to %+v", got, end)
	}
}

// A complete line that does not decode, anywhere but the torn end, is
// corruption named by its file and line.
func TestDamagedLineIsNamed(t *testing.T) {
	p := write(t, `{"n":1}`+"\n\n"+`{"n":2`+"\n"+`{"n":3}`+"\n")
	_, err := Decode(p, Start, func(r rec, _ int) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 || le.Path != p || !strings.Contains(err.Error(), p+" line 3") {
		t.Fatalf("err = %v, want a LineError for line 3 of %s", err, p)
	}
}

// Append cuts a torn last line off before its record: the record is whole,
// on a line of its own, and the file reads as if the torn write never was.
func TestAppendCutsTornLine(t *testing.T) {
	p := write(t, `{"n":1}`+"\n"+`{"n":2,"s":"tor`)
	if _, err := Append(p, []byte(`{"n":3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != `{"n":1}`+"\n"+`{"n":3}`+"\n" {
		t.Fatalf("file after the append: %q", data)
	}
	if got, _ := ns(t, p, Start); fmt.Sprint(got) != "[1 3]" {
		t.Fatalf("read %v", got)
	}
	// A file that ends in a line feed keeps every byte.
	if _, err := Append(p, []byte(`{"n":4}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := ns(t, p, Start); fmt.Sprint(got) != "[1 3 4]" {
		t.Fatalf("read %v", got)
	}
	if _, err := Append(p, []byte(`{"n":5}`), 0o644); err == nil {
		t.Fatal("a record without its line feed was appended")
	}
	// A file that is one torn line is cut to nothing.
	q := write(t, `{"n":`)
	if _, err := Append(q, []byte(`{"n":9}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(q); string(data) != `{"n":9}`+"\n" {
		t.Fatalf("%q", data)
	}
	// Undo takes the append back.
	undo, err := Append(q, []byte(`{"n":10}`+"\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(q); string(data) != `{"n":9}`+"\n" {
		t.Fatalf("after undo: %q", data)
	}
}

// Lines longer than the read buffer, CRLF endings and blank lines read as
// the records they are; line numbers count every line.
func TestLongLinesAndNumbers(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	p := write(t, "\r\n"+`{"n":1,"s":"`+long+`"}`+"\r\n\n"+`{"n":2}`+"\n")
	var lines []int
	var s string
	_, err := Decode(p, Start, func(r rec, n int) error {
		lines = append(lines, n)
		if r.N == 1 {
			s = r.S
		}
		return nil
	})
	if err != nil || fmt.Sprint(lines) != "[2 4]" || s != long {
		t.Fatalf("lines %v, %d-byte string, %v", lines, len(s), err)
	}
	// The same over bytes in memory.
	data, _ := os.ReadFile(p)
	var mem []int
	end, err := DecodeBytes(p, data, Start, func(r rec, n int) error { mem = append(mem, n); return nil })
	if err != nil || fmt.Sprint(mem) != "[2 4]" || end.Off != int64(len(data)) || end.Line != 5 {
		t.Fatalf("in memory: %v up to %+v, %v", mem, end, err)
	}
}

// ScanFile stops at the end it is given: bytes past it are not read even
// when they are whole lines.
func TestScanFileEnd(t *testing.T) {
	p := write(t, `{"n":1}`+"\n"+`{"n":2}`+"\n")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	end, err := ScanFile(f, Start, 8, func(line []byte, _ int) error { got = append(got, string(line)); return nil })
	if err != nil || len(got) != 1 || got[0] != `{"n":1}` || end.Off != 8 {
		t.Fatalf("%q up to %+v, %v", got, end, err)
	}
}

// A missing file is an empty one.
func TestMissingFile(t *testing.T) {
	got, err := ReadAll[rec](filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || got != nil {
		t.Fatalf("%v, %v", got, err)
	}
	if err := CutTorn(filepath.Join(t.TempDir(), "none.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// FuzzScan holds the streaming reader to the rule read off the bytes
// directly: the lines are the file split at line feeds, the piece after the
// last one left out, blank ones skipped, a CR before the line feed dropped;
// and reading from any position Scan returned reads the rest the same.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"a\nb\n", "a\nb", "\n\n", "", "x\r\n \n\ty\n" + strings.Repeat("z", 70_000) + "\nw"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want []string
		parts := strings.Split(string(data), "\n")
		for i, l := range parts[:len(parts)-1] {
			l = strings.TrimSuffix(l, "\r")
			if strings.TrimSpace(l) != "" {
				want = append(want, fmt.Sprintf("%d:%s", i+1, l))
			}
		}
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var got []string
		end, err := Scan(p, Start, func(line []byte, n int) error {
			got = append(got, fmt.Sprintf("%d:%s", n, line))
			return nil
		})
		if err != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("got %q, want %q (%v)", got, want, err)
		}
		if end.Off != int64(strings.LastIndexByte(string(data), '\n')+1) {
			t.Fatalf("end %+v", end)
		}
		// Stop at the middle line: Scan returns where that line starts,
		// and a scan from there reads the rest exactly.
		half := len(want) / 2
		stop := errors.New("stop")
		seen := 0
		mid, err := Scan(p, Start, func(line []byte, n int) error {
			if seen == half {
				return stop
			}
			seen++
			return nil
		})
		if half < len(want) && err != stop {
			t.Fatalf("no stop: %v", err)
		}
		var rest []string
		if _, err := Scan(p, mid, func(line []byte, n int) error {
			rest = append(rest, fmt.Sprintf("%d:%s", n, line))
			return nil
		}); err != nil || strings.Join(rest, "\x00") != strings.Join(want[half:], "\x00") {
			t.Fatalf("from %+v: %q, want %q", mid, rest, want[half:])
		}
	})
}

// FuzzMemberString: every string value Members hands out is one Plain
// reads, and MemberString reads it the same, with an interner or without.
func FuzzMemberString(f *testing.F) {
	for _, s := range []string{`{"a":"b","c":"d\u0041","e":["\"x"],"f":"\xff","g":"h	i","k":{"l":"m"},"n":1}`, `{"a":"é","b":""}`, `{"a":"x\"y"}`, `{}`} {
		f.Add([]byte(s))
	}
	in := &Interner{}
	f.Fuzz(func(t *testing.T, line []byte) {
		_ = Members(line, func(key string, val []byte) error {
			if len(val) == 0 || val[0] != '"' {
				if _, ok := MemberString(val, nil); ok {
					t.Fatalf("%q: MemberString read %q, not a string", line, val)
				}
				return nil
			}
			want, ok := Plain(val)
			if !ok {
				t.Fatalf("%q: Members handed out %q, which Plain does not read", line, val)
			}
			for _, strs := range []*Interner{nil, in} {
				if got, ok := MemberString(val, strs); !ok || got != want {
					t.Fatalf("%q: MemberString read %q as %q (%v), Plain %q", line, val, got, ok, want)
				}
			}
			return nil
		})
	})
}
