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
	} {
		f.Add(s, true, false)
	}
	for _, c := range dcgCases(f) {
		f.Add(c.command, true, false)
	}
	f.Fuzz(func(t *testing.T, cmd string, reversible, outward bool) {
		ref := ClassifyGrammar(cmd, reversible, outward)
		r := Classify(cmd, reversible, outward)
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
