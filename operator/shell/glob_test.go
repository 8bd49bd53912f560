package shell

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Which unquoted words are patterns is bash's to say: in an empty
// directory under nullglob a pattern that matches nothing disappears and
// any other word stays. A lone [ (the test command) is no pattern; a
// closed bracket expression is.
func TestGlobAsBashSeesIt(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		skipOrFailf(t, "bash is not installed: %v", err)
		return
	}
	words := []string{"[", "]", "[ab", "a[", "[]", "[!]", "[]]", "[!]]", "[a]", "d[12]", "r[m]x", "[!a]b",
		"[^a]", `\[a]`, "*", "a?", `a\*`, "x", "-e", "[[", "a[b\\]"}
	for _, w := range words {
		out, err := exec.Command(bash, "-c", "shopt -s nullglob; cd \"$1\" && for w in "+w+"; do printf '%s\\n' \"$w\"; done", "bash", t.TempDir()).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", w, err)
		}
		bashSays := strings.TrimSpace(string(out)) == ""
		if got := hasGlob(w); got != bashSays {
			t.Errorf("%q: hasGlob says %v, bash expands it as a pattern: %v", w, got, bashSays)
		}
	}
}

// skipOrFailf skips a test whose tool is missing, and fails it under
// CI=true (CI must install what the tests need).
func skipOrFailf(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Errorf("%s (CI: the tests need it)", msg)
		return
	}
	t.Skip(msg)
}
