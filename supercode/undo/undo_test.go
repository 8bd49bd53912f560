package undo_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/internal/testhome"
	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

// fixture is a fresh copy of the undo fixture (built once per test binary).
func fixture(t *testing.T) string {
	t.Helper()
	testenv.LookPath(t, "git")
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	undotest.Repo(t, dir)
	return dir
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// TestUndoBringsBackWhatEachFormDestroyed runs each destructive command in
// the fixture between a run's checkpoints, as an agent's call would, and
// undoes the last call: the files (tracked, modified, untracked), the
// ignored database the policy names, the refs, HEAD, the stash list and
// the index must be what they were, byte for byte. Each form is first
// shown to destroy something (the picture after it differs), so the test
// can fail.
func TestUndoBringsBackWhatEachFormDestroyed(t *testing.T) {
	testenv.LookPath(t, "sqlite3")
	forms := map[string]string{
		"rm-rf-src":        "rm -rf src",
		"reset-hard":       "git reset -q --hard HEAD~1",
		"clean-fdx":        "git clean -q -fdx",
		"checkout-dot":     "git checkout -- .",
		"truncate":         "truncate -s 0 src/main.go",
		"drop-table":       "sqlite3 data/app.db 'DROP TABLE users'",
		"branch-gc":        "git branch -q -D feature && git reflog expire --expire=now --all && git gc -q --prune=now",
		"stash-drop":       "git stash drop -q",
		"stash-clear":      "git stash clear",
		"mv-src-up":        "mv src ../src-moved",
		"rm-refs":          "rm -rf .git/refs/heads",
		"commit-and-amend": "git add -A && git commit -q -m wip && git commit -q --amend -m again",
	}
	for name, script := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
			ctx := context.Background()
			run := "run-" + name
			in := undo.Input{Run: run, Include: []string{undotest.DB}}
			before := undotest.Take(t, dir)
			rows := undotest.Rows(t, dir)
			for _, k := range []undo.Kind{undo.KindStart, undo.KindCall} {
				in.Kind, in.Call, in.What = k, "", ""
				if k == undo.KindCall {
					in.Call, in.Tool, in.What = "toolu_"+name, "Bash", script
				}
				if _, err := st.Capture(ctx, dir, in); err != nil {
					t.Fatal(err)
				}
			}
			sh(t, dir, script)
			if undotest.Diff(before, undotest.Take(t, dir)) == "" && undotest.Rows(t, dir) == rows {
				t.Fatalf("%s destroyed nothing in the fixture: the test would prove nothing", script)
			}
			in.Kind, in.Call, in.What = undo.KindEnd, "", ""
			if _, err := st.Capture(ctx, dir, in); err != nil {
				t.Fatal(err)
			}
			recs, err := st.Records(run)
			if err != nil {
				t.Fatal(err)
			}
			i, err := undo.Select(recs, "")
			if err != nil {
				t.Fatal(err)
			}
			if recs[i].Call != "toolu_"+name {
				t.Fatalf("--last chose checkpoint #%d (%s %q), not the call", i+1, recs[i].Kind, recs[i].Call)
			}
			res, err := st.Undo(ctx, undo.UndoInput{Run: run, To: i, What: "undo --last"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Differs != "" {
				t.Errorf("the store says the undo left a difference: %s", res.Differs)
			}
			if d := undotest.Diff(before, undotest.Take(t, dir)); d != "" {
				t.Errorf("after undo, the work tree differs from before %s:\n%s", script, d)
			}
			if got := undotest.Rows(t, dir); got != rows {
				t.Errorf("after undo the table reads %q, want %q", got, rows)
			}
			if out := undotest.Git(t, dir, "fsck", "--no-dangling"); strings.Contains(out, "missing") {
				t.Errorf("git fsck after the undo: %s", out)
			}
		})
	}
}

// What a call changed is kept in the next checkpoint, read off git add and
// the private index: added, modified and deleted files with what the
// overwritten and deleted ones held, the refs that moved, the stash list;
// it agrees with git diff-tree between the two checkpoints. A laserbrain
// home inside the work tree is never recorded.
func TestCheckpointKeepsWhatTheCallChanged(t *testing.T) {
	dir := fixture(t)
	st := &undo.Store{Dir: filepath.Join(dir, "lbhome", "undo")}
	ctx := context.Background()
	in := undo.Input{Run: "changes", Kind: undo.KindStart, Include: []string{undotest.DB}}
	if _, err := st.Capture(ctx, dir, in); err != nil {
		t.Fatal(err)
	}
	in.Kind, in.Call = undo.KindCall, "toolu_1"
	if _, err := st.Capture(ctx, dir, in); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "rm src/util.go src/new.go && printf 'overwritten\\n' > src/main.go && echo added > src/added.go && git branch -q -D feature && git stash drop -q")
	in.Call = "toolu_2"
	got, err := st.Capture(ctx, dir, in)
	if err != nil {
		t.Fatal(err)
	}
	ch := got.Record.Changed
	if ch == nil || got.Record.Since != 2 {
		t.Fatalf("the checkpoint keeps no change since #2: %+v", got.Record)
	}
	want := undo.Files{Added: 1, Modified: 1, Deleted: 2}
	if ch.Files != want || strings.Join(ch.Added, ",") != "src/added.go" || strings.Join(ch.Modified, ",") != "src/main.go" ||
		strings.Join(ch.Deleted, ",") != "src/new.go,src/util.go" {
		t.Errorf("files: %+v (added %v modified %v deleted %v), want %+v", ch.Files, ch.Added, ch.Modified, ch.Deleted, want)
	}
	// What the deleted and overwritten files held, by git's own count.
	lost := 0
	for _, p := range []string{"src/util.go", "src/new.go", "src/main.go"} {
		lost += len(undotest.Git(t, dir, "--git-dir", storeGit(t, st), "cat-file", "-p", got.Before.Tree+":"+p))
	}
	if ch.LostBytes != int64(lost) {
		t.Errorf("lost %d bytes, git cat-file says %d", ch.LostBytes, lost)
	}
	if len(ch.Refs) != 2 || ch.Refs[0].Name != "refs/heads/feature" || ch.Refs[0].To != "" || ch.Refs[1].Name != "refs/stash" || !ch.Stash || ch.StashBefore != 2 || ch.StashAfter != 1 {
		t.Errorf("refs and stash: %+v", ch)
	}
	recs, err := st.Records("changes")
	if err != nil {
		t.Fatal(err)
	}
	diff, err := st.Diff(ctx, recs[1], recs[2])
	if err != nil {
		t.Fatal(err)
	}
	if diff.Summary() != ch.Summary() {
		t.Errorf("git diff-tree says %q, the checkpoint kept %q", diff.Summary(), ch.Summary())
	}
	// The home lies in the work tree, untracked and not ignored: no
	// checkpoint holds it.
	for _, r := range recs {
		ls := undotest.Git(t, dir, "--git-dir", storeGit(t, st), "ls-tree", "-r", "--name-only", r.Tree)
		if strings.Contains(ls, "lbhome/") {
			t.Fatalf("checkpoint #%d holds the laserbrain home:\n%s", r.Seq, ls)
		}
	}
}

// storeGit is the store repository of the store's one work tree.
func storeGit(t *testing.T, st *undo.Store) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(st.Dir, "repos"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("the store's work trees: %v %v", ents, err)
	}
	return filepath.Join(st.Dir, "repos", ents[0].Name(), "git")
}

// A budgeted checkpoint (a hook's) that overran its deadline marks the
// work tree: budgeted checkpoints skip it for a while (ErrSlow) instead of
// each spending its budget; an unbudgeted one (laserbrain run's start)
// goes through and clears the mark.
func TestSlowWorkTreeIsSkippedByHooks(t *testing.T) {
	dir := fixture(t)
	st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Capture(gone, dir, undo.Input{Run: "slow", Kind: undo.KindCall, Budgeted: true}); err == nil {
		t.Fatal("a checkpoint past its deadline succeeded")
	}
	if _, err := st.Capture(context.Background(), dir, undo.Input{Run: "slow", Kind: undo.KindCall, Budgeted: true}); !errors.Is(err, undo.ErrSlow) {
		t.Fatalf("the next budgeted checkpoint: %v, want ErrSlow", err)
	}
	if _, err := st.Capture(context.Background(), dir, undo.Input{Run: "slow", Kind: undo.KindStart}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Capture(context.Background(), dir, undo.Input{Run: "slow", Kind: undo.KindCall, Budgeted: true}); err != nil {
		t.Fatalf("after an unbudgeted checkpoint: %v", err)
	}
}
