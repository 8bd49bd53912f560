package fswatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// signalled waits (up to 5 s) for a signal; drained reports whether none
// is waiting.
func signalled(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the watch ended", what)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no signal within 5 s", what)
	}
}

func quiet(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	// Nothing should be pending once the kernel delivered what it had:
	// a write is reported within milliseconds, so a quarter second with
	// none pending is the absence of one.
	select {
	case <-ch:
		t.Fatalf("%s: a signal for a change that does not count", what)
	case <-time.After(250 * time.Millisecond):
	}
}

// Real files in real directories: a write in a root signals, a write in a
// directory made later under it signals, a root that did not exist is
// picked up when made, and lock files and files outside the roots do not
// count.
func TestWatchFollowsTheTrees(t *testing.T) {
	base := t.TempDir()
	have := filepath.Join(base, "have")
	later := filepath.Join(base, "not", "yet", "root")
	if err := os.MkdirAll(have, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := Watch(ctx, []string{have, later}, Lock)
	if err != nil {
		t.Fatal(err)
	}
	write := func(p string) {
		t.Helper()
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(have, "a.json"))
	signalled(t, ch, "a file written in a root")

	sub := filepath.Join(have, "events")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	signalled(t, ch, "a directory made in a root")
	write(filepath.Join(sub, "r.jsonl"))
	signalled(t, ch, "a file written in the new directory")

	// Let the kernel deliver what those writes still had (a create and
	// its write are two events), then change only what does not count.
	for settled := false; !settled; {
		select {
		case <-ch:
		case <-time.After(250 * time.Millisecond):
			settled = true
		}
	}
	write(filepath.Join(have, "x.lock"))
	write(filepath.Join(base, "outside"))
	quiet(t, ch, "a lock file and a file outside the roots")

	if err := os.MkdirAll(later, 0o755); err != nil {
		t.Fatal(err)
	}
	signalled(t, ch, "a root made after the watch began")
	write(filepath.Join(later, "b"))
	signalled(t, ch, "a file in the root made later")

	// Signals coalesce: twenty writes while nobody reads leave one
	// waiting, never twenty (the channel holds one).
	for i := range 20 {
		write(filepath.Join(have, "many"+string(rune('a'+i))))
	}
	signalled(t, ch, "twenty writes")
	if c := cap(ch); c != 1 {
		t.Fatalf("the channel holds %d signals", c)
	}
	cancel()
	for range ch { // closed when the watch ends
	}
}
