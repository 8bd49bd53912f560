//go:build linux

package localstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockChild is the other process of TestRunLockAcrossProcesses: it
// holds the runs it is given until its standard input closes.
func TestLockChild(t *testing.T) {
	dir := os.Getenv("LOCALSTORE_LOCK_CHILD")
	if dir == "" {
		t.Skip("the other process of TestRunLockAcrossProcesses")
	}
	s := open(t, dir)
	for _, id := range strings.Fields(os.Getenv("LOCALSTORE_LOCK_RUNS")) {
		if _, err := s.OpenRun(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// A run another process holds is refused until it lets go, whatever else
// either holds; a run nobody holds is taken at once. The other process
// holds 300 runs, so every shard has several locks of another owner in it.
func TestRunLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	open(t, dir).Close()
	var ids []string
	for i := 0; i < 300; i++ {
		ids = append(ids, fmt.Sprintf("theirs-%d", i))
	}
	child := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
	child.Env = append(os.Environ(), "LOCALSTORE_LOCK_CHILD="+dir, "LOCALSTORE_LOCK_RUNS="+strings.Join(ids, " "))
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("the other process said %q", line)
	}
	set(t, &LockTimeout, 50*time.Millisecond)
	s := open(t, dir)
	ctx := context.Background()
	for _, id := range []string{"theirs-0", "theirs-150", "theirs-299"} {
		if h, err := s.OpenRun(ctx, id); err == nil {
			h.Close()
			t.Fatalf("%s is held by the other process, and was opened here", id)
		}
	}
	mine := make([]interface{ Close() error }, 0, 300)
	for i := 0; i < 300; i++ {
		h, err := s.OpenRun(ctx, fmt.Sprintf("mine-%d", i))
		if err != nil {
			t.Fatalf("mine-%d: %v", i, err)
		}
		mine = append(mine, h)
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("the other process: %v", err)
	}
	LockTimeout = 5 * time.Second
	h, err := s.OpenRun(ctx, "theirs-150")
	if err != nil {
		t.Fatalf("after the other process let go: %v", err)
	}
	h.Close()
	for _, h := range mine {
		h.Close()
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "runs", "locks.d")); len(ents) > lockShards {
		t.Fatalf("%d lock files for 600 runs", len(ents))
	}
}
