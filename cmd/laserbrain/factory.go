package main

import (
	"context"
	"errors"
	"os"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
)

// Factory is what every command is built with: the streams, and the one
// way this binary opens its stores — the backend LASERBRAIN_STORE names
// (the files under LASERBRAIN_HOME by default). main builds one and hands
// it to every command; a command keeps what it needs in its options, so a
// test can build a command with a factory of its own and read the options
// it parsed.
type Factory struct {
	IOStreams *cli.IOStreams
	// StoreConfig says where the stores live. A value that names no store
	// is a configuration mistake (exit 2).
	StoreConfig func() (backend.Config, error)
	// Getenv reads the environment the commands see (nil: this
	// process's).
	Getenv func(string) string
	// AgentRun is set when the commands run in laserbrain run's own
	// process for its confined agent (the broker answers them there):
	// they check that run alone, and the process's signals are the
	// supervisor's, not theirs.
	AgentRun string
	// Passes are laserbrain run's one-use passes for its confined agent,
	// when the commands run in its process (laserbrain act spends them;
	// nil elsewhere: a pass is honoured only there).
	Passes *broker.Passes
	// Dir is the commands' working directory, and Environ the
	// environment a command laserbrain act carries out gets, when they
	// are not this process's ("" and nil: this process's).
	Dir     string
	Environ []string
}

// getenv reads the commands' environment.
func (f *Factory) getenv(k string) string {
	if f.Getenv != nil {
		return f.Getenv(k)
	}
	return os.Getenv(k)
}

// newFactory is the factory of a process: its stores are the ones its
// environment names.
func newFactory(streams *cli.IOStreams) *Factory {
	return &Factory{IOStreams: streams, StoreConfig: backend.FromEnv}
}

// Backend is both stores, nothing opened yet; readOnly opens them for a
// command that only reads (nothing is created). The caller closes it.
func (f *Factory) Backend(readOnly bool) (*backend.Backend, error) {
	cfg, err := f.StoreConfig()
	if err != nil {
		return nil, err
	}
	cfg.ReadOnly = readOnly
	return backend.New(cfg), nil
}

// Stores opens the stores for writing: a Tracker's Stores.
func (f *Factory) Stores() (agentrun.Stores, error) { return f.Backend(false) }

// readStores opens the stores for reading only.
func (f *Factory) readStores() (agentrun.Stores, error) { return f.Backend(true) }

// Tracker tracks agent runs on the stores, opened on its first use;
// closing it closes them. This binary links the policy schema, so every
// Tracker it makes checks a project policy it reads against it.
func (f *Factory) Tracker() *agentrun.Tracker {
	return &agentrun.Tracker{Stores: f.Stores, ValidatePolicy: policyschema.Validate, Getenv: f.Getenv, InSupervisor: f.AgentRun != ""}
}

// Reader is a Tracker on the stores opened for reading, for a command
// that only reads: asking about a fresh home creates none.
func (f *Factory) Reader() *agentrun.Tracker {
	return &agentrun.Tracker{Stores: f.readStores, ValidatePolicy: policyschema.Validate, Getenv: f.Getenv}
}

// RunStore opens laserbrain's run store alone (with its own connections
// under PostgreSQL), for a command that needs nothing else.
func (f *Factory) RunStore() (laserbrain.Store, error) {
	cfg, err := f.StoreConfig()
	if err != nil {
		return nil, err
	}
	return backend.OpenRuns(cfg)
}

// StreamStore is RunStore for a stream: its statements, sent again and
// again, are prepared once per connection.
func (f *Factory) StreamStore() (laserbrain.Store, error) {
	cfg, err := f.StoreConfig()
	if err != nil {
		return nil, err
	}
	cfg.LongLived = true
	return backend.OpenRuns(cfg)
}

// Hook is what a hook process of this binary takes: the project policy
// checked against its schema, the stores on the backend.
func (f *Factory) Hook() hook.Binary {
	return hook.Binary{ValidatePolicy: policyschema.Validate, Stores: f.Stores}
}

// Opened opens both stores, for reading only when readOnly (nothing is
// created), for a command that reads a fleet with its runs; the caller
// closes the backend. A bad setting is a configuration mistake (exit 2), a
// store that cannot be opened a failure.
func (f *Factory) Opened(readOnly bool) (*backend.Backend, fleet.Store, laserbrain.Store, error) {
	b, err := f.Backend(readOnly)
	if err != nil {
		return nil, nil, nil, err // a configuration mistake: exit 2 (internal/cli)
	}
	st, err := b.Fleet()
	if err != nil {
		b.Close()
		return nil, nil, nil, cli.Failure(err)
	}
	runs, err := b.Runs()
	if err != nil {
		b.Close()
		return nil, nil, nil, cli.Failure(err)
	}
	return b, st, runs, nil
}

// fleetOpener is FleetOf's kind: a command's way to its fleet's store.
type fleetOpener = func(ctx context.Context, repo string, readOnly bool) (fleet.Store, string, error)

// FleetOf opens the fleet store (closing it closes its backend), for
// reading only when readOnly (nothing is created), and resolves the fleet
// of the repository containing repo.
func (f *Factory) FleetOf(ctx context.Context, repo string, readOnly bool) (fleet.Store, string, error) {
	fid, err := fleet.ID(ctx, repo)
	if err != nil {
		return nil, "", cli.Failure(err)
	}
	b, err := f.Backend(readOnly)
	if err != nil {
		return nil, "", err // a configuration mistake: exit 2 (internal/cli)
	}
	st, err := b.Fleet()
	if err != nil {
		b.Close()
		return nil, "", cli.Failure(err)
	}
	return closingFleet{st, b}, fid, nil
}

// closingFleet is a fleet store whose Close closes its backend too.
type closingFleet struct {
	fleet.Store
	b *backend.Backend
}

func (c closingFleet) Close() error { return c.b.Close() }

// JournalLocation, StartRound and LastRound pass the store's own through
// (fleet.JournalLocator, fleet.Rounds): the embedded interface hides them.
func (c closingFleet) JournalLocation(fl string) string { return fleet.JournalLocation(c.Store, fl) }

// RotateJournal and ArchivedRecords pass the store's archive through
// (fleet.JournalArchive): a store that keeps none never rotates.
func (c closingFleet) RotateJournal(ctx context.Context, fl string, from, minBytes int64) (bool, error) {
	if a, ok := c.Store.(fleet.JournalArchive); ok {
		return a.RotateJournal(ctx, fl, from, minBytes)
	}
	return false, nil
}

func (c closingFleet) ArchivedRecords(ctx context.Context, fl string, from, to int64) ([]fleet.JournalRecord, error) {
	if a, ok := c.Store.(fleet.JournalArchive); ok {
		return a.ArchivedRecords(ctx, fl, from, to)
	}
	return nil, &fleet.ArchiveMissingError{From: from, To: to, Why: "is not kept: the fleet store keeps no archive"}
}

func (c closingFleet) StartRound(ctx context.Context, fl string) (int64, func(int64) error, error) {
	rl, ok := c.Store.(fleet.Rounds)
	if !ok {
		return 0, nil, errors.New("the fleet store keeps no round counter")
	}
	return rl.StartRound(ctx, fl)
}

func (c closingFleet) LastRound(ctx context.Context, fl string) (fleet.RoundMark, error) {
	rl, ok := c.Store.(fleet.Rounds)
	if !ok {
		return fleet.RoundMark{}, nil
	}
	return rl.LastRound(ctx, fl)
}

// RestartJournal passes the store's own through (fleet.JournalRestarter).
func (c closingFleet) RestartJournal(ctx context.Context, fl string, first fleet.JournalRecord) (fleet.JournalRecord, string, error) {
	r, ok := c.Store.(fleet.JournalRestarter)
	if !ok {
		return fleet.JournalRecord{}, "", errors.New("this store cannot start a fleet's journal again")
	}
	return r.RestartJournal(ctx, fl, first)
}
