package undo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStateWrittenInPlaceReadsWholeOrNotAtAll: the work tree's state,
// written over in place, reads as written; every torn form of it (cut
// short, a byte changed, the old file's tail left after it) reads as no
// state, which costs a full snapshot and never a wrong one; an earlier
// version's plain JSON still reads.
func TestStateWrittenInPlaceReadsWholeOrNotAtAll(t *testing.T) {
	r := &repoStore{dir: t.TempDir()}
	path := filepath.Join(r.dir, "state.json")
	long := state{Tree: "a1", Index: "b2", Refs: "c3", Included: []string{"data/one.db", "data/two.db"}}
	short := state{Tree: "d4"}
	if err := r.saveState(long); err != nil {
		t.Fatal(err)
	}
	longBytes, _ := os.ReadFile(path)
	if err := r.saveState(short); err != nil {
		t.Fatal(err)
	}
	if got, err := r.loadState(); err != nil || got.Tree != "d4" || got.Index != "" || len(got.Included) != 0 {
		t.Fatalf("a shorter state written over a longer one reads %+v, %v", got, err)
	}
	shortBytes, _ := os.ReadFile(path)
	torn := map[string][]byte{
		"cut in the document": shortBytes[:len(shortBytes)/2],
		"cut in the sum":      shortBytes[:len(shortBytes)-10],
		"a byte changed":      append(append([]byte{}, shortBytes[:5]...), append([]byte{'X'}, shortBytes[6:]...)...),
		"the old tail left":   append(append([]byte{}, shortBytes...), longBytes[len(shortBytes):]...),
		"new head, old tail":  append(append([]byte{}, shortBytes[:len(shortBytes)/2]...), longBytes[len(shortBytes)/2:]...),
	}
	for name, b := range torn {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := r.loadState(); err != nil || got.Tree != "" {
			t.Errorf("%s: read as %+v, %v; want no state", name, got, err)
		}
	}
	if err := os.WriteFile(path, []byte(`{"tree":"e5","index":"f6"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := r.loadState(); err != nil || got.Tree != "e5" || got.Index != "f6" {
		t.Errorf("an earlier version's plain state reads %+v, %v", got, err)
	}
}
