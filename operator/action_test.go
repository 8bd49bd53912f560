package operator

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
)

// One action, one key: however a command is quoted or spaced, and whether
// a person gives it as words or as a line, the key is the same; a
// different command has another.
func TestActionKeyNamesOneAction(t *testing.T) {
	same := [][]string{
		{`git commit -m "a b"`, `git commit -m 'a b'`, `git  commit   -m a\ b`, CommandKey("git", "commit", "-m", "a b")},
		{"git push --force origin main", CommandKey("git", "push", "--force", "origin", "main"), CommandKey("git push  --force origin main")},
		{"env FOO=bar make", CommandKey("env", "FOO=bar", "make")},
		{"rm *.txt", CommandKey("rm *.txt"), "rm  *.txt"},
		{"write /tmp/x y", "write /tmp/x  y"},
	}
	for _, forms := range same {
		want := ActionKey(forms[0])
		for _, f := range forms[1:] {
			if got := ActionKey(f); got != want {
				t.Errorf("%q keys as %q, %q as %q: one action, two keys", forms[0], want, f, got)
			}
		}
	}
	differ := [][2]string{
		{`git commit -m "a b"`, CommandKey("git", "commit", "-m", "a", "b")},
		{"rm *.txt", CommandKey("rm", "*.txt")},
		{"rm -rf build", "rm -rf build2"},
		{`echo "$HOME"`, `echo "$HOME2"`},
	}
	for _, d := range differ {
		if ActionKey(d[0]) == ActionKey(d[1]) {
			t.Errorf("%q and %q key as one action (%q)", d[0], d[1], ActionKey(d[0]))
		}
	}
}

// The key of a simple command is a line bash reads back as the same
// words; a key is its own key.
func TestActionKeyReadsBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is not installed: %v", err)
	}
	for _, words := range [][]string{{"git", "commit", "-m", "it's done"}, {"printf", "%s", "a=b", "$x", "*"}, {"A=b", "c"}} {
		k := CommandKey(words...)
		if k != ActionKey(k) {
			t.Errorf("%q: key %q keys again as %q", words, k, ActionKey(k))
		}
		// The key's words as bash splits them, printed NUL-separated.
		out, err := exec.Command(bash, "-c", `f() { printf '%s\0' "$@"; }; f `+k).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", k, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if strings.Join(got, "\x00") != strings.Join(words, "\x00") {
			t.Errorf("key %q reads back in bash as %q, want %q", k, got, words)
		}
	}
}

// The decision's action is the key of the command's text: read from the
// analysis's own words, it is what ActionKey makes of the text, for every
// command of the peer corpus and our own.
func TestDecisionTargetIsTheActionKey(t *testing.T) {
	n := 0
	for _, c := range dcgCases(t) {
		an := shell.Analyze(c.Command, "")
		if strings.Contains(an.Why, "analysis took too long") {
			continue
		}
		if got, want := Decide(an, Attended, RunState{Read: true}, Policy{}).Target, ActionKey(c.Command); got != want {
			t.Errorf("%s: the decision's action %q, ActionKey %q", c.Source, got, want)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d commands compared", n)
	}
}
