package undo_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// TestWatchedSeesEveryChange makes each kind of change to a work tree a
// watch follows (as laserbrain run's process does), between two of its
// checkpoints, and holds each checkpoint to what a store that never saw
// the work tree records for the same files, refs and index (its git add
// compares nothing it kept), and what the checkpoint says changed to git's
// diff of the two trees. Then one more file is modified and checkpointed,
// so a change the watch had to send the whole way leaves it watching what
// is there now (a new directory's files included). Tracked files' edits
// must be written from the watch's paths: no git add.
func TestWatchedSeesEveryChange(t *testing.T) {
	changes := map[string]string{
		"modified":               "printf 'package main\\n\\nfunc main() { println() }\\n' > src/main.go",
		"same-size-rewrite":      "printf 'package main\\n\\nfunc mian() {}\\n' > tmp && touch -r src/main.go tmp && mv tmp src/main.go",
		"appended-twice":         "echo a >> src/main.go && echo b >> src/util.go",
		"removed":                "rm src/util.go",
		"mode":                   "chmod +x src/main.go",
		"renamed":                "mv src/util.go src/util2.go",
		"renamed-out":            "mv src/util.go ../util.go",
		"renamed-in":             "echo in > ../in.txt && mv ../in.txt src/in.txt",
		"replaced-by-rename":     "echo new > ../n && mv ../n src/main.go",
		"new-file":               "echo x > src/new.go",
		"new-dir-and-files":      "mkdir -p fresh/a/b && echo 1 > fresh/a/b/one && echo 2 > fresh/two",
		"dir-moved-in":           "mkdir -p ../outdir/sub && echo o > ../outdir/sub/f && mv ../outdir src/outdir",
		"dir-moved-out":          "mv src/pkg1 ../pkg1",
		"dir-renamed":            "mv src/pkg2 src/pkg9",
		"dir-removed":            "rm -rf src",
		"dir-emptied":            "rm src/pkg3/file.go",
		"symlink-made":           "ln -s src/main.go link",
		"file-to-symlink":        "rm src/util.go && ln -s main.go src/util.go",
		"file-to-dir":            "rm src/util.go && mkdir src/util.go && echo d > src/util.go/x",
		"gitignore-unignores":    "printf 'data/*.db\\n' > .gitignore",
		"info-exclude":           "printf 'src/pkg0/\\n' >> .git/info/exclude && touch src/pkg0/new.go",
		"included-data":          "sqlite3 data/app.db 'DROP TABLE users'",
		"commit":                 "git add -A && git commit -q -m next",
		"branch-deleted":         "git branch -D feature",
		"stash-dropped":          "git stash drop -q",
		"staged":                 "echo s >> src/main.go && git add src/main.go",
		"reset-hard":             "git reset -q --hard HEAD~1",
		"checkout-dot":           "git checkout -- .",
		"hard-link-from-outside": "echo via-link >> ../linked",
	}
	for name, script := range changes {
		t.Run(name, func(t *testing.T) {
			testenv.LookPath(t, "sqlite3")
			adds := gitLog(t)
			dir := fixture(t)
			// A link to a tracked file from outside the work tree, made
			// before the watch: a write through it tells src/ nothing.
			sh(t, dir, "ln src/pkg4/file.go ../linked")
			st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
			w, err := st.Watch(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			in := undo.Input{Run: "run-" + name, Kind: undo.KindCall, Include: []string{undotest.DB}}
			capture(t, st, dir, in, "toolu_1")
			sh(t, dir, "echo warm >> src/pkg5/file.go")
			adds()
			warm := capture(t, st, dir, in, "toolu_2")
			if n := adds(); n != 0 {
				t.Fatalf("a tracked file's edit under a watch ran git add %d times", n)
			}
			same(t, st, dir, in, warm, "toolu_2", "a tracked file's edit")
			sh(t, dir, script)
			got := capture(t, st, dir, in, "toolu_3")
			same(t, st, dir, in, got, "toolu_3", script)
			changed(t, st, warm, got, script)
			adds()
			sh(t, dir, "echo again >> README.md; for f in fresh/a/b/one src/outdir/sub/f src/pkg9/file.go src/in.txt; do [ ! -f $f ] || echo later >> $f; done")
			again := capture(t, st, dir, in, "toolu_4")
			if n := adds(); n != 0 {
				t.Errorf("after %q, tracked files' edits ran git add %d times", script, n)
			}
			same(t, st, dir, in, again, "toolu_4", "a change after "+script)
			changed(t, st, got, again, "a change after "+script)
			fsck(t, st)
		})
	}
}

// same holds a checkpoint (a watched one, or one that found the tree
// quiet) to a fresh store's of the same state.
func same(t *testing.T, st *undo.Store, dir string, in undo.Input, got undo.Captured, call, after string) {
	t.Helper()
	fresh := capture(t, &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}, dir, in, call)
	if got.Record.Tree != fresh.Record.Tree || got.Record.Refs != fresh.Record.Refs || got.Record.Stash != fresh.Record.Stash || got.Record.Index != fresh.Record.Index {
		t.Errorf("after %q the checkpoint recorded tree %s refs %s stash %s index %s; a fresh store records %s %s %s %s",
			after, got.Record.Tree, got.Record.Refs, got.Record.Stash, got.Record.Index,
			fresh.Record.Tree, fresh.Record.Refs, fresh.Record.Stash, fresh.Record.Index)
	}
}

// changed holds what a checkpoint says changed to git's diff of the two
// checkpoints.
func changed(t *testing.T, st *undo.Store, a, b undo.Captured, after string) {
	t.Helper()
	want, err := st.Diff(context.Background(), a.Record, b.Record)
	if err != nil {
		t.Fatal(err)
	}
	var got undo.Change
	if b.Record.Changed != nil {
		got = *b.Record.Changed
	}
	if !slices.Equal(got.Added, want.Added) || !slices.Equal(got.Modified, want.Modified) || !slices.Equal(got.Deleted, want.Deleted) ||
		got.LostBytes != want.LostBytes || len(got.Refs) != len(want.Refs) || got.Stash != want.Stash || got.Index != want.Index {
		t.Errorf("after %q the checkpoint says %q; git's diff of the two says %q", after, got.Summary(), want.Summary())
	}
}

// fsck has git check every object of the store (the packs a watched
// checkpoint wrote included) and that every checkpoint's tree is whole.
func fsck(t *testing.T, st *undo.Store) {
	t.Helper()
	gits, _ := filepath.Glob(filepath.Join(st.Dir, "repos", "*", "git"))
	if len(gits) != 1 {
		t.Fatalf("%d object stores", len(gits))
	}
	undotest.Git(t, gits[0], "fsck", "--strict", "--no-dangling", "--no-progress")
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		recs, err := st.Records(r.Run)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			undotest.Git(t, gits[0], "ls-tree", "-r", rec.Tree)
		}
	}
}

// TestWatchedPacksAreMerged: the packs watched checkpoints write are
// merged as they pile up (while checkpoints go on) and by git when the
// watch ends; git's fsck finds every object whole, and every checkpoint's
// tree is read.
func TestWatchedPacksAreMerged(t *testing.T) {
	dir := fixture(t)
	st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
	w, err := st.Watch(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := undo.Input{Run: "run-packs", Kind: undo.KindCall}
	capture(t, st, dir, in, "toolu_0")
	const calls = 100
	for i := 1; i <= calls; i++ {
		undotest.Write(t, dir, "src/main.go", fmt.Sprintf("package main\n\n// call %d\n", i))
		capture(t, st, dir, in, fmt.Sprintf("toolu_%d", i))
	}
	w.Close()
	packs, _ := filepath.Glob(filepath.Join(st.Dir, "repos", "*", "git", "objects", "pack", "*.pack"))
	if len(packs) == 0 || len(packs) > 8 {
		t.Errorf("%d packs after %d watched checkpoints and the watch's end", len(packs), calls)
	}
	fsck(t, st)
}
