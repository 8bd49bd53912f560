package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

// newRootCmdWith is ponder's tree with sub in place of the command of its
// name: the global flags (--slug, --json) are the root's.
func newRootCmdWith(a *app, sub any) *cobra.Command {
	root := newRootCmd(a)
	c := sub.(*cobra.Command)
	for _, old := range root.Commands() {
		if old.Name() == c.Name() {
			root.RemoveCommand(old)
		}
	}
	root.AddCommand(c)
	return root
}

// parse runs a command built with a run function of the test's on args.
func parse(t *testing.T, build func(*app) any, args ...string) {
	t.Helper()
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	a := newApp(streams)
	root := newRootCmdWith(a, build(a))
	if _, err := cli.Execute(root, args, streams); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out.String())
	}
}

// The options each command's flags and arguments set, as its help says.
func TestOptionsParsed(t *testing.T) {
	var start *startOptions
	parse(t, func(a *app) any {
		return newStartCmd(a, func(o *startOptions) error { start = o; return nil })
	}, "start", "the checkout flow", "--lens", "security", "--passes", "6", "--slug", "x")
	if start == nil || !slices.Equal(start.args, []string{"the checkout flow"}) || start.lens != "security" || start.passes != 6 || start.App.slug != "x" {
		t.Errorf("start: %+v", start)
	}
	var predict *predictOptions
	parse(t, func(a *app) any {
		return newPredictCmd(a, func(o *predictOptions) error { predict = o; return nil })
	}, "predict", "--churn", "0.25")
	if predict == nil || predict.churn != 0.25 || !predict.App.changed("churn") || predict.App.changed("claim") {
		t.Errorf("predict --churn 0.25: churn %v, churn given %v, claim given %v", predict.churn, predict.App.changed("churn"), predict.App.changed("claim"))
	}
}
