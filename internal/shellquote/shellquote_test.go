package shellquote

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shells are the shells a quoted word must read back in: sh (dash on
// Debian) and bash, each found on PATH.
func shells(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"sh", "bash"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s is not on PATH: the quoting is proven against it", name)
		}
		out = append(out, p)
	}
	return out
}

// echoBack runs `printf '%s\0' WORD…` in shell and returns the words it
// printed: the bytes the shell made of each quoted word.
func echoBack(t testing.TB, shell string, words []string) []string {
	t.Helper()
	script := `printf '%s\0' ` + Join(words)
	cmd := exec.Command(shell, "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -c %q: %v", shell, script, err)
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

func checkRoundTrip(t testing.TB, words []string) {
	t.Helper()
	for _, sh := range shells(t) {
		got := echoBack(t, sh, words)
		if len(got) != len(words) {
			t.Fatalf("%s: %d words back for %d: %q", sh, len(got), len(words), got)
		}
		for i := range words {
			if got[i] != words[i] {
				t.Errorf("%s: %q quoted as %s read back as %q", sh, words[i], Word(words[i]), got[i])
			}
		}
	}
}

// Words a shell would otherwise expand, split, redirect, glob, comment out
// or run, each read back as itself by real sh and bash.
func TestWordsReadBack(t *testing.T) {
	checkRoundTrip(t, []string{
		"", "plain", "two words", "it's", "'", "''", `\`, `"`, "$HOME", "${x:-y}", "`id`", "$(id)",
		"*", "?", "[a]", "~", "~root", "a=~", "#not a comment", "a#b", "!", "!!", "{a,b}", "a;b", "a&b",
		"a|b", "<in", ">out", "(x)", "\n", "line\nbreak", "tab\there", "\x01\x7f", "é日本", "\xff\xfe",
		"-n", "--flag=x", "%1", "^", "a\\\nb", "FOO=bar", "x=", "=x", "a b=c",
	})
}

// Random bytes (all but NUL) read back unchanged, many words to a shell.
func TestWordsReadBackFuzzed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := []byte("'\"\\$`!*?[]{}~#;&|<>() \t\n=%^,:@+-_./")
	words := make([]string, 2000)
	for i := range words {
		b := make([]byte, r.IntN(12))
		for j := range b {
			if r.IntN(2) == 0 {
				b[j] = special[r.IntN(len(special))]
			} else {
				b[j] = byte(1 + r.IntN(255))
			}
		}
		words[i] = string(b)
	}
	checkRoundTrip(t, words)
}

// The same through go test -fuzz: any string without a NUL reads back.
func FuzzWord(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", "$x", "A=b", "\xff", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("an argument cannot hold a NUL")
		}
		checkRoundTrip(t, []string{s})
	})
}

// A word that looks like an assignment stays a command at the head of a
// line: the shell runs the program named A=b instead of setting A.
func TestAssignmentStaysACommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "A=b"), []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sh := range shells(t) {
		cmd := exec.Command(sh, "-c", Join([]string{"A=b"}))
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Equal(out, []byte("ran\n")) {
			t.Errorf("%s -c %s: %q, %v; want the program A=b to run", sh, Join([]string{"A=b"}), out, err)
		}
	}
}

// What needs no quotes is left bare, so commands stay readable.
func TestPlainWordsStayBare(t *testing.T) {
	for _, s := range []string{"laserbrain", "/usr/local/bin/laserbrain-gate", "--client", "run-1.2_x", "a@b:c,d+e", "--format=x", "-n"} {
		if got := Word(s); got != s {
			t.Errorf("Word(%q) = %s, want it bare", s, got)
		}
	}
}

// Command leaves an assignment-like argument bare past the first word,
// and the shells still pass it as an argument; a first word that looks
// like one is quoted as Join quotes it.
func TestCommandArgumentsReadBack(t *testing.T) {
	args := []string{"FOO=bar", "a b", "x=", "git", "alias.x=!rm", "it's"}
	line := Command(append([]string{"printf", `%s\0`}, args...))
	if !strings.Contains(line, " FOO=bar ") || !strings.Contains(line, " x= ") {
		t.Errorf("Command quoted an argument that needs no quotes: %s", line)
	}
	for _, sh := range shells(t) {
		cmd := exec.Command(sh, "-c", line)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s -c %q: %v", sh, line, err)
		}
		got := strings.Split(string(out), "\x00")
		if got = got[:len(got)-1]; !slices.Equal(got, args) {
			t.Errorf("%s -c %s: %q, want %q", sh, line, got, args)
		}
	}
	if got := Command([]string{"A=b", "c"}); got != "'A=b' c" {
		t.Errorf("Command(A=b c) = %s, want the first word quoted", got)
	}
}
