package undo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// BenchmarkWatchedCheckpoint is one watched checkpoint of a 5,000-file
// work tree after 10 files changed, in this process.
func BenchmarkWatchedCheckpoint(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "repo")
	for i := 0; i < 5000; i++ {
		undotest.Write(b, dir, fmt.Sprintf("d%02d/f%d.txt", i/100, i%100), fmt.Sprintf("file %d\n", i))
	}
	undotest.Git(b, dir, "init", "-q", "-b", "main")
	undotest.Git(b, dir, "add", "-A")
	undotest.Git(b, dir, "commit", "-q", "-m", "files")
	st := &undo.Store{Dir: filepath.Join(b.TempDir(), "undo")}
	w, err := st.Watch(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	in := undo.Input{Run: "bench", Kind: undo.KindCall}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for k := 0; k < 10; k++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%02d/f0.txt", k)), []byte(fmt.Sprintf("round %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		in.Call = fmt.Sprintf("c%d", i)
		b.StartTimer()
		if _, err := st.Capture(ctx, dir, in); err != nil {
			b.Fatal(err)
		}
	}
}
