package shell

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// Which unquoted words are patterns is bash's to say: in an empty
// directory under nullglob a pattern that matches nothing disappears and
// any other word stays. A lone [ (the test command) is no pattern; a
// closed bracket expression is.
func TestGlobAsBashSeesIt(t *testing.T) {
	bash := testenv.LookPath(t, "bash")
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
