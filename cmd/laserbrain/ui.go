package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/ui"
	"github.com/laserkit/laserkit/supercode/undo"
)

type uiOptions struct {
	IO *cli.IOStreams
	// Opened opens the stores.
	Opened func(readOnly bool) (*backend.Backend, fleet.Store, laserbrain.Store, error)

	repo, addr string
}

func newUICmd(f *Factory, runF func(*uiOptions) error) *cobra.Command {
	opts := &uiOptions{IO: f.IOStreams, Opened: f.Opened}
	cmd := &cobra.Command{
		Use:   "ui [--repo DIR] [--addr 127.0.0.1:PORT]",
		Short: "Watch the fleet live in a browser, and release, answer and authorize from it",
		Long: `ui serves a live view of the repository's fleet on the loopback interface: a
row per agent run and ponder session (client, agent, ground, status —
working, waiting for a person, halted, finished, unmeasured —, verdict, a
Φ sparkline, coverage, checks, last tool call, when it was last seen), the
agents waiting for a person and the questions and halts that need one at
the top, collisions with the files both touched, the fleet catches and the
route, and a live feed of the gate's decisions and the supervisor's
questions. Choosing an agent shows its checks with their advice, its
observed events, its gate decisions, its journal entries and what the
supervisor told it. The page is one self-contained document (nothing is
fetched from anywhere else) and changes within a second of a hook event, a
check or a supervisor round, without a reload.

From the page a person can release a halt, answer an escalation (the answer
is told to the agent at its next event, as a message from the supervisor)
and authorize the one action a gate decision named, once. Each act is
journaled as theirs, like laserbrain supervise release and laserbrain
authorize.

ui prints a one-time link with a random token, kept in memory only: the
first browser to open it gets the session; every request needs it, and an
act also needs the page's own token and the server's Origin. A browser that
crashed takes its session with it: press Enter where ui runs (or send it
SIGUSR1) and it prints a new one-time link, ending the last link's session. Anything else
— another process on this machine calling the port, another site's page —
is refused 403. --addr must be a loopback address (127.0.0.1, ::1,
localhost); port 0, the default, picks a free one. ui runs until
interrupted.`,
		Example: `  laserbrain ui
  laserbrain ui --repo ~/src/shop --addr 127.0.0.1:8377`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runUI),
	}
	cmd.Flags().StringVar(&opts.repo, "repo", "", "the repository (default: the one containing the current directory)")
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:0", "where to listen: a loopback HOST:PORT (port 0: any free one)")
	cli.CompleteFlag(cmd, "repo", cli.Dirs)
	cli.CompleteFlags(cmd, cli.NoValue, "addr")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "interrupted (the server stopped cleanly)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "an --addr that is not a loopback address, or bad usage"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the stores could not be read, or the address could not be bound"})
	return cmd
}

// newLinks prints a new one-time link each time the person presses Enter
// where ui runs (its standard input a terminal), or ui is sent SIGUSR1: a
// browser that crashed with the page open took its session with it. The
// session the last link gave ends.
func newLinks(ctx context.Context, streams *cli.IOStreams, srv *ui.Server) {
	asks := make(chan struct{}, 1)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	if f, ok := streams.In.(*os.File); ok && tty.Is(f) {
		go func() {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				select {
				case asks <- struct{}{}:
				default:
				}
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-usr1:
		case <-asks:
		}
		link, err := srv.NewLink()
		if err != nil {
			fmt.Fprintf(streams.ErrOut, "laserbrain ui: no new link: %v\n", err)
			continue
		}
		fmt.Fprintf(streams.Out, "a new one-time link (the browser that opened the last one no longer reads or acts):\n%s\n", link)
	}
}

func runUI(opts *uiOptions) error {
	// Its acts are a person's (release, authorize, answer), and
	// its link carries their token to whoever started it.
	if err := personOnly("laserbrain ui"); err != nil {
		return err
	}
	if _, err := ui.LoopbackAddr(opts.addr); err != nil {
		return cli.Usagef("%v", err)
	}
	ctx := context.Background()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	repo, err := repoRoot(opts.repo)
	if err != nil {
		return err
	}
	fid, err := fleet.ID(ctx, repo)
	if err != nil {
		return cli.Failure(err)
	}
	b, st, runs, err := opts.Opened(false)
	if err != nil {
		return err
	}
	defer b.Close()
	us, _ := undo.Default() // nil: the changes are left out
	srv, err := ui.New(ui.Options{Repo: repo, FleetID: fid, Fleet: st, Runs: runs, Undo: us, Usage: recordsUsage, Addr: opts.addr, By: currentUser(), Log: opts.IO.ErrOut})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	link, err := srv.Listen()
	if err != nil {
		return cli.Failure(fmt.Errorf("--addr %s: %w", opts.addr, err))
	}
	noteDirFleet(opts.IO.ErrOut, "ui", fid)
	fmt.Fprintf(opts.IO.Out, "laserbrain ui: fleet %s of %s\nopen this link once (it is spent by the first browser to use it; press Enter here, or send SIGUSR1, for a new one):\n%s\n", fid, repo, link)
	go newLinks(ctx, opts.IO, srv)
	if err := srv.Serve(ctx); err != nil {
		return cli.Failure(err)
	}
	return nil
}
