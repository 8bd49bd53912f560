package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// TestScriptsOCA drives the real binary against a real OCA database: one
// fresh database with ponder's schema per script (PONDER_OCA_DSN) and one
// empty database (PLAIN_DSN), on the server scripts/with-postgres.sh starts
// for `make test`. Without a server it skips, saying so.
func TestScriptsOCA(t *testing.T) {
	pgtest.AdminDSN(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script-oca",
		Setup: func(env *testscript.Env) error {
			if err := setupScript(env); err != nil {
				return err
			}
			// The script's own test owns its databases (dropped at its end).
			st, ok := env.T().(testing.TB)
			if !ok {
				return fmt.Errorf("testscript's T is not a testing.TB")
			}
			env.Setenv("PONDER_OCA_DSN", pgtest.NewOCADatabase(st))
			env.Setenv("PLAIN_DSN", pgtest.NewDatabase(st))
			return nil
		},
		Cmds: scriptCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sql":     cmdSQL,
			"sqlfile": cmdSQLFile,
			"num":     cmdNum,
			"role":    cmdRole,
		}),
	})
}

// sql QUERY [ARG…]: run QUERY on $PONDER_OCA_DSN with bind parameters and
// print each row's columns, tab-separated, NULL as NULL.
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || neg {
		ts.Fatalf("usage: sql QUERY [ARG...]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, ts.Getenv("PONDER_OCA_DSN"))
	ts.Check(err)
	defer conn.Close(context.Background())
	params := make([]any, len(args)-1)
	for i, a := range args[1:] {
		params[i] = a
	}
	rows, err := conn.Query(ctx, args[0], params...)
	ts.Check(err)
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		ts.Check(err)
		cells := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(cells, "\t"))
	}
	ts.Check(rows.Err())
}

// role VAR GRANT…: create a login role of its own for the script, granted
// exactly GRANT… on $PONDER_OCA_DSN's database (each a privilege list run as
// GRANT <it> TO the role, e.g. 'SELECT ON ALL TABLES IN SCHEMA public'),
// and set VAR to $PONDER_OCA_DSN connecting as that role. The role is
// dropped when the script ends.
func cmdRole(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || neg {
		ts.Fatalf("usage: role VAR [GRANT...]")
	}
	dsn := ts.Getenv("PONDER_OCA_DSN")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	ts.Check(err)
	defer conn.Close(context.Background())
	var db string
	ts.Check(conn.QueryRow(ctx, "SELECT current_database()").Scan(&db))
	name := strings.ToLower(args[0]) + "_" + strings.TrimPrefix(db, "lk_")
	if len(name) > 60 {
		name = name[:60]
	}
	role := pgx.Identifier{name}.Sanitize()
	_, err = conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN")
	ts.Check(err)
	ts.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, "DROP OWNED BY "+role)
		_, _ = c.Exec(ctx, "DROP ROLE "+role)
	})
	for _, stmt := range []string{"GRANT CONNECT ON DATABASE " + pgx.Identifier{db}.Sanitize() + " TO " + role, "GRANT USAGE ON SCHEMA public TO " + role} {
		_, err = conn.Exec(ctx, stmt)
		ts.Check(err)
	}
	for _, g := range args[1:] {
		_, err = conn.Exec(ctx, "GRANT "+g+" TO "+role)
		ts.Check(err)
	}
	ts.Setenv(args[0], asUser(dsn, name))
}

// asUser is dsn connecting as user, for URL and key=value connection
// strings alike.
func asUser(dsn, user string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.User(user)
		return u.String()
	}
	// In key=value form a later keyword overrides an earlier one.
	return dsn + " user='" + user + "'"
}
