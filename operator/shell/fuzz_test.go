package shell

import (
	"strings"
	"testing"
)

// FuzzParseGit: git's option parser model never panics on any command line
// of any covered subcommand, positionals are words of the input, and words
// after "--" are always positionals.
func FuzzParseGit(f *testing.F) {
	for _, s := range []string{"--mirr origin", "-qf main", "--no-f x", "-bfeature", "--force-with-lease=a:b -- -f", "--n", "--no-no-verify", "-", "--", "--end-of-options -f", "-h", "--help"} {
		f.Add("push", s)
		f.Add("checkout", s)
	}
	f.Fuzz(func(t *testing.T, sub, line string) {
		if _, ok := gitOptionSpec(sub); !ok {
			sub = "push"
		}
		var args []arg
		for _, w := range strings.Fields(line) {
			args = append(args, arg{val: w, known: true})
		}
		p := parseGit(gitTable(sub), args)
		words := map[string]bool{}
		for _, w := range args {
			words[w.val] = true
		}
		for _, pos := range p.positionals {
			if !words[pos] {
				t.Fatalf("positional %q is not an input word", pos)
			}
		}
		if p.bad != "" || p.help {
			return
		}
		tail := parseGit(gitTable(sub), append(append([]arg{}, args...), arg{val: "--", known: true}, arg{val: "-f", known: true}))
		if tail.bad == "" && !tail.help && (len(tail.positionals) == 0 || tail.positionals[len(tail.positionals)-1] != "-f") {
			t.Fatalf("a word after -- was read as an option: %+v", tail)
		}
	})
}

// FuzzGetopt: the getopt_long model of rm and xargs never panics, and its
// operands are input words.
func FuzzGetopt(f *testing.F) {
	for _, s := range []string{"--rec --for x", "-rf x", "-I{} sh -c {}", "--max-a=1 rm", "-0 -n1 rm -r -f", "--", "-e", "-i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args []arg
		words := map[string]bool{}
		for _, w := range strings.Fields(line) {
			args = append(args, arg{val: w, known: true})
			words[w] = true
		}
		for _, spec := range []*getoptSpec{&rmOptions, &xargsOptions} {
			r := spec.parse(args)
			for _, o := range r.operands {
				if !words[o.val] {
					t.Fatalf("operand %q is not an input word", o.val)
				}
			}
		}
		for _, item := range xargsSplit(line) {
			_ = item
		}
	})
}
