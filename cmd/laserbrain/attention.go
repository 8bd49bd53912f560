package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
)

type attentionOptions struct {
	IO *cli.IOStreams
	// sinceSet: --since was given (without it, the calibration's table).
	sinceSet bool

	since     float64
	tolerance float64
	asJSON    bool
}

func newAttentionCmd(f *Factory, runF func(*attentionOptions) error) *cobra.Command {
	opts := &attentionOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "attention [--since SECONDS] [--tolerance RATE]",
		Short: "When a person should look: drift against time since someone last spoke to the agent",
		Long: `attention prints the calibration of how often a reading was goal-drift
against how long the agent had run since a person last spoke, and beside it
the agent's own clock (steps since it last spelled its state), with the
censoring that makes that second clock no schedule. The calibration is the
reference's, measured on one machine's corpus; its provenance says so.

--since SECONDS reads one moment instead: the band it falls in, its rate and
sample, and when — at the edge of the next band over --tolerance (default
0.25) — to look next. A band with too few readings gives no rate, and no
time is named on one. --json prints {"risk", "next_check_in"} (seconds; 0:
look now; null: no measured band ahead crosses the tolerance), or the table.`,
		Example: `  laserbrain attention
  laserbrain attention --since 900
  laserbrain attention --since 120 --tolerance 0.2 --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.sinceSet = cmd.Flags().Changed("since")
			if runF != nil {
				return runF(opts)
			}
			return runAttention(opts)
		},
	}
	cmd.Flags().Float64Var(&opts.since, "since", 0, "seconds since a person last spoke to the agent")
	cmd.Flags().Float64Var(&opts.tolerance, "tolerance", 0.25, "the drift rate you accept before looking")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "a negative --since, or a --tolerance outside 0-1"})
	return cmd
}

func runAttention(opts *attentionOptions) error {
	if opts.tolerance < 0 || opts.tolerance > 1 || math.IsNaN(opts.tolerance) {
		return cli.Usagef("--tolerance %v: a drift rate from 0 to 1", opts.tolerance)
	}
	if !opts.sinceSet {
		return attentionTable(opts.IO, opts.asJSON)
	}
	if opts.since < 0 || math.IsNaN(opts.since) || math.IsInf(opts.since, 0) {
		return cli.Usagef("--since %v: seconds, 0 or more", opts.since)
	}
	r := laserbrain.AttentionRisk(opts.since)
	next := laserbrain.NextCheckIn(opts.since, opts.tolerance)
	if opts.asJSON {
		return cli.WriteJSON(opts.IO.Out, map[string]any{"risk": r, "next_check_in": next})
	}
	when := fmt.Sprintf("%.0f s", opts.since)
	if opts.since >= 90 {
		when = fmt.Sprintf("%.0f min", opts.since/60)
	}
	switch {
	case r.Band == nil:
		fmt.Fprintf(opts.IO.Out, "%s since a person spoke: no band of the calibration covers it.\n", when)
	case !r.Known:
		fmt.Fprintf(opts.IO.Out, "%s since a person spoke, in %q: %d readings, too few to give a rate.\n", when, *r.Band, r.N)
	default:
		fmt.Fprintf(opts.IO.Out, "%s since a person spoke, in %q: %d of %d readings were goal-drift (%.0f%%).\n", when, *r.Band, r.Drift, r.N, *r.Rate*100)
	}
	switch {
	case next == nil:
		fmt.Fprintf(opts.IO.Out, "no measured band ahead goes over %.0f%%.\n", opts.tolerance*100)
	case *next == 0:
		fmt.Fprintf(opts.IO.Out, "over %.0f%% already: look now.\n", opts.tolerance*100)
	case *next < 90:
		fmt.Fprintf(opts.IO.Out, "next look: in %.0f s, when it goes over %.0f%%.\n", *next, opts.tolerance*100)
	default:
		fmt.Fprintf(opts.IO.Out, "next look: in %.0f min, when it goes over %.0f%%.\n", *next/60, opts.tolerance*100)
	}
	return nil
}

func attentionTable(streams *cli.IOStreams, asJSON bool) error {
	t := laserbrain.Attention()
	if asJSON {
		return cli.WriteJSON(streams.Out, t)
	}
	w := streams.Out
	band := func(b laserbrain.AttentionBand) {
		rate := "too few to say"
		if b.Rate != nil {
			rate = fmt.Sprintf("%5.1f%%", *b.Rate*100)
		}
		fmt.Fprintf(w, "  %-16s %4d/%-5d %s\n", b.Label, b.Drift, b.N, rate)
	}
	fmt.Fprintln(w, "goal-drift against time since a person last spoke")
	for _, b := range t.Bands {
		band(b)
	}
	if len(t.BestPair) == 2 {
		fmt.Fprintf(w, "  z = %v between %s and %s (n = %d)\n", t.Z, t.BestPair[0], t.BestPair[1], t.BestN)
	}
	fmt.Fprintln(w, "\nthe agent's own clock: steps since it last spelled its state")
	for _, b := range t.AgentClock.Bands {
		band(b)
	}
	if len(t.AgentClock.BestPair) == 2 {
		fmt.Fprintf(w, "  z = %v between %s and %s (n = %d)\n", t.AgentClock.Z, t.AgentClock.BestPair[0], t.AgentClock.BestPair[1], t.AgentClock.BestN)
	}
	fmt.Fprintf(w, "  %s\n", t.AgentClock.Censoring)
	if p := t.Provenance; p != nil {
		fmt.Fprintf(w, "\ncalibrated on %v to %v, %v readings (written %v). %v\n", p["corpus_from"], p["corpus_to"], p["readings_total"], p["written"], p["caveat"])
	}
	return nil
}
