package pgfleet

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
)

// insertOnce is how a write that may run twice (its first try lost the
// connection after it may have made its change) tells its own row from
// another's: a first try that finds the place taken is refused, whatever
// holds it; a retry that finds the row it was putting (the same document,
// as jsonb compares them) is done, and one that finds another is refused.
func TestInsertOnceTellsItsOwnRow(t *testing.T) {
	s := database(newDatabase(t)).Open(t).(*Store)
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE insert_once (id text PRIMARY KEY, doc jsonb NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const (
		insert = `INSERT INTO insert_once (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING`
		same   = `SELECT coalesce((SELECT doc = $2::jsonb FROM insert_once WHERE id = $1), false)`
	)
	exists := errors.New("exists")
	for _, c := range []struct {
		what  string
		retry bool
		doc   string
		want  error
	}{
		{"the first write", false, `{"a": 1, "b": "x"}`, nil},
		{"the same write again, a first try", false, `{"a": 1, "b": "x"}`, exists},
		{"a retry finding its own row", true, `{"b":"x","a":1}`, nil},
		{"a retry finding another's row", true, `{"a": 2, "b": "x"}`, exists},
		{"another write, a first try", false, `{"a": 2}`, exists},
	} {
		err := s.tx(ctx, func(tx pgx.Tx) error {
			return insertOnce(ctx, tx, c.retry, exists, insert, []any{"r1", c.doc}, same, "r1", c.doc)
		})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.what, err, c.want)
		}
	}
	var n int
	var doc string
	if err := s.pool.QueryRow(ctx, `SELECT count(*), min(doc::text) FROM insert_once`).Scan(&n, &doc); err != nil || n != 1 || doc != `{"a": 1, "b": "x"}` {
		t.Errorf("the table holds %d rows, %s (%v); want the first write's alone", n, doc, err)
	}
}
