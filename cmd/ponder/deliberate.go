package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/ledger"
)

type deliberateOptions struct {
	// App is what every ponder command shares.
	App *app
	// args are the positional arguments.
	args []string

	skip       bool
	stakes     string
	arguments  map[string]*string
	confidence map[string]*float64
}

func newDeliberateCmd(a *app, runF func(*deliberateOptions) error) *cobra.Command {
	o := &deliberateOptions{App: a, arguments: map[string]*string{}, confidence: map[string]*float64{}}
	cmd := &cobra.Command{
		Use:   "deliberate [FILE|-] [--skeptic A --skeptic-confidence C …] [--stakes S] | --skip",
		Short: "Record the current pass's deliberation: four voices, each argument or silence",
		Long: `deliberate writes passes/NN/deliberation.json. Give the voices as flags or as
a file {"stakes": S, "voices": {"skeptic": {"argument": A, "confidence": C}, …}}.
A blank or missing argument is a silent voice (null). --skip records four
silent voices (voices = 0). Stakes are low, medium or high (medium when not
given); anything else is refused. Under PONDER_OCA it also opens the pass's
deliberations row.`,
		Example: `  ponder deliberate --skeptic "the retry loop hides failures" --skeptic-confidence 0.7 --stakes high
  ponder deliberate voices.json
  ponder deliberate --skip`,
		Args: cli.MaximumNArgs(1),
		RunE: cli.RunArgs(o, &o.args, runF, runDeliberate),
	}
	cmd.Flags().BoolVar(&o.skip, "skip", false, "record four silent voices")
	cmd.Flags().StringVar(&o.stakes, "stakes", "", "stakes of the pass: "+strings.Join(ponder.Stakes, ", ")+" (default medium)")
	for _, v := range ledger.Voices {
		o.arguments[v] = new(string)
		o.confidence[v] = new(float64)
		cmd.Flags().StringVar(o.arguments[v], v, "", "the "+v+"'s argument")
		cmd.Flags().Float64Var(o.confidence[v], v+"-confidence", 0, "the "+v+"'s confidence, in [0,1]")
	}
	cli.CompleteFlag(cmd, "stakes", cli.Values(ponder.Stakes...))
	for _, v := range ledger.Voices {
		cli.CompleteFlags(cmd, cli.NoValue, v, v+"-confidence")
	}
	cmd.ValidArgsFunction = cli.Files("json")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "bad voice input (usage); out of order, or pass 2 on without its forecast (stateError)"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runDeliberate(o *deliberateOptions) error {
	in := &ponder.DeliberationInput{}
	flagged := false
	for _, v := range ledger.Voices {
		flagged = flagged || o.App.changed(v) || o.App.changed(v+"-confidence")
	}
	if len(o.args) == 1 {
		if flagged {
			return o.App.finish(nil, cli.Usagef("give the voices either in FILE or as flags, not both"), nil)
		}
		data, err := o.App.readInput(o.args[0])
		if err != nil {
			return o.App.finish(nil, err, nil)
		}
		if in, err = ponder.ParseDeliberation(data); err != nil {
			return o.App.finish(nil, cli.Usagef("%s: %v", o.args[0], err), nil)
		}
	}
	for _, v := range ledger.Voices {
		arg := in.Voices.ByName(v)
		if o.App.changed(v) {
			arg.Argument = o.arguments[v]
		}
		if o.App.changed(v + "-confidence") {
			arg.Confidence = o.confidence[v]
		}
	}
	if o.App.changed("stakes") {
		in.Stakes = o.stakes
	}
	deliberate := func(e *ponder.Engine, slug string) (*ponder.DeliberateResult, error) {
		return e.Deliberate(slug, in, o.skip)
	}
	return call(o.App, deliberate, func(w io.Writer, res *ponder.DeliberateResult) {
		if res.Deliberation.Skipped {
			fmt.Fprintf(w, "pass %d: deliberation skipped (voices 0)\n", res.Deliberation.Pass)
		} else {
			fmt.Fprintf(w, "pass %d deliberated: %d of 4 voices argued (stakes %s)\n", res.Deliberation.Pass, res.Voices, res.Deliberation.Stakes)
		}
		fmt.Fprintln(w, "next: ponder delta (any number of batches), then ponder judge")
	})
}
