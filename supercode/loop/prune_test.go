package loop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Prune against a real repository and real run directories: a run a
// process holds keeps its checkpoints even with All, whatever its
// run.json says; a finished one loses them; a resumable one keeps them
// unless All.
func TestPruneKeepsARunningLoop(t *testing.T) {
	repo, home := t.TempDir(), t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "init")
	runs := map[string]Meta{
		"aaaaaaaaaaaa": {Status: "ended", Reason: "SCRIPT exited 0"},
		"bbbbbbbbbbbb": {Status: "ended", Resumable: true, Reason: "interrupted by SIGINT"},
		"cccccccccccc": {Status: "ended", Reason: "SCRIPT exited 0"}, // but held below: resumed now
	}
	for id, m := range runs {
		m.ID = id
		if err := writeMeta(filepath.Join(home, id), m); err != nil {
			t.Fatal(err)
		}
		for step := 1; step <= 2; step++ {
			git("update-ref", CheckpointRef(id, step), "HEAD")
		}
	}
	lk, err := fsx.LockFile(filepath.Join(home, "cccccccccccc", "lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()

	refs := func() string {
		return strings.TrimSpace(git("for-each-ref", "--format=%(refname)", RefPrefix))
	}
	ctx := context.Background()
	res, err := Prune(ctx, PruneOptions{Dir: repo, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 2 || res.Kept != 4 {
		t.Fatalf("removed %d, kept %d; want 2 and 4: %+v", res.Removed, res.Kept, res.Runs)
	}
	want := map[string]string{"aaaaaaaaaaaa": RunFinished, "bbbbbbbbbbbb": RunResumable, "cccccccccccc": RunBusy}
	for _, r := range res.Runs {
		if want[r.Run] != r.State {
			t.Errorf("run %s: state %s, want %s", r.Run, r.State, want[r.Run])
		}
	}
	if got := refs(); strings.Contains(got, "aaaaaaaaaaaa") || !strings.Contains(got, "bbbbbbbbbbbb/2") {
		t.Fatalf("after prune:\n%s", got)
	}

	res, err = Prune(ctx, PruneOptions{Dir: repo, Home: home, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 2 || res.Kept != 2 {
		t.Fatalf("--all: removed %d, kept %d; want 2 and 2: %+v", res.Removed, res.Kept, res.Runs)
	}
	if got := refs(); got != CheckpointRef("cccccccccccc", 1)+"\n"+CheckpointRef("cccccccccccc", 2) {
		t.Fatalf("after prune --all, want only the running loop's refs:\n%s", got)
	}

	// Released, it is finished, and goes.
	lk.Unlock()
	if _, err := Prune(ctx, PruneOptions{Dir: repo, Home: home}); err != nil {
		t.Fatal(err)
	}
	if got := refs(); got != "" {
		t.Fatalf("after the loop let go, want no refs:\n%s", got)
	}
}
