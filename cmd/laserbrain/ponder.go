package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type ponderOptions struct {
	IO *cli.IOStreams
	// Tracker is a supervisor on the stores, for the messages.
	Tracker func() *agentrun.Tracker

	args []string
}

func newPonderCmd(f *Factory, runF func(*ponderOptions) error) *cobra.Command {
	opts := &ponderOptions{IO: f.IOStreams, Tracker: f.Tracker}
	cmd := &cobra.Command{
		Use:   "ponder [ARGS...]",
		Short: "Run a confined agent's ponder command, as its run's broker does",
		Long: `ponder is what the broker of laserbrain run (and laserbrain loop) runs for a
ponder command of its confined agent: the agent's tree holds ponder's own
directory (.ponder) read-only, as it holds the laserbrain home, so ponder
hands its whole command over. This hands out what the supervisor said to
the session (marking it delivered, as ponder would), then runs the ponder
the run holds (beside laserbrain, else the one on PATH) with ARGS,
confined as the agent is — the same paths held, the same places writable —
but for .ponder, which it may write.

It runs only under a run's broker (the agent's confinement in
LASERBRAIN_CONFINEMENT); elsewhere run ponder itself.`,
		Hidden:             true,
		DisableFlagParsing: true,
		Args:               cli.ArbitraryArgs,
		RunE:               cli.RunArgs(opts, &opts.args, runF, runPonder),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "not run by a confined run's broker, or no ponder beside laserbrain (ponder's own exit status otherwise)"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "ponder could not be started under the agent's confinement"})
	return cmd
}

func runPonder(opts *ponderOptions) error {
	raw := os.Getenv(broker.EnvConfinement)
	if raw == "" {
		return cli.Usagef("laserbrain ponder runs a confined agent's ponder command for its run's broker (%s is not set): run ponder itself", broker.EnvConfinement)
	}
	var spec confine.Spec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return cli.Usagef("%s: %v", broker.EnvConfinement, err)
	}
	self, err := selfPath()
	if err != nil {
		return cli.Failure(err)
	}
	prog := ponderProgram(self)
	if prog == "" || !slices.Contains(spec.ReadOnly, prog) {
		return cli.Usagef("no ponder the run holds (beside %s, or on PATH when the run started): ponder runs for a confined agent only from where the agent cannot change it", self)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return cli.Failure(err)
	}
	root := ponder.FindRoot(cwd)
	told, err := ponderMessages(opts, root)
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "ponder: warning: the supervisor's messages could not be handed out: %v\n", err)
	}
	data, _ := json.Marshal(told)
	cmd := exec.Command(prog, opts.args...)
	cmd.Dir = cwd
	cmd.Env = append(withoutEnv(os.Environ(), broker.EnvPonderTold, broker.EnvConfinement), broker.EnvPonderTold+"="+string(data))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	h, err := confine.Wrap(cmd, self, ponderSpec(spec, filepath.Join(root, ".ponder")))
	if err != nil {
		return cli.Failure(fmt.Errorf("confining ponder: %w", err))
	}
	if h != nil {
		defer h.Close()
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return cli.PassThrough(ee.ExitCode())
	}
	return cli.Failure(fmt.Errorf("running %s: %w", prog, err))
}

// ponderSpec is the agent's confinement with ponder's own directory dot
// left writable: it is not held read-only (nor is anything below it), and
// writes to it are allowed.
func ponderSpec(spec confine.Spec, dot string) confine.Spec {
	out := spec
	out.ReadOnly = nil
	for _, p := range spec.ReadOnly {
		if p != dot && !strings.HasPrefix(p, dot+string(filepath.Separator)) {
			out.ReadOnly = append(out.ReadOnly, p)
		}
	}
	out.Writable = append(append([]string(nil), spec.Writable...), dot)
	if _, err := os.Stat(dot); err != nil {
		out.Writable = out.Writable[:len(out.Writable)-1] // ponder start makes it, where the agent may write
	}
	out.Created, out.Ensure = nil, nil
	if spec.Net != nil {
		// A network of its own with nothing in it: ponder reaches nothing
		// for the agent (the agent's listeners are its run's).
		out.Net = &confine.Net{}
	}
	return out
}

// ponderMessages hands out what the supervisor said to the session a
// ponder command in root works on — its --slug, else PONDER_SLUG, else
// the one active session — when the session's fleet is the run's (a
// command run elsewhere takes none of another fleet's messages).
func ponderMessages(opts *ponderOptions, root string) ([]string, error) {
	slug, _, err := ponderReader(root).Resolve(slugArg(opts.args))
	if err != nil || slug == "" {
		return nil, nil // a command without a session (start, list, help): nothing to hand out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sup := opts.Tracker()
	defer sup.Close()
	st, err := sup.Fleet()
	if err != nil {
		return nil, err
	}
	fid, err := fleet.ID(ctx, root)
	if err != nil {
		return nil, err
	}
	if id := os.Getenv(agentrun.EnvRun); id != "" {
		r, err := st.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.Fleet != fid {
			return nil, nil
		}
	}
	msgs, err := st.Deliver(ctx, fid, fleet.PonderAgent(slug), fleet.Delivery{At: time.Now().UTC(), Via: "ponder"})
	if err != nil {
		return nil, err
	}
	told := make([]string, len(msgs))
	for i, m := range msgs {
		told[i] = m.Told()
	}
	return told, nil
}

// ponderReader reads the sessions in root, selecting as ponder does
// (PONDER_SLUG when no --slug is given).
func ponderReader(root string) *ponder.Engine {
	e := ponder.NewReader(root)
	e.Selected = strings.TrimSpace(os.Getenv(agentrun.EnvPonder))
	return e
}

// slugArg is ponder's --slug in args ("" when not given).
func slugArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--slug="); ok {
			return v
		}
		if a == "--slug" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func withoutEnv(env []string, keys ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(keys, k) {
			out = append(out, kv)
		}
	}
	return out
}
