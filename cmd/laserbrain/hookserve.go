package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/hook"
	"github.com/laserkit/laserkit/supercode/hookserver"
)

type hookServeOptions struct {
	IO          *cli.IOStreams
	StoreConfig func() (backend.Config, error)
	Getenv      func(string) string

	socket string
}

func newHookServeCmd(f *Factory, runF func(*hookServeOptions) error) *cobra.Command {
	opts := &hookServeOptions{IO: f.IOStreams, StoreConfig: f.StoreConfig, Getenv: f.getenv}
	cmd := &cobra.Command{
		Use:   "serve --socket PATH",
		Short: "Answer laserbrain-gate's hooks on a database store from one long-lived process",
		Long: `serve answers hook events handed to it on a unix socket, each as a hook
process of its caller would (the caller's environment and directory come
with the event), on one store connection it keeps open. laserbrain-gate,
which links no database driver, starts it when LASERBRAIN_STORE names a
PostgreSQL database and none listens yet (one per user, store and
laserbrain binary, in a directory only the user may enter), instead of a
laserbrain process per tool call. It answers only its own user, writes
"` + hookserver.Ready + `" on standard output once it listens, and exits when it has
answered nothing for ` + hookserver.DefaultIdle.String() + ` (` + hookserver.EnvIdle + `: another duration).
Nobody needs to start it by hand.`,
		Example: `  laserbrain hook serve --socket /tmp/laserbrain-1000/hook.sock`,
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runHookServe),
	}
	cmd.Flags().StringVar(&opts.socket, "socket", "", "the unix socket to listen on (its directory must be the user's alone)")
	cli.CompleteFlags(cmd, cli.NoValue, "socket")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "it was idle long enough and ended"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no --socket, or a bad store setting"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the socket could not be opened (a server listens there already, or its directory is not private)"})
	return cmd
}

func runHookServe(opts *hookServeOptions) error {
	if opts.socket == "" {
		return cli.Usagef("--socket is required")
	}
	if _, err := opts.StoreConfig(); err != nil {
		return err
	}
	ln, err := hookserver.Listen(opts.socket)
	if err != nil {
		return cli.Failure(err)
	}
	held := &heldStores{config: opts.StoreConfig}
	defer held.close()
	var last atomic.Int64 // when the last request ended (unix ns)
	var inflight atomic.Int32
	last.Store(time.Now().UnixNano())
	self, _ := os.Executable()
	srv := &broker.Server{Self: self, Dir: "/", Allow: hookserver.Allow, CallerEnv: true,
		Local: func(ctx context.Context, op broker.Op) (int, bool) {
			inflight.Add(1)
			defer func() { last.Store(time.Now().UnixNano()); inflight.Add(-1) }()
			return held.hook(ctx, op, hook.Env{Getenv: op.Getenv, Dir: op.Dir})
		}}
	srv.Serve(ln)
	fmt.Fprintln(opts.IO.Out, hookserver.Ready)
	quietStdout()
	// Ended by a signal, it leaves as it does when idle.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	idle := hookserver.Idle(opts.Getenv)
	t := time.NewTimer(idle)
	defer t.Stop()
	for quiet := false; !quiet; {
		select {
		case <-ctx.Done():
			quiet = true
		case <-t.C:
			wait := time.Until(time.Unix(0, last.Load()).Add(idle))
			quiet = wait <= 0 && inflight.Load() == 0
			t.Reset(max(wait, idle/10))
		}
	}
	// No hook reaches this server once its path is gone; those that
	// connected before are answered.
	ln.Unlink()
	srv.Close(hook.StoreDeadline)
	return nil
}

// quietStdout points standard output at /dev/null once the readiness line
// is written: the hook that started the server reads nothing more, and a
// write to its closed pipe would end the server.
func quietStdout() {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}
}

// hook answers op in this process when it is a hook as the installed
// commands run it (false: it is not), on the held stores, one hook at a
// time (they are not shared between goroutines otherwise).
func (h *heldStores) hook(ctx context.Context, op broker.Op, caller hook.Env) (int, bool) {
	hc, ok := fastHook(op.Argv)
	if !ok {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := hook.Binary{ValidatePolicy: policyschema.Validate, Stores: h.stores}
	return hook.Serve(ctx, hc.event, hc.client, hc.format, b, caller, op.Stdin, op.Stdout, op.Stderr), true
}
