package undo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// gitLog puts a git on PATH that logs each of its argument lists to a file
// and runs the real git, and returns a function reading how many of the
// logged git processes since the last read ran add.
func gitLog(t *testing.T) func() int {
	t.Helper()
	real := testenv.LookPath(t, "git")
	dir := t.TempDir()
	log := filepath.Join(dir, "git.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	read := 0
	return func() int {
		data, _ := os.ReadFile(log)
		lines := strings.Split(string(data), "\n")
		adds := 0
		for _, l := range lines[read:] {
			if strings.Contains(l, " add -A") {
				adds++
			}
		}
		read = len(lines) - 1
		return adds
	}
}

// pastRacyWindow returns once the clock is well past the last change to
// the fixture: a checkpoint trusts its stat walk only for entries older
// than a tenth of a second (a later write could land in the same tick of
// the file system's clock).
func pastRacyWindow(t *testing.T) {
	t.Helper()
	until := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(until) {
		time.Sleep(time.Until(until))
	}
}

// TestUnchangedTreeRunsNoGit: a checkpoint of a work tree nothing touched
// since the last one runs no git add and records the same tree; one more
// file makes it run git again.
func TestUnchangedTreeRunsNoGit(t *testing.T) {
	adds := gitLog(t)
	dir := fixture(t)
	st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
	in := undo.Input{Run: "run-quiet", Kind: undo.KindCall, Include: []string{undotest.DB}}
	pastRacyWindow(t)
	first := capture(t, st, dir, in, "toolu_1")
	if adds() == 0 {
		t.Fatal("the first checkpoints ran no git add")
	}
	second := capture(t, st, dir, in, "toolu_2")
	if n := adds(); n != 0 {
		t.Errorf("a checkpoint of an unchanged tree ran git add %d times", n)
	}
	if second.Record.Tree != first.Record.Tree || second.Record.Changed != nil {
		t.Errorf("unchanged tree: tree %s (was %s), changed %v", second.Record.Tree, first.Record.Tree, second.Record.Changed)
	}
	undotest.Write(t, dir, "src/new.go", "package main\n")
	third := capture(t, st, dir, in, "toolu_3")
	if adds() == 0 || third.Record.Tree == first.Record.Tree {
		t.Errorf("a new file: git add not run or the same tree recorded")
	}
}

// TestQuietSeesEveryChange makes each change to a work tree whose last
// checkpoint found it quiet, after the racy window (so only the stat walk
// can see it), and holds the next checkpoint to the tree a store that
// never saw the work tree records for the same files (its git add
// compares nothing it kept).
func TestQuietSeesEveryChange(t *testing.T) {
	changes := map[string]string{
		"same-size-rewrite":   "printf 'package main\\n\\nfunc mian() {}\\n' > tmp && touch -r src/main.go tmp && mv tmp src/main.go",
		"removed":             "rm src/util.go",
		"mode":                "chmod +x src/main.go",
		"renamed":             "mv src/util.go src/util2.go",
		"new-in-empty-dir":    "touch empty/one",
		"new-two-deep":        "touch hollow/a/b/deep.txt",
		"new-beside-ignored":  "touch onlyignored/kept.go",
		"symlink-retarget":    "ln -sfn src/util.go link",
		"gitignore-unignores": "printf 'data/*.db\\n' > .gitignore",
		"info-exclude":        "sed -i '/^[*][.]o$/d' .git/info/exclude",
		"included-data":       "sqlite3 data/app.db 'DROP TABLE users'",
	}
	for name, script := range changes {
		t.Run(name, func(t *testing.T) {
			testenv.LookPath(t, "sqlite3")
			adds := gitLog(t)
			dir := fixture(t)
			sh(t, dir, "mkdir -p empty hollow/a/b onlyignored && touch onlyignored/x.o && printf '*.o\\n' >> .git/info/exclude && ln -s src/main.go link")
			st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
			in := undo.Input{Run: "run-" + name, Kind: undo.KindCall, Include: []string{undotest.DB}}
			pastRacyWindow(t)
			capture(t, st, dir, in, "toolu_1")
			adds()
			quiet := capture(t, st, dir, in, "toolu_2")
			if n := adds(); n != 0 {
				t.Fatalf("the quiet fixture's second checkpoint ran git add %d times", n)
			}
			pastRacyWindow(t)
			sh(t, dir, script)
			pastRacyWindow(t)
			got := capture(t, st, dir, in, "toolu_3")
			same(t, st, dir, in, got, "toolu_3", script)
			if got.Record.Tree == quiet.Record.Tree {
				t.Errorf("after %q the checkpoint recorded the quiet tree %s: the change was missed", script, quiet.Record.Tree)
			}
		})
	}
}

// TestQuietLeavesNestedRepositoriesToGit: a repository inside the work
// tree (its commits are a gitlink, which no stat of its files tells) is
// never summed: every checkpoint runs git add.
func TestQuietLeavesNestedRepositoriesToGit(t *testing.T) {
	adds := gitLog(t)
	dir := fixture(t)
	undotest.Git(t, dir, "init", "-q", "vendored")
	undotest.Git(t, filepath.Join(dir, "vendored"), "commit", "-q", "--allow-empty", "-m", "theirs")
	st := &undo.Store{Dir: filepath.Join(t.TempDir(), "undo")}
	in := undo.Input{Run: "run-nested", Kind: undo.KindCall}
	pastRacyWindow(t)
	capture(t, st, dir, in, "toolu_1")
	adds()
	capture(t, st, dir, in, "toolu_2")
	if adds() == 0 {
		t.Error("a work tree holding a repository: the checkpoint ran no git add")
	}
}

func capture(t *testing.T, st *undo.Store, dir string, in undo.Input, call string) undo.Captured {
	t.Helper()
	in.Call, in.Tool, in.What = call, "Bash", "true"
	got, err := st.Capture(context.Background(), dir, in)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
