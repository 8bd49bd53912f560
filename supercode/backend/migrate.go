package backend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Copied counts what a migration copied and what the target had already.
type Copied struct {
	Copied  int `json:"copied"`
	Present int `json:"present"`
}

// count counts one copy by its error: nil is copied, exists (or one
// wrapping it) was there already; any other is the copy of what failing.
func (c *Copied) count(err, exists error, what string) (copied bool, _ error) {
	switch {
	case errors.Is(err, exists):
		c.Present++
		return false, nil
	case err != nil:
		return false, fmt.Errorf("copying %s: %w", what, err)
	}
	c.Copied++
	return true, nil
}

// MigrateReport says what Migrate did.
type MigrateReport struct {
	From           string `json:"from"`
	To             string `json:"to"`
	Runs           Copied `json:"runs"`
	Contexts       int    `json:"contexts"`
	ContextsBefore bool   `json:"contexts_imported_before"`
	FleetRuns      Copied `json:"fleet_runs"`
	Events         Copied `json:"events"`
	Authorizations Copied `json:"authorizations"`
	Halts          Copied `json:"halts"`
	// Journals counts fleets' journals: copied whole into an empty target
	// journal, or present (the target already has one for the fleet).
	Journals Copied `json:"journals"`
}

// Migrate copies everything from one backend into another: laserbrain's
// runs with their histories, the context store, the fleet's runs, events,
// authorizations and halts (released ones with their release), and the
// supervisor's journal of every fleet named in extraFleets or known from
// the runs and halts — record by record, so the copy hashes the same and
// verifies. It can be run again: what the target has is left as it is (a
// journal the target has for a fleet is not touched), and the contexts of
// one source are combined into the target once (a source is named by an id
// kept in it). The link stays where it is: a live channel, not a record.
func Migrate(ctx context.Context, from, to Config, extraFleets ...string) (MigrateReport, error) {
	rep := MigrateReport{From: from.String(), To: to.String()}
	if from.Kind == to.Kind && from.String() == to.String() {
		return rep, fmt.Errorf("migrate from %s to itself", from)
	}
	src, dst := New(from), New(to)
	defer src.Close()
	defer dst.Close()
	if err := copyRuns(ctx, src, dst, &rep); err != nil {
		return rep, err
	}
	if err := copyFleet(ctx, src, dst, &rep, extraFleets); err != nil {
		return rep, err
	}
	if err := dst.Close(); err != nil {
		return rep, err
	}
	return rep, nil
}

func copyRuns(ctx context.Context, src, dst *Backend, rep *MigrateReport) error {
	sr, err := src.Runs()
	if err != nil {
		return err
	}
	dr, err := dst.Runs()
	if err != nil {
		return err
	}
	exp, ok1 := sr.(laserbrain.Exporter)
	imp, ok2 := dr.(laserbrain.Importer)
	if !ok1 || !ok2 {
		return errors.New("these stores cannot be copied")
	}
	ids, err := exp.RunIDs(ctx)
	if err != nil {
		return fmt.Errorf("listing the runs of %s: %w", src.cfg, err)
	}
	for _, id := range ids {
		r, err := sr.ReadRun(ctx, id)
		if err != nil {
			return fmt.Errorf("reading run %s from %s: %w", id, src.cfg, err)
		}
		if _, err := rep.Runs.count(imp.ImportRun(ctx, r), laserbrain.ErrRunExists, "run "+id); err != nil {
			return err
		}
	}
	entries, err := exp.ContextEntries(ctx)
	if err != nil {
		return fmt.Errorf("reading the contexts of %s: %w", src.cfg, err)
	}
	source, err := sourceID(ctx, src.cfg)
	if err != nil {
		return err
	}
	imported, err := imp.ImportContexts(ctx, source, entries)
	if err != nil {
		return fmt.Errorf("copying the contexts: %w", err)
	}
	rep.Contexts, rep.ContextsBefore = len(entries), !imported
	return nil
}

func copyFleet(ctx context.Context, src, dst *Backend, rep *MigrateReport, extraFleets []string) error {
	sf, err := src.Fleet()
	if err != nil {
		return err
	}
	df, err := dst.Fleet()
	if err != nil {
		return err
	}
	runs, err := sf.ListRuns(ctx, fleet.RunFilter{})
	if err != nil {
		return fmt.Errorf("listing the fleet's runs in %s: %w", src.cfg, err)
	}
	for _, r := range runs {
		if _, err := rep.FleetRuns.count(df.CreateRun(ctx, r), fleet.ErrExists, "fleet run "+r.ID); err != nil {
			return err
		}
		evs, err := sf.Events(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("reading the events of run %s: %w", r.ID, err)
		}
		for _, e := range evs {
			added, err := df.AppendEvent(ctx, r.ID, e)
			if err != nil {
				return fmt.Errorf("copying an event of run %s: %w", r.ID, err)
			}
			if added {
				rep.Events.Copied++
			} else {
				rep.Events.Present++
			}
		}
	}
	auths, err := sf.ListAuthorizations(ctx, "")
	if err != nil {
		return fmt.Errorf("listing the authorizations in %s: %w", src.cfg, err)
	}
	for _, a := range auths {
		if _, err := rep.Authorizations.count(df.AddAuthorization(ctx, a), fleet.ErrExists, "authorization "+a.ID); err != nil {
			return err
		}
	}
	fleets := map[string]bool{}
	for _, f := range extraFleets {
		fleets[f] = true
	}
	for _, r := range runs {
		fleets[r.Fleet] = true
	}
	halts, err := sf.ListHalts(ctx, "")
	if err != nil {
		return fmt.Errorf("listing the halts in %s: %w", src.cfg, err)
	}
	for _, h := range halts {
		fleets[h.Fleet] = true
		copied, err := rep.Halts.count(df.PutHalt(ctx, h), fleet.ErrExists, "halt "+h.ID)
		if err != nil {
			return err
		}
		if copied && h.Released != nil {
			if _, err := df.ReleaseHalt(ctx, h.Fleet, h.Agent, *h.Released); err != nil {
				return fmt.Errorf("copying the release of halt %s: %w", h.ID, err)
			}
		}
	}
	for f := range fleets {
		if f == "" {
			continue
		}
		if err := copyJournal(ctx, sf, df, f, rep); err != nil {
			return err
		}
	}
	return nil
}

// copyJournal appends fleet's journal, record by record, into a target
// that has none for the fleet: the records seal to the same hashes, which
// is checked before the copy is counted.
func copyJournal(ctx context.Context, sf, df fleet.Store, f string, rep *MigrateReport) error {
	// A rotated journal is copied whole: its archive, then the rest.
	recs, gone, err := fleet.ReadJournal(ctx, sf, f)
	if err != nil {
		return fmt.Errorf("reading the journal of fleet %s: %w", f, err)
	}
	if gone != nil {
		return fmt.Errorf("the journal of fleet %s is not copied: %w", f, gone)
	}
	if len(recs) == 0 {
		return nil
	}
	head, err := sf.JournalHead(ctx, f)
	if err != nil {
		return err
	}
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		return fmt.Errorf("the journal of fleet %s does not verify, so it is not copied: %v", f, p)
	}
	if th, err := df.JournalHead(ctx, f); err != nil {
		return err
	} else if th.Records > 0 {
		rep.Journals.Present++
		return nil
	}
	for _, r := range recs {
		if int64(len(recs)) > head.Records && r.Seq > head.Records {
			break // written, never acknowledged: not part of the journal
		}
		in := r
		in.Prev, in.Hash, in.Raw = "", "", nil
		got, err := df.AppendJournal(ctx, in)
		if err != nil {
			return fmt.Errorf("copying record %d of fleet %s's journal: %w", r.Seq, f, err)
		}
		if got.Hash != r.Hash || got.Seq != r.Seq {
			return fmt.Errorf("record %d of fleet %s's journal copied as seq %d hash %s, not %s: the target's journal is not a copy", r.Seq, f, got.Seq, got.Hash, r.Hash)
		}
	}
	rep.Journals.Copied++
	return nil
}

// sourceID names a store as a migration source, the same every time: an id
// kept in the home (store-id) or in the database.
func sourceID(ctx context.Context, c Config) (string, error) {
	if c.Kind != Postgres {
		p := filepath.Join(c.Home.Home, "store-id")
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return "home:" + strings.TrimSpace(string(b)), nil
		}
		id := randomID()
		if err := fsx.WriteFile(p, []byte(id+"\n"), 0o644); err != nil {
			return "", err
		}
		return "home:" + id, nil
	}
	pool, err := pgdb.NewPool(c.DSN, 1)
	if err != nil {
		return "", err
	}
	defer pool.Close()
	var id string
	err = pgdb.Tx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('laserbrain store id'))`); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT id FROM laserbrain.applied WHERE id LIKE 'store-id:%' LIMIT 1`).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			id = "store-id:" + randomID()
			_, err = tx.Exec(ctx, `INSERT INTO laserbrain.applied (id) VALUES ($1)`, id)
		}
		return err
	})
	if err != nil {
		return "", pgdb.Wrap(err, c.DSN)
	}
	return "db:" + strings.TrimPrefix(id, "store-id:"), nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
