package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/laserbrain"
)

type readOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	connectivity float64
	asJSON       bool
}

func newReadCmd(f *Factory, runF func(*readOptions) error) *cobra.Command {
	opts := &readOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "read [TEXT]",
		Short: "Read the shape of a text: short, circling, connected or loose",
		Long: `read reads the shape of a text from its lexical variety (distinct content
words over content words): under 12 words is too short to say; variety
under 0.55 is circling — the same handful of words doing the work; else a
--connectivity over 0.7 (a spectral reading you have from elsewhere, 0 to
1) is connected; else loose. The text is TEXT, or standard input when it is
not a terminal. The MCP tool read_text reads the same way. --json prints
{"words", "variety", "connectivity", "shape", "circling"}.`,
		Example: `  laserbrain read "the same thought the same thought the same thought"
  cat draft.md | laserbrain read --json`,
		Args: cli.MaximumNArgs(1),
		RunE: cli.RunArgs(opts, &opts.args, runF, runRead),
	}
	cmd.Flags().Float64Var(&opts.connectivity, "connectivity", 0, "spectral connectivity 0-1, if you have it")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print the reading as JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no text, or a --connectivity outside 0-1"})
	return cmd
}

func runRead(opts *readOptions) error {
	if math.IsNaN(opts.connectivity) || opts.connectivity < 0 || opts.connectivity > 1 {
		return cli.Usagef("--connectivity %v: a number from 0 to 1", opts.connectivity)
	}
	var text string
	switch {
	case len(opts.args) == 1:
		text = opts.args[0]
	case tty.Is(opts.IO.In):
		return cli.Usagef("no text: pass it as an argument or on standard input")
	default:
		b, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return cli.FileError(err)
		}
		text = string(b)
	}
	r := laserbrain.ReadText(text, opts.connectivity)
	if opts.asJSON {
		return cli.WriteJSON(opts.IO.Out, r)
	}
	fmt.Fprintf(opts.IO.Out, "words         %d\nvariety       %.2f\n", r.Words, r.Variety)
	if opts.connectivity != 0 {
		fmt.Fprintf(opts.IO.Out, "connectivity  %.2f\n", r.Connectivity)
	}
	fmt.Fprintf(opts.IO.Out, "shape         %s\n  %s\n", r.Shape, map[string]string{
		"short":     "under 12 words: too few to read a shape from",
		"circling":  "the same few terms keep coming back instead of moving on",
		"connected": "the terms vary and tie together",
		"loose":     "the terms vary but do not tie together",
	}[r.Shape])
	return nil
}
