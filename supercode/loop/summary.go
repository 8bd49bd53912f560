package loop

import (
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
)

// Summary is the one account of a run printed when it ends, shaped as a
// paste into the launching thread: run id, exit status with the iteration
// counts (and why the loop stopped, when it did), the final verdict's
// summary, the journal's path — nothing else; deeper questions are
// answered by reading the journal.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ran laserbrain loop %s (run %s).\n", r.Script, r.RunID)
	fmt.Fprintf(&b, "Exit %d after %s", r.ExitCode, text.Plural(r.Iterations, "iteration"))
	if len(r.Calls) > 0 {
		var parts []string
		for _, c := range r.Calls {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, c.Name))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	switch r.Mode {
	case "soak":
		fmt.Fprintf(&b, ", judge soak %d/%d", r.Passed, r.Of)
	case "jury":
		fmt.Fprintf(&b, ", jury %d/%d passed", r.Passed, r.Of)
	}
	if r.Stopped {
		fmt.Fprintf(&b, "; stopped: %s", r.Reason)
	}
	b.WriteString(".\n")
	if r.Verdict != "" {
		fmt.Fprintf(&b, "Final verdict: %q\n", text.OneLine(r.Verdict))
	}
	fmt.Fprintf(&b, "Journal: %s/\n", r.Dir)
	if r.Suggestions > 0 {
		fmt.Fprintf(&b, "Suggestions ledger: %d entr%s (%s/suggestions.md).\n", r.Suggestions, map[bool]string{true: "y", false: "ies"}[r.Suggestions == 1], r.Dir)
	}
	return b.String()
}
