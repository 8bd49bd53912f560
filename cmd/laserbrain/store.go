package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
)

func newStoreCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Where runs, events and authorizations are kept: status, init, migrate, flush",
		Long: `Everything laserbrain and its hooks keep lives in one store. By default it is
the files under $LASERBRAIN_HOME (nothing to set up). Set

  LASERBRAIN_STORE=postgres://user@host/db

and every command, hook and MCP server uses that PostgreSQL database
instead, so agents on several machines working one repository (one fleet:
the repository's first commit) see each other. The machine's evidence
counters and the hooks' queue stay in the local home. Passwords in
connection strings are never printed.

  laserbrain store status             which store, reachable, schema, queued events
  laserbrain store init               create the schema (idempotent; never alters a table)
  laserbrain store migrate --from local
                                      copy this home into the store LASERBRAIN_STORE names
  laserbrain store flush              record the events hooks queued while it was unreachable`,
		Example: `  laserbrain store status
  LASERBRAIN_STORE=postgres://laserbrain@db.internal/fleet laserbrain store init
  LASERBRAIN_STORE=postgres://laserbrain@db.internal/fleet laserbrain store migrate --from local`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cli.SetExits(cmd)
	cmd.AddCommand(newStoreStatusCmd(f, nil), newStoreInitCmd(f, nil), newStoreMigrateCmd(f, nil), newStoreFlushCmd(f, nil))
	return cmd
}

type storeStatusOptions struct {
	IO          *cli.IOStreams
	StoreConfig func() (backend.Config, error)
	asJSON      bool
}

func newStoreStatusCmd(f *Factory, runF func(*storeStatusOptions) error) *cobra.Command {
	opts := &storeStatusOptions{IO: f.IOStreams, StoreConfig: f.StoreConfig}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say which store is in use and whether it can be used now (exit 1 if not)",
		Long: `status says which store this environment uses (LASERBRAIN_STORE: the
local files under LASERBRAIN_HOME, or a PostgreSQL database, its password
masked), whether it can be used now (the database reachable, its schema
there), and how many events the hooks keep on this machine waiting for it.`,
		Example: "  laserbrain store status\n  laserbrain store status --json",
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runStoreStatus),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print the status as JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFinding, When: "the store cannot be used now: the database is out of reach or has no schema (the status says which)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "LASERBRAIN_STORE names no store"})
	return cmd
}

func runStoreStatus(opts *storeStatusOptions) error {
	cfg, err := opts.StoreConfig()
	if err != nil {
		return err
	}
	st := backend.Check(context.Background(), cfg)
	st.Queued = hook.QueueLength(hook.QueueDirOf(cfg.Home.Home))
	if opts.asJSON {
		if err := cli.WriteJSON(opts.IO.Out, st); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(opts.IO.Out, "store:  %s (%s)\n", st.Where, st.Kind)
		switch {
		case !st.Reachable:
			fmt.Fprintf(opts.IO.Out, "state:  unreachable: %s\n", st.Problem)
		case !st.Schema:
			fmt.Fprintf(opts.IO.Out, "state:  no schema: %s\n", st.Problem)
		default:
			fmt.Fprintln(opts.IO.Out, "state:  ready")
		}
		fmt.Fprintf(opts.IO.Out, "queued: %s waiting in %s\n", text.Plural(int64(st.Queued), "event"), hook.QueueDirOf(cfg.Home.Home))
	}
	if !st.Reachable || !st.Schema {
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

type storeInitOptions struct {
	IO          *cli.IOStreams
	StoreConfig func() (backend.Config, error)
	asJSON      bool
}

func newStoreInitCmd(f *Factory, runF func(*storeInitOptions) error) *cobra.Command {
	opts := &storeInitOptions{IO: f.IOStreams, StoreConfig: f.StoreConfig}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the PostgreSQL schema LASERBRAIN_STORE names (idempotent; never alters a table)",
		Long: `init creates, in the database LASERBRAIN_STORE names, the "laserbrain" schema
and whichever of its tables are missing, in one transaction. Running it again
changes nothing. It never alters or drops a table: a table from another
version that lacks a column is reported and left alone.`,
		Example: "  LASERBRAIN_STORE=postgres://laserbrain@db.internal/fleet laserbrain store init",
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runStoreInit),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print what was created as JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "LASERBRAIN_STORE is not a database"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the database is out of reach, or holds another version's tables (which are left alone)"})
	return cmd
}

func runStoreInit(opts *storeInitOptions) error {
	if err := personOnly("laserbrain store init"); err != nil {
		return err
	}
	cfg, err := opts.StoreConfig()
	if err != nil {
		return err
	}
	if cfg.Kind != backend.Postgres {
		return cli.Usagef("%s is unset or local: the local files need no init (set %s=postgres://…)", backend.Env, backend.Env)
	}
	created, err := backend.Init(context.Background(), cfg)
	if err != nil {
		return cli.Failure(err)
	}
	if opts.asJSON {
		if created == nil {
			created = []string{}
		}
		return cli.WriteJSON(opts.IO.Out, map[string]any{"store": cfg.String(), "created": created})
	}
	if len(created) == 0 {
		fmt.Fprintf(opts.IO.Out, "%s: the schema is complete; nothing created\n", cfg)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "%s: created %s:\n", cfg, text.Plural(int64(len(created)), "table"))
	for _, t := range created {
		fmt.Fprintf(opts.IO.Out, "  %s\n", t)
	}
	return nil
}

type migrateOptions struct {
	IO          *cli.IOStreams
	StoreConfig func() (backend.Config, error)

	from, to         string
	fromHome, toHome string
	json             bool
}

func newStoreMigrateCmd(f *Factory, runF func(*migrateOptions) error) *cobra.Command {
	opts := &migrateOptions{IO: f.IOStreams, StoreConfig: f.StoreConfig}
	cmd := &cobra.Command{
		Use:   "migrate --from local|URL [--from-home DIR] [--to local|URL] [--to-home DIR]",
		Short: "Copy one store into another (a home into the database, or back)",
		Long: `migrate copies laserbrain's runs with their histories, the context store,
the fleet's runs, events, authorizations and halts, and the supervisor's
journals (of the fleets the runs and halts name, and this repository's),
record by record so that they verify the same, from one store into another.
--to defaults to the store LASERBRAIN_STORE names; a local side is the home
--from-home / --to-home (default $LASERBRAIN_HOME's). It can be run again:
what the target already has is left alone and counted as present, and one
source's contexts are combined into the target once.

  laserbrain store migrate --from local                       this home into $LASERBRAIN_STORE
  laserbrain store migrate --from postgres://… --to local --to-home ~/lb-copy`,
		Example: `  laserbrain store migrate --from local
  laserbrain store migrate --from local --from-home ~/old-home --json
  laserbrain store migrate --from postgres://laserbrain@db.internal/fleet --to local --to-home ~/lb-copy`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runStoreMigrate),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.from, "from", "", "the store to copy: local, or a postgres:// URL")
	fl.StringVar(&opts.to, "to", "", "the store to copy into (default: LASERBRAIN_STORE)")
	fl.StringVar(&opts.fromHome, "from-home", "", "the home of a local --from (default: LASERBRAIN_HOME's)")
	fl.StringVar(&opts.toHome, "to-home", "", "the home of a local --to (default: LASERBRAIN_HOME's)")
	fl.BoolVar(&opts.json, "json", false, "print what was copied as JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no --from, a store that is none, or the same store on both sides"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "a store could not be read or written (what was copied before stays)"})
	return cmd
}

func runStoreMigrate(opts *migrateOptions) error {
	if err := personOnly("laserbrain store migrate"); err != nil {
		return err
	}
	if opts.from == "" {
		return cli.Usagef("--from is required: local, or a postgres:// URL")
	}
	from, err := backend.Parse(opts.from, opts.fromHome)
	if err != nil {
		return cli.Usagef("--from %v", err)
	}
	var to backend.Config
	if opts.to == "" {
		if to, err = opts.StoreConfig(); err != nil {
			return err
		}
		if opts.toHome != "" {
			to, err = backend.Parse(to.DSN, opts.toHome)
		}
	} else {
		to, err = backend.Parse(opts.to, opts.toHome)
	}
	if err != nil {
		return cli.Usagef("--to %v", err)
	}
	if from.Kind == to.Kind && from.String() == to.String() {
		return cli.Usagef("--from and --to are the same store (%s): set %s or --to", from, backend.Env)
	}
	// The repository here is one of the fleets whose journal moves
	// (the others are found from their runs and halts).
	var extra []string
	if fid, err := fleet.ID(context.Background(), "."); err == nil {
		extra = append(extra, fid)
	}
	rep, err := backend.Migrate(context.Background(), from, to, extra...)
	if err != nil {
		return cli.Failure(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, rep)
	}
	fmt.Fprintf(opts.IO.Out, "from %s\nto   %s\n", rep.From, rep.To)
	fmt.Fprintf(opts.IO.Out, "runs:           %d copied, %d already there\n", rep.Runs.Copied, rep.Runs.Present)
	ctxNote := "combined"
	if rep.ContextsBefore {
		ctxNote = "already combined from this source before; left as they are"
	}
	fmt.Fprintf(opts.IO.Out, "contexts:       %d, %s\n", rep.Contexts, ctxNote)
	fmt.Fprintf(opts.IO.Out, "fleet runs:     %d copied, %d already there\n", rep.FleetRuns.Copied, rep.FleetRuns.Present)
	fmt.Fprintf(opts.IO.Out, "events:         %d copied, %d already there\n", rep.Events.Copied, rep.Events.Present)
	fmt.Fprintf(opts.IO.Out, "authorizations: %d copied, %d already there\n", rep.Authorizations.Copied, rep.Authorizations.Present)
	fmt.Fprintf(opts.IO.Out, "halts:          %d copied, %d already there\n", rep.Halts.Copied, rep.Halts.Present)
	fmt.Fprintf(opts.IO.Out, "journals:       %d copied, %d already there\n", rep.Journals.Copied, rep.Journals.Present)
	return nil
}

type storeFlushOptions struct {
	IO          *cli.IOStreams
	StoreConfig func() (backend.Config, error)
	Tracker     func() *agentrun.Tracker
}

func newStoreFlushCmd(f *Factory, runF func(*storeFlushOptions) error) *cobra.Command {
	opts := &storeFlushOptions{IO: f.IOStreams, StoreConfig: f.StoreConfig, Tracker: f.Tracker}
	cmd := &cobra.Command{
		Use:   "flush",
		Short: "Record now the events hooks queued while the store was out of reach",
		Long: `flush records the events the hooks kept on this machine while the store's
database was out of reach, oldest first, each once (the next hook that
reaches the database does the same by itself). What the database still
cannot take stays queued.`,
		Example: "  laserbrain store flush",
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runStoreFlush),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "LASERBRAIN_STORE names no store"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the database is still out of reach (what could be recorded was)"})
	return cmd
}

func runStoreFlush(opts *storeFlushOptions) error {
	if _, err := opts.StoreConfig(); err != nil {
		return err
	}
	h := &hook.Handler{Tracker: opts.Tracker(), ValidatePolicy: policyschema.Validate}
	defer h.Tracker.Close()
	n, err := h.Flush(context.Background())
	if errors.Is(err, pgdb.ErrUnavailable) {
		return cli.Failure(fmt.Errorf("%s recorded, the rest wait: %w", text.Plural(int64(n), "event"), err))
	}
	if err != nil {
		return cli.Failure(err)
	}
	_, _ = fmt.Fprintf(opts.IO.Out, "%s recorded\n", text.Plural(int64(n), "queued event"))
	return nil
}
