package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type predictOptions struct {
	// App is what every ponder command shares.
	App *app

	churn float64
	claim string
}

func newPredictCmd(a *app, runF func(*predictOptions) error) *cobra.Command {
	o := &predictOptions{App: a}
	cmd := &cobra.Command{
		Use:   "predict --churn X [--claim TEXT]",
		Short: "Forecast the next pass's churn, in [0,1]",
		Long: `predict writes passes/NN/predict.json for the next pass to deliberate:
after pass N's judge (or before pass N+1's deliberate) it is about pass N+1.
judge scores it as surprise = |forecast − churn|.
The forecast is obligatory from pass 2: deliberate refuses a pass ≥ 2 until
its forecast is recorded (pass 1 has no churn to forecast; predict refuses it).`,
		Example: `  ponder predict --churn 0.3
  ponder predict --churn 0.1 --claim "only the retry path is left"`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(o, runF, runPredict),
	}
	cmd.Flags().Float64Var(&o.churn, "churn", 0, "forecast churn of the pass, in [0,1]")
	cmd.Flags().StringVar(&o.claim, "claim", "", "what the forecast claims, in words")
	cli.CompleteFlags(cmd, cli.NoValue, "churn", "claim")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "--churn missing or outside [0,1] (usage); out of order (stateError)"}, localWriteFailed)
	return cmd
}

func runPredict(o *predictOptions) error {
	if !o.App.changed("churn") {
		return o.App.finish(nil, cli.Usagef("predict needs --churn X (a number in [0,1])"), nil)
	}
	var claim *string
	if o.App.changed("claim") {
		claim = &o.claim
	}
	predict := func(e *ponder.Engine, slug string) (*ponder.Forecast, error) { return e.Predict(slug, o.churn, claim) }
	return call(o.App, predict, func(w io.Writer, res *ponder.Forecast) {
		fmt.Fprintf(w, "forecast for pass %d: churn %s\n", res.Pass, fnum(&res.Churn))
	})
}
