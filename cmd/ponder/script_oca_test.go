package main

import (
	"context"
	"fmt"
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
