package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

type actOptions struct {
	IO      *cli.IOStreams
	Tracker func() *agentrun.Tracker
	Getenv  func(string) string
	// Passes, Dir and Environ are the Factory's (set in laserbrain run's
	// own process, where its broker answers act).
	Passes  *broker.Passes
	Dir     string
	Environ []string
	// pass is the one-use pass the supervisor put in a call the person
	// approved in their client (--pass).
	pass string
	// argv is the command to carry out; dashAt is where -- was among the
	// arguments (cobra's ArgsLenAtDash: -1 without one).
	argv   []string
	dashAt int
}

func newActCmd(f *Factory, runF func(*actOptions) error) *cobra.Command {
	opts := &actOptions{IO: f.IOStreams, Tracker: f.Tracker, Getenv: f.getenv, Passes: f.Passes, Dir: f.Dir, Environ: f.Environ}
	cmd := &cobra.Command{
		Use:   "act -- COMMAND [ARGS...]",
		Short: "Ask the supervisor to carry out one outward command for this agent, outside its boundary",
		Long: `Under laserbrain run the agent's tree holds no credential and reaches only
the endpoints the project policy allows, so a push, a publish or a deploy
cannot be made from inside it. act, run there, asks the supervisor to carry
COMMAND out outside the boundary, with the person's credentials and
network, in the agent's directory (which must lie in the run's work tree).

It is carried out only when the project policy's "boundary" "act" rules
name exactly this command, or a person authorized exactly this command for
the run (laserbrain authorize --run RUN -- COMMAND); each act spends one
use of an authorization, so an authorization with one use lets it through
once. A refusal says what a person runs to authorize it. Every act, done
or refused, is witnessed in the supervisor's journal and recorded on the
run. COMMAND runs as given, without a shell; its words are matched as the
gate keys a command (an argument holding white space as one quoted word).

Outside a confined run (the hooks alone) act decides the same way and runs
COMMAND where it is called.

--pass is not for an agent or a person to type: under laserbrain run, when a
person there is asked in their client (Claude Code) about an outward
command, the supervisor rewrites the call into laserbrain act --pass PASS --
COMMAND, with a pass it keeps in its memory for exactly that command, for
one use, for a quarter of an hour. Approved, the call hands it back and the
command is carried out; any other pass is refused.`,
		Example: `  laserbrain act -- git push origin feature:feature
  laserbrain act -- npm publish`,
		Args: cli.ArbitraryArgs,
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, args []string) error {
			opts.argv, opts.dashAt = args, cmd.ArgsLenAtDash()
			return nil
		}, runF, runAct),
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&opts.pass, "pass", "", "the one-use `PASS` the supervisor put in a call the person approved in their client")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitPassThrough, When: "the command's own status, once carried out"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no command, no run (LASERBRAIN_RUN), or a directory outside the run's work tree; nothing ran"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the store or the journal failed, or the supervisor's broker gave no answer; nothing ran"},
		cli.ExitDoc{Code: cli.ExitNotRunnable, When: "refused: neither the project policy nor a person's authorization allows exactly this command; nothing ran"},
		cli.ExitDoc{Code: cli.ExitNotFound, When: "the command was not found"},
		cli.ExitDoc{Code: cli.ExitSignal, When: "a signal N killed the command"})
	return cmd
}

// actSocket is the broker of the confined run this process is in, "" when
// it is in none (or is the supervisor itself): inside, act is handed over
// to it.
func actSocket(opts *actOptions) string {
	if opts.Passes != nil {
		return ""
	}
	if s := opts.Getenv(broker.EnvSocket); s != "" {
		return s
	}
	if d := confine.Confined(); d != "" {
		return filepath.Join(d, "broker.sock")
	}
	return ""
}

func runAct(opts *actOptions) error {
	if len(opts.argv) == 0 {
		return cli.Usagef("no command given (laserbrain act -- COMMAND [ARGS...])")
	}
	if opts.dashAt != 0 {
		return cli.Usagef("put the command after --: laserbrain act -- %s", strings.Join(opts.argv, " "))
	}
	ctx := context.Background()
	streams := opts.IO
	dir := opts.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if sock := actSocket(opts); sock != "" {
		argv := []string{"act"}
		if opts.pass != "" {
			argv = append(argv, "--pass", opts.pass)
		}
		code, err := broker.Relay(ctx, sock, append(append(argv, "--"), opts.argv...), opts.Getenv, dir, streams.In, streams.Out, streams.ErrOut)
		if err != nil {
			return cli.Failure(err)
		}
		if code != 0 {
			return cli.PassThrough(code)
		}
		return nil
	}
	runID := strings.TrimSpace(opts.Getenv(agentrun.EnvRun))
	if runID == "" {
		return cli.Usagef("laserbrain act carries a command out for an agent's run, and %s is not set (start the agent with laserbrain run); nothing ran", agentrun.EnvRun)
	}
	sup := opts.Tracker()
	defer sup.Close()
	st, err := sup.Fleet()
	if err != nil {
		return cli.Failure(err)
	}
	run, err := st.Run(ctx, runID)
	if err != nil {
		return storeError(err, "laserbrain runs lists this fleet's runs")
	}
	top := operator.PolicyRoot(run.Dir)
	if top == "" {
		top = run.Dir
	}
	if rel, err := filepath.Rel(top, dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return cli.Usagef("%s is outside run %s's work tree (%s): act carries commands out there only; nothing ran", dir, run.ID, top)
	}
	action := operator.ActionKey(shellquote.Command(opts.argv))
	leave, ok, err := actLeave(ctx, opts, sup, run, action, top)
	if err != nil {
		return cli.Failure(err)
	}
	rec := actRecord{Run: run.ID, Agent: run.Agent, Command: action, Dir: dir, Answer: "refused", Leave: leave}
	if ok {
		rec.Answer = "allowed"
	}
	if err := journalAct(ctx, st, run, rec); err != nil {
		return cli.Failure(fmt.Errorf("the supervisor's journal takes no record of the act, so it is not carried out: %w", err))
	}
	if !ok {
		recordAct(ctx, st, run.ID, rec)
		refuseAct(streams, opts, run.ID, action)
		return cli.SilentExit(cli.ExitNotRunnable)
	}
	code := carryOut(ctx, streams, opts.argv, dir, opts.Environ)
	rec.Answer, rec.Exit = "done", &code
	if err := journalAct(ctx, st, run, rec); err != nil {
		fmt.Fprintf(streams.ErrOut, "laserbrain act: the act's end is not journaled: %v\n", err)
	}
	recordAct(ctx, st, run.ID, rec)
	if code != 0 {
		return cli.PassThrough(code)
	}
	return nil
}

// actLeave says what lets action out: with a pass, the person's approval
// in their client, when laserbrain run's supervisor gave that pass for
// exactly this command on this run and it is unspent (spent now); without
// one, the project policy or a person's authorization (Tracker.ActLeave).
func actLeave(ctx context.Context, opts *actOptions, sup *agentrun.Tracker, run fleet.Run, action, top string) (string, bool, error) {
	if opts.pass != "" {
		if opts.Passes == nil {
			return "", false, nil
		}
		why, ok := opts.Passes.Spend(opts.pass, run.ID, action)
		if !ok {
			return "", false, nil
		}
		return "the person's approval in their client (" + why + ")", true, nil
	}
	pol, err := agentrun.LoadPolicy(top, policyschema.Validate)
	if err != nil {
		return "", false, err
	}
	return sup.ActLeave(ctx, run, action, pol)
}

// refuseAct says why act refused, and what a person does.
func refuseAct(streams *cli.IOStreams, opts *actOptions, run, action string) {
	if opts.pass != "" {
		fmt.Fprintf(streams.ErrOut, "laserbrain act: refused: the pass is not one run %s's supervisor gave for exactly %q, or it was used or expired, so nothing ran. "+
			"A person authorizes the command once with: laserbrain authorize --run %s -- %s\n", run, action, run, action)
		return
	}
	fmt.Fprintf(streams.ErrOut, "laserbrain act: refused: neither the project policy nor a person's authorization allows exactly %q for run %s, so nothing ran. "+
		"A person authorizes it once with: laserbrain authorize --run %s -- %s\n", action, run, run, action)
}

// actRecord is an act as the journal and the run keep it.
type actRecord struct {
	Run     string `json:"run"`
	Agent   string `json:"agent,omitempty"`
	Command string `json:"command"`
	Dir     string `json:"dir"`
	// Answer is allowed (before it runs), done (after) or refused.
	Answer string `json:"answer"`
	// Leave is what allowed it: the policy's rule or a person's
	// authorization.
	Leave string `json:"leave,omitempty"`
	Exit  *int   `json:"exit,omitempty"`
}

func (r actRecord) text() string {
	t := "act " + r.Answer + ": " + r.Command + " (run " + r.Run + ")"
	if r.Leave != "" {
		t += ", by " + r.Leave
	}
	if r.Exit != nil {
		t += fmt.Sprintf(", exit %d", *r.Exit)
	}
	return t
}

func journalAct(ctx context.Context, st fleet.Store, run fleet.Run, r actRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return supervise.Journal(ctx, st, run.Fleet, fleet.JournalRecord{At: fleet.JournalTime(time.Now().UTC()), Kind: fleet.JournalAct,
		Agent: fleet.RunAgent(run), Text: r.text(), Data: data})
}

func recordAct(ctx context.Context, st fleet.Store, run string, r actRecord) {
	data, _ := json.Marshal(r)
	ok := laserbrain.OKOf(r.Answer == "done" && r.Exit != nil && *r.Exit == 0)
	_, _ = st.AppendEvent(ctx, run, fleet.RunEvent{At: time.Now().UTC(), Kind: fleet.KindAct, Name: r.Answer, OK: ok, Text: r.text(), Result: data})
}

// carryOut runs argv in dir with environ (nil: this process's; either way
// the person's, outside the boundary) and the streams, and returns its
// status.
func carryOut(ctx context.Context, streams *cli.IOStreams, argv []string, dir string, environ []string) int {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "laserbrain act: %s: %v\n", argv[0], err)
		if errors.Is(err, os.ErrPermission) {
			return int(cli.ExitNotRunnable)
		}
		return int(cli.ExitNotFound)
	}
	c := exec.CommandContext(ctx, path, argv[1:]...)
	c.Dir = dir
	c.Stdin, c.Stdout, c.Stderr = streams.In, streams.Out, streams.ErrOut
	if environ == nil {
		environ = os.Environ()
	}
	var env []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, broker.EnvSocket+"=") {
			env = append(env, kv)
		}
	}
	c.Env = env
	err = reap.Run(c) // the run process reaps orphans: tell it this one is waited for
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(streams.ErrOut, "laserbrain act: %s: %v\n", argv[0], err)
	return int(cli.ExitNotRunnable)
}
