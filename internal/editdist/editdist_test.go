package editdist

import "testing"

// Distances worked by hand (kitten → sitting is the textbook 3), and the
// cap: a limit at or below the distance answers the limit.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		a, b     string
		limit, d int
	}{
		{"", "", 10, 0}, {"goal", "gaol", 10, 2}, {"chek", "check", 10, 1},
		{"kitten", "sitting", 10, 3}, {"", "abc", 10, 3},
		{"kitten", "sitting", 3, 3}, {"kitten", "sitting", 2, 2},
		{"a", "abcdef", 3, 3}, {"src/f3.og", "f3.go", 99, 6},
	} {
		if got := Within(c.a, c.b, c.limit); got != c.d {
			t.Errorf("Within(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.d)
		}
	}
}
