// Package pgtest gives tests a real PostgreSQL: a fresh database per test
// on the throwaway server scripts/with-postgres.sh starts (make test runs
// every package under it), and private clusters a test may stop
// mid-session. Without a server every helper skips the test, loudly.
//
//	dsn := pgtest.NewDatabase(t) // dropped when t ends
//
// and one that stops the database under a running session:
//
//	c := pgtest.StartCluster(t)
//	dsn := c.NewDatabase(t)
//	... // some commands
//	c.Halt() // then c.Resume() to bring it back
//
// It serves every package that talks to PostgreSQL (ponder's OCA bridge,
// laserbrain's and the fleet's stores); ponder/oca/pgstore/pgtest adds the
// OCA schema on top.
package pgtest
