// Package pgtest gives tests a real PostgreSQL: a fresh database per test
// on the throwaway server scripts/with-postgres.sh starts (make test runs
// every package under it), with or without ponder's OCA schema, and private
// clusters a test may stop mid-session. Without a server every helper skips
// the test, loudly.
package pgtest
