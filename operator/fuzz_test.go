package operator

import (
	"slices"
	"strings"
	"testing"
)

// FuzzClassify: any input classifies without panicking, the full classifier
// only adds to the reference layer, and nothing relaxes a declaration.
// Hangs are bounded by the regexp2 match timeout and the command budget.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"git push origin +main", "ls -la", "sudo -u x rm -r -f d", "bash -c 'git push -f'",
		"find . -exec rm {} +", "git -c alias.p=push p --force", "echo 'npm publish' | sh",
		"cat <<EOF | bash\nrm -rf x\nEOF", "X=rm; $X -rf d", "wrangler deploy --name laserbrain-mcp-remote",
		"python3 -c 'import shutil; shutil.rmtree(1)'", "echo \"unclosed", "$(", "a=$(b=$(c)) ; ${x:-$(rm -rf y)}",
		"git push \\\n --force", "xargs -I{} sh -c '{}'", "parallel ::: 'rm -r -f a'",
		"git push --mirr", "git reset -q --hard", "git checkout -bfeature", "echo 'rm -rf x' | xargs -I{} bash -c '{}'",
		"parallel sh -c 'rm -rf {}' ::: build", "find . -name -delete -print", "git -c core.pager='rm -rf x' log",
		"$(echo $(echo $(echo rm))) -rf x", "( ( ( ls ) ) )", "git stash drop stash@{1}", "rm --rec --for x",
	} {
		f.Add(s, true, false)
	}
	for _, c := range dcgCases(f) {
		f.Add(c.command, true, false)
	}
	f.Fuzz(func(t *testing.T, cmd string, reversible, outward bool) {
		ref := ClassifyGrammar(cmd, reversible, outward)
		r := Classify(cmd, reversible, outward)
		if strings.Contains(ref.Why+r.Why, errTimeout.Error()) || strings.Contains(r.Why, "stopped after") {
			// A budget ran out in one call and not the other (the fuzzer
			// loads the machine): the two are no longer the same scan.
			return
		}
		if len(r.Labels) < len(ref.Labels) || !slices.Equal(r.Labels[:len(ref.Labels)], ref.Labels) {
			t.Fatalf("labels %q do not start with the grammar's %q", r.Labels, ref.Labels)
		}
		for _, l := range r.Labels[len(ref.Labels):] {
			if !strings.HasPrefix(l, "parsed: ") {
				t.Fatalf("parsed-view label without prefix: %q", l)
			}
		}
		if (r.Reversible && !reversible) || (ref.Reversible && !reversible) || (outward && !r.Outward) {
			t.Fatalf("a declaration was relaxed: declared (%v, %v), got %+v", reversible, outward, r.Verdict)
		}
		if len(r.Labels) > 0 && r.Reversible {
			t.Fatalf("labels but reversible: %+v", r.Verdict)
		}
		if len(r.Labels) == 0 && (r.Reversible != reversible || r.Outward != outward) {
			t.Fatalf("no labels but the declaration changed: %+v", r.Verdict)
		}
		if r.Decision == Allow {
			for _, fd := range r.Findings {
				if !fd.CarvedOut {
					t.Fatalf("allowed with an uncovered finding %+v", fd)
				}
			}
		}
	})
}

// FuzzParseGit: git's option parser model never panics on any command line
// of any covered subcommand, positionals are words of the input, and words
// after "--" are always positionals.
func FuzzParseGit(f *testing.F) {
	for _, s := range []string{"--mirr origin", "-qf main", "--no-f x", "-bfeature", "--force-with-lease=a:b -- -f", "--n", "--no-no-verify", "-", "--", "--end-of-options -f", "-h", "--help"} {
		f.Add("push", s)
		f.Add("checkout", s)
	}
	f.Fuzz(func(t *testing.T, sub, line string) {
		table, ok := gitOptionTables[sub]
		if !ok {
			sub, table = "push", gitOptionTables["push"]
		}
		_ = table
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
