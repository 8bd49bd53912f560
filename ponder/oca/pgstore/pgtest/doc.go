// Package pgtest is internal/pgtest with ponder's OCA schema: a fresh
// database per test with the schema initialised, on the shared test server
// or on a private cluster a test may stop mid-session. Without a server
// every helper skips the test, loudly.
//
// A test driving the ponder binary against OCA:
//
//	dsn := pgtest.NewOCADatabase(t) // dropped when t ends
//	cmd.Env = append(os.Environ(), "PONDER_OCA=on", "PONDER_OCA_DSN="+dsn)
//
// and one that stops the database under a running session:
//
//	c := pgtest.StartCluster(t)
//	dsn := c.NewOCADatabase(t)
//	... // some commands
//	c.Halt() // then c.Resume() to bring it back
package pgtest
