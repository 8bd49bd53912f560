package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type metacognizeOptions struct {
	// App is what every ponder command shares.
	App *app

	typ          string
	description  string
	evidence     string
	severity     string
	intervention string
}

func newMetacognizeCmd(a *app, runF func(*metacognizeOptions) error) *cobra.Command {
	o := &metacognizeOptions{App: a}
	cmd := &cobra.Command{
		Use:   "metacognize --type T --description D [--evidence JSON] [--severity S] [--intervention I]",
		Short: "Record an observation about the loop itself",
		Long: `metacognize appends to observations.jsonl and, with OCA, writes a
metacognitive observation (and a metacognition_alert event). T is one of
` + strings.Join(ponder.ObservationTypes, ", ") + `.
S is a number in [0,1] or a name (none, trivial, info, low, minor, medium,
moderate, warning, high, major, severe, critical, fatal); default medium.
An open OCA observation with severity ≥ 0.7 turns judge's continue into
escalate until a human sets intervention_applied.`,
		Example: `  ponder metacognize --type low_confidence --description "unsure about the cache's eviction" --severity 0.6
  ponder metacognize --type stuck_state --description "pass 4 repeats pass 3" --severity high --intervention "narrow the scope"`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(o, runF, runMetacognize),
	}
	cmd.Flags().StringVar(&o.typ, "type", "", "observation type")
	cmd.Flags().StringVar(&o.description, "description", "", "what was observed")
	cmd.Flags().StringVar(&o.evidence, "evidence", "", "evidence, as JSON")
	cmd.Flags().StringVar(&o.severity, "severity", "", "severity: a number in [0,1] or a name")
	cmd.Flags().StringVar(&o.intervention, "intervention", "", "recommended intervention")
	cli.CompleteFlag(cmd, "type", cli.Values(ponder.ObservationTypes...))
	cli.CompleteFlag(cmd, "severity", cli.Values("none", "trivial", "info", "low", "minor", "medium", "moderate", "warning", "high", "major", "severe", "critical", "fatal"))
	cli.CompleteFlags(cmd, cli.NoValue, "description", "evidence", "intervention")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unknown --type, a bad --severity or --evidence"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runMetacognize(o *metacognizeOptions) error {
	opts := ponder.MetacognizeOptions{Type: o.typ, Description: o.description, Evidence: o.evidence, Severity: o.severity}
	if o.App.changed("intervention") {
		opts.Intervention = &o.intervention
	}
	metacognize := func(e *ponder.Engine, slug string) (*ponder.MetacognizeResult, error) {
		return e.Metacognize(slug, opts)
	}
	return call(o.App, metacognize, func(w io.Writer, res *ponder.MetacognizeResult) {
		fmt.Fprintf(w, "observation %s recorded (%s, severity %s)\n", res.Observation.ID, res.Observation.Type, fnum(&res.Observation.Severity))
	})
}
