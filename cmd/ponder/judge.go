package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newJudgeCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Compute the pass's metrics and verdict: continue, escalate, blocked or stop",
		Long: `judge measures the current pass (coverage, churn, novelty, thrash, voices,
deltaVoices, confidenceFloor, surprise), applies rules R1..R6 and the
tie-breaker from open OCA observations, and writes passes/NN/judge.json.
The verdict (continue, escalate, blocked or stop) is advice; decide acts on
it. judge may be re-run until decide.`,
		Example: `  ponder judge
  ponder judge --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runJudge),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "out of order or unseeded (stateError)"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runJudge(opts *appOptions) error {
	return call(opts.App, (*ponder.Engine).Judge, printJudgement)
}

func printJudgement(w io.Writer, j *ponder.Judgement) {
	m := j.Metrics
	fmt.Fprintf(w, "pass %d: %s (%s) — %s\n", j.Pass, j.Verdict, j.Rule, term(j.Reason))
	fmt.Fprintf(w, "  coverage %s (%d/%d)  churn %s  novelty %s  thrash %s\n", fnum(&m.Coverage), m.Graded, m.Counted, fnum(m.Churn), fnum(m.Novelty), fnum(m.Thrash))
	fmt.Fprintf(w, "  voices %d  deltaVoices %d  confidenceFloor %d  surprise %s  live %d\n", m.Voices, m.DeltaVoices, m.ConfidenceFloor, fnum(m.Surprise), m.Live)
	fmt.Fprintf(w, "  ops: add %d, edit %d, change %d, delete %d\n", m.Ops.Add, m.Ops.Edit, m.Ops.Change, m.Ops.Delete)
	fmt.Fprintf(w, "advice: %s\n", j.Advice)
}
