package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}, {-1, "-1 files"}, {1 << 40, "1099511627776 files"}} {
		if got := Plural(c.n, "file"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Plural(3, "step"); got != "3 steps" {
		t.Errorf("Plural(int 3) = %q", got)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"héllo wörld", 5, "héll…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"abc", 1, "…"},
		{"abc", 0, "…"},
		{"a", 0, "a"},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// Clip's promises over arbitrary text: never longer than n runes, a prefix
// of s (less the ellipsis), valid UTF-8 whenever s is.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "a", "日本語のテキスト", "x\xffy", strings.Repeat("é", 40)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n % 1000
		got := Clip(s, n)
		if got == s {
			if utf8.RuneCountInString(s) > max(n, 1) {
				t.Fatalf("Clip(%q, %d) kept all of it", s, n)
			}
			return
		}
		if utf8.RuneCountInString(got) != max(n, 1) {
			t.Fatalf("Clip(%q, %d) = %q: %d runes", s, n, got, utf8.RuneCountInString(got))
		}
		head, ok := strings.CutSuffix(got, "…")
		if !ok || !strings.HasPrefix(s, head) {
			t.Fatalf("Clip(%q, %d) = %q: not a prefix and an ellipsis", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q cut a character", s, n, got)
		}
	})
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"", ""},
		{"one", "one"},
		{"  a\n\tb \r\n c  ", "a b c"},
		{"pq: relation\n  \"x\" does not exist", `pq: relation "x" does not exist`},
		{"\n\n", ""},
	} {
		if got := OneLine(c.s); got != c.want {
			t.Errorf("OneLine(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}
