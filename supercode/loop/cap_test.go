package loop

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapSmallPassesWhole(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "ci-001.log")
	for _, n := range []int{0, 1, CapHead + CapTail} {
		in := strings.Repeat("x", n)
		c, err := capContext(strings.NewReader(in), spill)
		if err != nil || c.Text != in || c.Spill != "" || c.Size != int64(n) {
			t.Fatalf("%d bytes: spill %q size %d err %v", n, c.Spill, c.Size, err)
		}
		if _, err := os.Stat(spill); err == nil {
			t.Fatalf("%d bytes spilled", n)
		}
	}
}

// A 10 MiB log: the session gets exactly its first 64 KiB, the marker
// naming the spill, and its last 16 KiB; the spill holds the whole log.
func TestCapTenMiB(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	in := make([]byte, 10<<20)
	for i := range in {
		in[i] = "abcdefghij\n"[rng.Intn(11)]
	}
	spill := filepath.Join(t.TempDir(), "ci-007.log")
	c, err := capContext(bytes.NewReader(in), spill)
	if err != nil {
		t.Fatal(err)
	}
	marker := "\n[truncated: full log at " + spill + "]\n"
	want := string(in[:CapHead]) + marker + string(in[len(in)-CapTail:])
	if c.Text != want {
		t.Fatalf("capped text: %d bytes, want %d", len(c.Text), len(want))
	}
	if c.Size != int64(len(in)) || c.Spill != spill {
		t.Fatalf("size %d spill %q", c.Size, c.Spill)
	}
	full, err := os.ReadFile(spill)
	if err != nil || !bytes.Equal(full, in) {
		t.Fatalf("the spill is not the whole log (%d bytes, %v)", len(full), err)
	}
}

// Cuts fall on UTF-8 boundaries: no half character at either edge.
func TestCapUTF8(t *testing.T) {
	in := strings.Repeat("ж", CapHead) // two bytes each: 128 KiB
	c, err := capContext(strings.NewReader(in), filepath.Join(t.TempDir(), "s.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(c.Text) {
		t.Fatal("the capped text is not valid UTF-8")
	}
	head, tail, ok := strings.Cut(c.Text, "\n[truncated: full log at ")
	if !ok || len(head) > CapHead || len(head) < CapHead-3 {
		t.Fatalf("head %d bytes", len(head))
	}
	_, tail, _ = strings.Cut(tail, "]\n")
	if len(tail) > CapTail || len(tail) < CapTail-3 {
		t.Fatalf("tail %d bytes", len(tail))
	}
}

func TestRing(t *testing.T) {
	r := newRing(5)
	// Each write in turn, and the last five bytes written after it.
	for _, c := range []struct{ write, holds string }{
		{"abc", "abc"}, {"defg", "cdefg"}, {"0123456789", "56789"}, {"xy", "789xy"},
	} {
		r.Write([]byte(c.write))
		if got := string(r.Bytes()); got != c.holds {
			t.Fatalf("after writing %q the ring holds %q, want %q", c.write, got, c.holds)
		}
	}
}
