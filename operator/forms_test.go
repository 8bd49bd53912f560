package operator

import (
	"os"
	"path/filepath"
	"testing"
)

// Forms of destructive commands as the tools read them (abbreviated long
// options, options after positionals, clustered flags, shells fed by
// xargs or parallel), and commands that only look destructive, each with
// the answer it must get. The destructive ones were confirmed with git
// 2.39 (and the oracle sweep, oracle_test.go); the others do nothing.
func TestCommandForms(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"file.txt", "list.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		cmd  string
		want Answer
	}{
		// git accepts any unambiguous prefix of a long option.
		{"git push --mirr", Deny},
		{"git push --mirr backup", Deny},
		{"git push origin --del feature", Deny},
		{"git reset --ha", Deny},
		{"git clean --forc", Deny},
		{"git branch -d --forc feature", Deny},
		// Options before or after positionals, clustered short flags.
		{"git reset -q --hard", Deny},
		{"git reset HEAD~1 --hard", Deny},
		{"git switch -qf main", Deny},
		// Paths checked out from a tree-ish or a file list.
		{"git checkout HEAD file.txt", Deny},
		{"git checkout main -- file.txt", Deny},
		{"git checkout --pathspec-from-file=list.txt", Deny},
		{"git checkout file.txt", Deny},
		{"git read-tree -u --reset HEAD", Deny},
		{"git worktree remove --force wt", Deny},
		// Shells fed by xargs or parallel; env - and toybox as wrappers.
		{"echo 'rm -rf build' | xargs -I{} bash -c '{}'", Deny},
		{"echo '\"rm -rf build\"' | xargs bash -c", Deny},
		{"echo 'rm -rf build' | xargs bash -c", Deny},
		{"find . -name '*.sh' | xargs bash -c", Deny},
		{"parallel sh -c 'rm -rf {}' ::: build", Deny},
		{"parallel sh -c ::: 'rm -rf build'", Deny},
		{"parallel ::: 'rm -rf build'", Deny},
		{"env - rm -rf build", Deny},
		{"env - PATH=/bin rm -rf build", Deny},
		{"toybox rm -rf build", Deny},
		{"busybox rm -rf build", Deny},
		// Irreversible actions the pack lacked.
		{"rsync -a --delete src/ backup/", Deny},
		{"crontab -r", Deny},
		{"fly apps destroy my-app", Deny},
		// Denials nobody can defend.
		{"npm publish --dry-run", Ask},
		{"git checkout -bfeature", Allow},
		{"git restore --help", Allow},
		{"git switch -- -f", Allow},
		{"find . -name -delete -print", Allow},
		// Dry runs and help requests: ask, not deny.
		{"git clean -n", Ask},
		{"git clean -fn", Ask},
		{"git push -n --force", Ask},
		{"git push --dry-run origin +main", Ask},
		{"git push --force --help", Ask},
	}
	for _, c := range cases {
		r := classifyIn(dir, c.cmd)
		if r.Decision != c.want {
			t.Errorf("%q: %s, want %s (%s)", c.cmd, r.Decision, c.want, r.Why)
		}
	}
}

func TestPrintfSubstitution(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want Answer
	}{
		{"git push origin $(printf -- --force) main", Deny},
		{`git push origin "$(printf '%s' +main)"`, Deny},
		{`git push origin "$(printf '%s:%s' '' main)"`, Deny},
		{`git push origin "$(printf '%d' 1)"`, Ask},
		{`git push origin "$(printf main)"`, Allow},
	} {
		if r := classify(c.cmd); r.Decision != c.want {
			t.Errorf("%q: %s, want %s (%s)", c.cmd, r.Decision, c.want, r.Why)
		}
	}
}
