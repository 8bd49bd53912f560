package slotfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// record is the i-th record the tests write: its text says which it is.
func record(i, pad int) []byte {
	return []byte(fmt.Sprintf(`{"n":%d,"pad":%q}`, i, bytes.Repeat([]byte{'x'}, pad)))
}

// written is a slot file holding records 1..n, each written through File
// as a caller would, and the file's path.
func written(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.run")
	if err := Create(path, record(1, 10)); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= n; i++ {
		write(t, path, record(i, 10))
	}
	return path
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	f, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// slots reads the two slots' sequence numbers off the file as the format
// lays them out (magic, then the sequence number, little-endian, then the
// slot's size), and the slot size: which slot is the newest.
func slots(t *testing.T, path string) (first, second uint64, size int) {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size = int(binary.LittleEndian.Uint32(buf[16:]))
	return binary.LittleEndian.Uint64(buf[8:]), binary.LittleEndian.Uint64(buf[size+8:]), size
}

// TestWritesStayInPlace: records written one after another go in turn to
// the two slots of one file, which keeps its inode and its size, and each
// read gives the last one written.
func TestWritesStayInPlace(t *testing.T) {
	path := written(t, 1)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 9; i++ {
		write(t, path, record(i, 10))
		if got := mustRead(t, path); got != string(record(i, 10)) {
			t.Fatalf("after record %d the file reads %s", i, got)
		}
		first, second, size := slots(t, path)
		if want := uint64(i); max(first, second) != want || min(first, second) != want-1 {
			t.Fatalf("after record %d the slots hold records %d and %d", i, first, second)
		}
		after, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) || after.Size() != int64(2*size) || size != MinSlot {
			t.Fatalf("record %d moved the file: same inode %v, size %d (slots of %d)", i, os.SameFile(before, after), after.Size(), size)
		}
	}
}

// TestTornSlotReadsTheRecordBefore: a write a crash cut off leaves its
// slot torn — its first bytes written and not the rest, garbage over it,
// or the file cut short inside it. A reader then gets the record before,
// whole, which the write had not yet returned for; the next write goes
// into the torn slot, never over the whole one (a file cut short is
// written anew).
func TestTornSlotReadsTheRecordBefore(t *testing.T) {
	tears := map[string]func(t *testing.T, path string, off, size int){
		"half written": func(t *testing.T, path string, off, size int) {
			// Another record of the same number, its first half written.
			enc := encode(record(0, 40), 6, size)
			overwrite(t, path, off, enc[:len(enc)/2])
		},
		"garbage": func(t *testing.T, path string, off, size int) {
			overwrite(t, path, off+headerLen+3, []byte("garbage"))
		},
		"header gone": func(t *testing.T, path string, off, size int) {
			overwrite(t, path, off, make([]byte, headerLen))
		},
		"cut short": func(t *testing.T, path string, off, size int) {
			if off == 0 {
				t.Skip("cutting the file short tears its second slot only")
			}
			if err := os.Truncate(path, int64(off+headerLen+5)); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, tear := range tears {
		for _, n := range []int{5, 6} { // the newest record in the second slot, then in the first
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				path := written(t, n)
				first, second, size := slots(t, path)
				off := 0
				if second > first {
					off = size
				}
				tear(t, path, off, size)
				torn, _ := os.Stat(path)
				if got, want := mustRead(t, path), string(record(n-1, 10)); got != want {
					t.Fatalf("with record %d's slot torn the file reads %s, want the record before, %s", n, got, want)
				}
				write(t, path, record(n+1, 10))
				if got, want := mustRead(t, path), string(record(n+1, 10)); got != want {
					t.Fatalf("the write after the tear reads %s, want %s", got, want)
				}
				now, _ := os.Stat(path)
				if !os.SameFile(torn, now) {
					return // a file cut short is written anew, whole
				}
				buf, _ := os.ReadFile(path)
				if r, ok := slotAt(buf, size-off); !ok || string(r.Data) != string(record(n-1, 10)) {
					t.Fatalf("the write after the tear went over the whole slot (it holds %q, whole %v)", r.Data, ok)
				}
			})
		}
	}
}

// TestNoSlotWhole: a file in which both slots are torn, or that was never
// a slot file, is ErrTorn; so is one of another format's bytes.
func TestNoSlotWhole(t *testing.T) {
	path := written(t, 4)
	_, _, size := slots(t, path)
	overwrite(t, path, headerLen+1, []byte("!"))
	overwrite(t, path, size+headerLen+1, []byte("!"))
	if _, err := Read(path); !errors.Is(err, ErrTorn) {
		t.Fatalf("both slots torn: Read = %v, want ErrTorn", err)
	}
	if _, _, err := Open(path); !errors.Is(err, ErrTorn) {
		t.Fatalf("both slots torn: Open = %v, want ErrTorn", err)
	}
	other := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(other, []byte(`{"id":"r"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(other); !errors.Is(err, ErrTorn) {
		t.Fatalf("a JSON file: Read = %v, want ErrTorn", err)
	}
}

// TestRecordOutgrowsItsSlot: a record larger than its slot moves the file
// to larger slots (a new file); records after it go in place again, and a
// small one fits in the large slots.
func TestRecordOutgrowsItsSlot(t *testing.T) {
	path := written(t, 3)
	big := record(4, 3*MinSlot)
	write(t, path, big)
	if got := mustRead(t, path); got != string(big) {
		t.Fatalf("the large record reads back as %d bytes, want %d", len(got), len(big))
	}
	first, second, size := slots(t, path)
	if size < len(big)+headerLen || first != 4 || second != 0 {
		t.Fatalf("after moving: slot size %d for a record of %d, slots hold %d and %d", size, len(big), first, second)
	}
	before, _ := os.Stat(path)
	write(t, path, record(5, 10))
	write(t, path, record(6, 2*MinSlot))
	after, _ := os.Stat(path)
	if got := mustRead(t, path); got != string(record(6, 2*MinSlot)) || !os.SameFile(before, after) {
		t.Fatalf("records after the move: read %d bytes, same file %v", len(got), os.SameFile(before, after))
	}
}

func overwrite(t *testing.T, path string, off int, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, int64(off)); err != nil {
		t.Fatal(err)
	}
}
