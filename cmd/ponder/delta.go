package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
)

type deltaOptions struct {
	// App is what every ponder command shares.
	App *app
	// args are the positional arguments.
	args []string
}

func newDeltaCmd(a *app, runF func(*deltaOptions) error) *cobra.Command {
	opts := &deltaOptions{App: a}
	cmd := &cobra.Command{
		Use:   "delta [FILE|-]",
		Short: "Append a batch of ledger records, validated whole, all or nothing",
		Long: `delta reads JSON Lines (or one JSON array) from FILE or stdin. Records:
  {"voice":"dreamer","op":"add","unitId":"u0001","severity":"must|should|could","confidence":0.8,"text":"…","recommendation":"…","evidence":"file:line"}
  {"voice":"builder","op":"edit","findingId":"f0001","text|recommendation|evidence":"…"}
  {"voice":"empath","op":"change","findingId":"f0001","severity":…,"confidence":…}
  {"voice":"skeptic","op":"delete","findingId":"f0001","reason":"…"}
  {"type":"unit-add","path":"…"} {"type":"unit-edit","unitId":"u0001","path":"…"}
  {"type":"unit-delete","unitId":"u0001","phantom":true}
Each voice may only perform its own operation (dreamer add, builder edit,
empath change, skeptic delete). Any violation rejects the whole batch (exit 2)
and every violation is listed; the ledger is then unchanged.

confidence is in [0,1]. A live finding below the session's confidence floor
(0.5 unless session.json's confidenceFloorValue says otherwise) blocks
convergence: judge counts it as confidenceFloor and Rule 6 needs 0. Raise it
(empath change) or retract it (skeptic delete).

Paths are names as units.json stores them: a name that is not UTF-8 is
written Go-quoted, "\"caf\\xe9.go\"" in JSON (see ponder/SPEC.md).`,
		Example: `  ponder delta findings.jsonl
  echo '{"voice":"skeptic","op":"delete","findingId":"f0003","reason":"not reachable"}' | ponder delta`,
		Args: cli.MaximumNArgs(1),
		RunE: cli.RunArgs(opts, &opts.args, runF, runDelta),
	}
	cmd.ValidArgsFunction = cli.Files("jsonl", "json")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unreadable FILE (usage); any violation, all listed, the ledger unchanged (stateError)"}, localWriteFailed)
	return cmd
}

func runDelta(opts *deltaOptions) error {
	name := "-"
	if len(opts.args) == 1 {
		name = opts.args[0]
	}
	data, err := opts.App.readInput(name)
	if err != nil {
		return opts.App.finish(nil, err, nil)
	}
	delta := func(e *ponder.Engine, slug string) (*ponder.DeltaResult, error) { return e.Delta(slug, data) }
	return call(opts.App, delta, func(w io.Writer, res *ponder.DeltaResult) {
		fmt.Fprintf(w, "pass %d: appended %s (seq %d–%d): add %d, edit %d, change %d, delete %d; %s\n",
			res.Pass, text.Plural(int64(res.Appended), "record"), res.FirstSeq, res.LastSeq, res.Ops.Add, res.Ops.Edit, res.Ops.Change, res.Ops.Delete, text.Plural(int64(res.Live), "live finding"))
		if len(res.FindingIDs) > 0 {
			fmt.Fprintf(w, "new findings: %s\n", strings.Join(res.FindingIDs, " "))
		}
		if len(res.UnitIDs) > 0 {
			fmt.Fprintf(w, "new units: %s\n", strings.Join(res.UnitIDs, " "))
		}
	})
}
