package shell_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/internal/dcg"
	"github.com/laserkit/laserkit/operator/shell"
)

// FuzzAnalyze: any input is analysed under the production limits (the
// wall clock) without panicking and within the budget (in CPU time of the
// analysing thread, which a loaded machine does not stretch; an analysis
// that ran past the budget in wall time must have stopped and said
// so), the analysis only adds to the reference layer, nothing relaxes a declaration, and nothing is allowed with a
// finding that counts.
func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, true, false)
	}
	for _, c := range dcgCases(f) {
		f.Add(c.Command, true, false)
	}
	f.Fuzz(func(t *testing.T, cmd string, reversible, outward bool) {
		if len(cmd) > 1<<20 {
			return
		}
		ref := shell.ClassifyGrammar(cmd, reversible, outward)
		an, cpu, wall := shell.TimedAnalyze(shell.ProductionLimits, cmd)
		if cpu > shell.AnalysisBudget {
			t.Fatalf("analysis took %v of CPU (budget %v): %q", cpu, shell.AnalysisBudget, trim(cmd))
		}
		if wall > shell.AnalysisBudget+shell.MatchTimeout+50*time.Millisecond && an.Complete {
			t.Fatalf("analysis took %v and says it is complete: %q", wall, trim(cmd))
		}
		r := an.Escalate(reversible, outward)
		if strings.Contains(ref.Why+r.Why, shell.ErrTimeout.Error()) || strings.Contains(r.Why, "stopped after") {
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
		for _, p := range []operator.Presence{operator.Attended, operator.Unattended} {
			d := operator.Decide(an, p, operator.RunState{Read: true}, operator.Policy{})
			if d.Action == operator.Allow && d.Context == "" {
				for _, fd := range an.Findings {
					if !fd.CarvedOut {
						t.Fatalf("%s: allowed silently with an uncovered finding %+v", p, fd)
					}
				}
			}
			if !an.Complete && d.Action == operator.Allow && d.Rule == operator.RuleNothing && hasRole(an.Findings, shell.Unknown) {
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

// dcgCases reads the peer corpus in operator/testdata/dcg.
func dcgCases(t testing.TB) []dcg.Case {
	t.Helper()
	cs, err := dcg.Cases("../testdata/dcg")
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func hasRole(fs []shell.Finding, w shell.Where) bool {
	return slices.ContainsFunc(fs, func(f shell.Finding) bool { return f.Where == w })
}
