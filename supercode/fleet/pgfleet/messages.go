package pgfleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/supercode/fleet"
)

var _ fleet.Messages = (*Store)(nil)

// Say implements fleet.Messages: the primary key (fleet, agent, id) keeps the
// first message with an id.
func (s *Store) Say(ctx context.Context, m fleet.Message) (bool, error) {
	if m.ID == "" || m.Fleet == "" || m.Agent == "" || m.Text == "" {
		return false, fmt.Errorf("a message needs an id, a fleet, an agent and a text")
	}
	if !fleet.ValidKind(m.Kind) {
		return false, fmt.Errorf("message kind %q: want advice, answer, halt, release, yield or loop", m.Kind)
	}
	m.Delivered = nil
	data, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	added := false
	err = s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO laserbrain.voice (fleet, agent, id, message) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING`,
			m.Fleet, m.Agent, m.ID, string(data))
		if err != nil {
			return err
		}
		// A retry whose first try committed finds its own row: not a
		// second message, and still the one it added.
		added = added || tag.RowsAffected() == 1
		return nil
	})
	return added, err
}

// Deliver implements fleet.Messages. One indexed read while nothing waits;
// otherwise one transaction marks every waiting message delivered (an
// UPDATE whose row locks make a concurrent Deliver wait, then find them
// delivered and skip them) and journals each delivery under the journal's
// lock, so a delivery and its record commit together.
func (s *Store) Deliver(ctx context.Context, fl, agent string, d fleet.Delivery) ([]fleet.Message, error) {
	var waiting bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM laserbrain.voice WHERE fleet = $1 AND agent = $2 AND delivered IS NULL)`, fl, agent).Scan(&waiting); err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	if !waiting {
		return nil, nil
	}
	del := fleet.Delivery{At: d.At.UTC(), Via: d.Via}
	dj, err := json.Marshal(del)
	if err != nil {
		return nil, err
	}
	var out []fleet.Message
	err = s.tx(ctx, func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `UPDATE laserbrain.voice SET delivered = $3, message = jsonb_set(message, '{delivered}', $4::jsonb)
WHERE fleet = $1 AND agent = $2 AND delivered IS NULL RETURNING seq, message`, fl, agent, del.At, string(dj))
		if err != nil {
			return err
		}
		type row struct {
			seq int64
			raw []byte
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			return x, r.Scan(&x.seq, &x.raw)
		})
		if err != nil {
			return err
		}
		sortRows := func(a, b row) int { return cmp.Compare(a.seq, b.seq) }
		slices.SortFunc(got, sortRows)
		for _, g := range got {
			var m fleet.Message
			if err := json.Unmarshal(g.raw, &m); err != nil {
				return fmt.Errorf("a message to %s is damaged: %w", agent, err)
			}
			rec, err := fleet.DeliveryRecord(m)
			if err != nil {
				return err
			}
			if _, err := appendJournal(ctx, tx, rec, false); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// Messages implements fleet.Messages.
func (s *Store) Messages(ctx context.Context, fl, agent string) ([]fleet.Message, error) {
	return listJSON[fleet.Message](ctx, s, "a message to "+agent, `SELECT message FROM laserbrain.voice WHERE fleet = $1 AND agent = $2 ORDER BY seq`, fl, agent)
}
