package operator

import (
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FuzzAnalyze: any input is analysed under the production limits (the
// wall clock) without panicking and within the budget (in CPU time of the
// analysing thread, which a loaded machine does not stretch; an analysis
// that ran past the budget in wall time must have stopped and said so), the analysis only adds to the reference
// layer, nothing relaxes a declaration, and nothing is allowed with a
// finding that counts.
func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, true, false)
	}
	for _, c := range dcgCases(f) {
		f.Add(c.command, true, false)
	}
	f.Fuzz(func(t *testing.T, cmd string, reversible, outward bool) {
		if len(cmd) > 1<<20 {
			return
		}
		ref := ClassifyGrammar(cmd, reversible, outward)
		an, cpu, wall := timedAnalyze(productionLimits, cmd)
		if cpu > AnalysisBudget {
			t.Fatalf("analysis took %v of CPU (budget %v): %q", cpu, AnalysisBudget, trim(cmd))
		}
		if wall > AnalysisBudget+MatchTimeout+50*time.Millisecond && an.Complete {
			t.Fatalf("analysis took %v and says it is complete: %q", wall, trim(cmd))
		}
		r := an.Escalate(reversible, outward)
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
			t.Fatalf("a declaration was relaxed: declared (%v, %v), got %+v", reversible, outward, r)
		}
		if len(r.Labels) > 0 && r.Reversible {
			t.Fatalf("labels but reversible: %+v", r)
		}
		if len(r.Labels) == 0 && (r.Reversible != reversible || r.Outward != outward) {
			t.Fatalf("no labels but the declaration changed: %+v", r)
		}
		for _, p := range []Presence{Attended, Unattended} {
			d := Decide(an, p, RunState{Read: true}, Policy{})
			if d.Action == Allow && d.Context == "" {
				for _, fd := range an.Findings {
					if !fd.CarvedOut {
						t.Fatalf("%s: allowed silently with an uncovered finding %+v", p, fd)
					}
				}
			}
			if !an.Complete && d.Action == Allow && d.Rule == RuleNothing && hasRole(an.Findings, Unknown) {
				t.Fatalf("%s: an incomplete analysis allowed: %+v", p, an.Findings)
			}
		}
	})
}

var fuzzSeeds = []string{
	"find . -name '*.go' -exec truncate -s 0 {} +", "find . | xargs sh -c ': > \"$0\"'", "truncate -s0 *.go",
	`sqlite3 app.db "WITH k AS (SELECT 1) DELETE FROM users WHERE 1=1"`, "IFS=x; c=rmx-rf; $c /tmp/foo", "chmod -R 000 .",
	"git push origin +main", "ls -la", "sudo -u x rm -r -f d", "bash -c 'git push -f'",
	"find . -exec rm {} +", "git -c alias.p=push p --force", "echo 'npm publish' | sh",
	"cat <<EOF | bash\nrm -rf x\nEOF", "X=rm; $X -rf d", "wrangler deploy --name laserbrain-mcp-remote",
	"python3 -c 'import shutil; shutil.rmtree(1)'", "echo \"unclosed", "$(", "a=$(b=$(c)) ; ${x:-$(rm -rf y)}",
	"git push \\\n --force", "xargs -I{} sh -c '{}'", "parallel ::: 'rm -r -f a'",
	"git push --mirr", "git reset -q --hard", "git checkout -bfeature", "echo 'rm -rf x' | xargs -I{} bash -c '{}'",
	"parallel sh -c 'rm -rf {}' ::: build", "find . -name -delete -print", "git -c core.pager='rm -rf x' log",
	"$(echo $(echo $(echo rm))) -rf x", "( ( ( ls ) ) )", "git stash drop stash@{1}", "rm --rec --for x",
	"{rm,-rf,d}", "f() { \"$@\"; }; f rm -rf d", "alias x='git push -f'\nx", "trap 'rm -rf d' EXIT",
	"bash 3<<<'rm -rf d' /dev/fd/3", "source <(echo rm -rf d)", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf d' git x",
	"npm --registry=x publ", "cargo +nightly publish", "echo 'rm -rf d' > s.sh; bash s.sh", "sed -n 'e rm -rf d' f",
	"python3 -c \"import subprocess as s; s.run(['rm','-rf','d'])\"", "mv -t .git/hooks x", "$'\\u0072m' -rf d",
}

// timedAnalyze analyses cmd under l on one locked OS thread and returns
// the CPU time that thread spent, and the wall time.
func timedAnalyze(l limits, cmd string) (Analysis, time.Duration, time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadCPU()
	start := time.Now()
	an := analyzeUnder(l, cmd, "")
	wall := time.Since(start)
	return an, threadCPU() - before, wall
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLimits are the production limits read on the calling thread's CPU
// clock (timedAnalyze locks the thread): a budget of work, which the load
// on the machine does not shorten. regexp2 still reads a match's timeout
// on the wall clock.
var cpuLimits = limits{total: AnalysisBudget, match: MatchTimeout, now: func() time.Time { return time.Unix(0, int64(threadCPU())) }}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

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
