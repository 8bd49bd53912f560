package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type decideOptions struct {
	// App is what every ponder command shares.
	App *app
	// args are the positional arguments.
	args []string
}

func newDecideCmd(a *app, runF func(*decideOptions) error) *cobra.Command {
	opts := &decideOptions{App: a}
	cmd := &cobra.Command{
		Use:   "decide continue|stop",
		Short: "Act on the current pass's judge: open the next pass, or end the session",
		Long: `decide needs a judge of the current pass. continue opens the next pass (past
the budget with a warning). stop ends the session — converged if the latest
verdict was stop, else stopped — and is refused (exit 2) while coverage is
below 1, listing every ungraded unit.`,
		Example: `  ponder decide continue
  ponder decide stop --json`,
		Args: cli.ExactArgs(1),
		RunE: cli.RunArgs(opts, &opts.args, runF, runDecide),
	}
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return []string{"continue\topen the next pass", "stop\tend the session"}, cobra.ShellCompDirectiveNoFileComp
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "neither continue nor stop (usage); no judge of this pass, or stop below full coverage with every ungraded unit listed (stateError)"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runDecide(opts *decideOptions) error {
	decide := func(e *ponder.Engine, slug string) (*ponder.DecideResult, error) { return e.Decide(slug, opts.args[0]) }
	return call(opts.App, decide, func(w io.Writer, res *ponder.DecideResult) {
		if res.NextPass != nil {
			fmt.Fprintf(w, "pass %d decided: continue; pass %d is open (predict, then deliberate)\n", res.Pass, *res.NextPass)
			return
		}
		fmt.Fprintf(w, "pass %d decided: stop; session %s is %s (next: ponder apply)\n", res.Pass, res.Slug, res.Status)
	})
}
