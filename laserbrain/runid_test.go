package laserbrain

import (
	"regexp"
	"strings"
	"testing"
)

// The run id rule, as the regular expression it is documented as: the
// byte-by-byte check must agree with it on every id.
var runIDRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func FuzzValidateRunIDIsItsPattern(f *testing.F) {
	for _, id := range []string{"", "a", "9x", "-a", ".a", "a.b_c-d", "a b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n", "A_"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := ValidateRunID(id) == nil, runIDRule.MatchString(id); got != want {
			t.Fatalf("ValidateRunID(%q) accepts: %v, the pattern: %v", id, got, want)
		}
	})
}
