package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/laserbrain/pgstore"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/pgfleet"
)

// Env is the variable that chooses the backend.
const Env = envconfig.StoreEnv

// Kinds of backend.
const (
	Local    = "local"
	Postgres = "postgres"
)

// Config says where the stores live.
type Config struct {
	Kind string
	// DSN is the PostgreSQL connection string (Kind Postgres).
	DSN string
	// Home is the local home: the stores themselves for Kind Local, the
	// machine's evidence and the hooks' queue for both.
	Home localstore.Paths
	// FleetDir is the local fleet store's directory.
	FleetDir string
	// ReadOnly opens the stores for a command that only reads: nothing is
	// created (no home, no directory), and the local stores refuse writes
	// with laserbrain.ErrReadOnly.
	ReadOnly bool
	// LongLived: the process keeps its connections and sends the same
	// statements many times (pgdb.NewLongLivedPool).
	LongLived bool
}

// FromEnv reads LASERBRAIN_STORE and LASERBRAIN_HOME.
func FromEnv() (Config, error) {
	spec := os.Getenv(Env)
	if err := checkSpec(spec); err != nil {
		return Config{}, envconfig.Errorf("%s=%w", Env, err)
	}
	return Parse(spec, "")
}

// Parse reads a store's name: "local" (or "") for the files under home
// (default: LASERBRAIN_HOME's), or a postgres:// URL; home is the
// machine's home either way.
func Parse(spec, home string) (Config, error) {
	var cfg Config
	if home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Config{}, err
		}
		cfg.Home = localstore.Paths{Home: abs, Config: filepath.Join(abs, "config")}
		cfg.FleetDir = filepath.Join(abs, "fleet")
	} else {
		p, err := localstore.DefaultPaths()
		if err != nil {
			return Config{}, err
		}
		fdir, err := fleet.DefaultDir()
		if err != nil {
			return Config{}, err
		}
		cfg.Home, cfg.FleetDir = p, fdir
	}
	if err := checkSpec(spec); err != nil {
		return Config{}, envconfig.Errorf("%w", err)
	}
	v := strings.TrimSpace(spec)
	cfg.Kind = Local
	if v != "" && v != Local {
		cfg.Kind, cfg.DSN = Postgres, v
	}
	return cfg, nil
}

// checkSpec refuses a store's name that is neither local nor a PostgreSQL
// URL.
func checkSpec(spec string) error {
	v := strings.TrimSpace(spec)
	if v == "" || v == Local || strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		return nil
	}
	return fmt.Errorf("%s: want %q (the files under LASERBRAIN_HOME, the default) or a postgres:// URL", pgdsn.Mask(v), Local)
}

// String says where the stores are, without a password.
func (c Config) String() string {
	if c.Kind == Postgres {
		return pgdsn.Mask(c.DSN)
	}
	return c.Home.Home
}

// Evidence is the machine's evidence counters.
func (c Config) Evidence() *localstore.Evidence { return localstore.OpenEvidence(c.Home.Config) }

// OpenRuns opens laserbrain's run store alone (with its own pool under
// PostgreSQL), for commands that need nothing else.
func OpenRuns(c Config) (laserbrain.Store, error) {
	if c.Kind != Postgres {
		return c.openLocalRuns()
	}
	if err := c.machineDir(); err != nil {
		return nil, err
	}
	return pgstore.Open(c.DSN, pgstore.Options{Evidence: c.Evidence(), LongLived: c.LongLived})
}

func (c Config) openLocalRuns() (laserbrain.Store, error) {
	if c.ReadOnly {
		return localstore.OpenReader(c.Home)
	}
	return localstore.Open(c.Home)
}

// machineDir makes the home's directory for what stays on the machine
// (the evidence counters) beside a database; a reader makes nothing.
func (c Config) machineDir() error {
	if c.ReadOnly {
		return nil
	}
	return os.MkdirAll(c.Home.Config, 0o755)
}

// Backend is both stores on one backend, opened on first use, sharing one
// pool under PostgreSQL.
type Backend struct {
	cfg   Config
	mu    sync.Mutex
	pool  *pgxpool.Pool
	runs  laserbrain.Store
	fleet fleet.Store
}

// New is a backend for c; nothing is opened yet.
func New(c Config) *Backend { return &Backend{cfg: c} }

// Config is where the backend's stores live.
func (b *Backend) Config() Config { return b.cfg }

func (b *Backend) poolLocked() (*pgxpool.Pool, error) {
	if b.pool == nil {
		newPool := pgdb.NewPool
		if b.cfg.LongLived {
			newPool = pgdb.NewLongLivedPool
		}
		p, err := newPool(b.cfg.DSN, 4)
		if err != nil {
			return nil, err
		}
		b.pool = p
	}
	return b.pool, nil
}

// Runs opens laserbrain's run store once.
func (b *Backend) Runs() (laserbrain.Store, error) {
	return openOnce(b, &b.runs, b.cfg.openLocalRuns, func(pool *pgxpool.Pool) (laserbrain.Store, error) {
		if err := b.cfg.machineDir(); err != nil {
			return nil, err
		}
		return pgstore.New(pool, b.cfg.DSN, pgstore.Options{Evidence: b.cfg.Evidence()}), nil
	})
}

// Fleet opens the fleet store once.
func (b *Backend) Fleet() (fleet.Store, error) {
	local := func() (fleet.Store, error) {
		if b.cfg.ReadOnly {
			return fleet.OpenLocalReader(b.cfg.FleetDir), nil
		}
		return fleet.OpenLocal(b.cfg.FleetDir)
	}
	return openOnce(b, &b.fleet, local, func(pool *pgxpool.Pool) (fleet.Store, error) {
		return pgfleet.New(pool, b.cfg.DSN), nil
	})
}

// openOnce is one of the backend's stores, opened on first use and kept in
// *kept: local's for the local files, remote's on the pool for PostgreSQL.
func openOnce[T comparable](b *Backend, kept *T, local func() (T, error), remote func(*pgxpool.Pool) (T, error)) (T, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var none T
	if *kept != none {
		return *kept, nil
	}
	var st T
	var err error
	if b.cfg.Kind != Postgres {
		st, err = local()
	} else {
		var pool *pgxpool.Pool
		if pool, err = b.poolLocked(); err == nil {
			st, err = remote(pool)
		}
	}
	if err != nil {
		return none, err
	}
	*kept = st
	return st, nil
}

// Link is fleet's shared link: the JSONL file the reference uses on this
// machine (LASERBRAIN_LINK_LOG, …) for the local backend, the fleet's link
// in the database under PostgreSQL. The agent is LASERBRAIN_AGENT, the hub
// LASERBRAIN_HUB, as for the file.
func (b *Backend) Link(fleetID string) (*link.Link, error) {
	l, err := link.Default()
	if err != nil || b.cfg.Kind != Postgres {
		return l, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	pool, err := b.poolLocked()
	if err != nil {
		return nil, err
	}
	return &link.Link{Log: pgstore.NewLinkLog(pool, b.cfg.DSN, fleetID), Agent: l.Agent, Hub: l.Hub}, nil
}

// Remote reports whether the backend holds connections to its database:
// closing them may wait on it.
func (b *Backend) Remote() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pool != nil
}

// Close flushes and closes whatever was opened.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	if b.runs != nil {
		errs = append(errs, b.runs.Close())
		b.runs = nil
	}
	if b.fleet != nil {
		errs = append(errs, b.fleet.Close())
		b.fleet = nil
	}
	if b.pool != nil {
		b.pool.Close()
		b.pool = nil
	}
	return errors.Join(errs...)
}

// Components are every part of the PostgreSQL schema, in creation order.
var Components = []pgdb.Component{pgstore.Component, pgfleet.Component, pgfleet.SuperviseComponent}

// Init creates the PostgreSQL schema where it is missing (idempotent; it
// never alters a table) and returns the tables it created. The local
// backend needs none: it says so with an error.
func Init(ctx context.Context, c Config) ([]string, error) {
	if c.Kind != Postgres {
		return nil, fmt.Errorf("%s is not a PostgreSQL store: the local files need no init (set %s=postgres://…)", c, Env)
	}
	return pgdb.InitDSN(ctx, c.DSN, Components...)
}

// Status is what `laserbrain store status` reports.
type Status struct {
	Kind      string `json:"kind"`
	Where     string `json:"where"`
	Reachable bool   `json:"reachable"`
	Schema    bool   `json:"schema"`
	Problem   string `json:"problem,omitempty"`
	Queued    int    `json:"queued"`
}

// Check says whether the backend can be used now: reachable, with its
// schema.
func Check(ctx context.Context, c Config) Status {
	st := Status{Kind: c.Kind, Where: c.String(), Reachable: true, Schema: true}
	if c.Kind != Postgres {
		return st
	}
	pool, err := pgdb.NewPool(c.DSN, 1)
	if err != nil {
		st.Reachable, st.Schema, st.Problem = false, false, err.Error()
		return st
	}
	defer pool.Close()
	if err := pgdb.Check(ctx, pool, Components...); err != nil {
		err = pgdb.Wrap(err, c.DSN)
		st.Schema, st.Problem = false, err.Error()
		st.Reachable = !errors.Is(err, pgdb.ErrUnavailable)
	}
	return st
}
