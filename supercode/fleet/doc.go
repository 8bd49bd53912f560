// Package fleet is what the supervisor and the agent hooks persist beyond
// laserbrain's run store: the registry of agent runs (agent, run id, fleet,
// Claude session ids, attended or not, command, created and ended), the
// events observed on each run, the authorizations a person gave for
// single irreversible or outward actions (dated, scoped, expiring, held as
// data), the halts the supervisor put on agents and their releases, and the
// supervisor's hash-chained journal.
//
// A fleet is one repository: its id is the repository's root commit
// (LASERBRAIN_FLEET overrides), so clones and worktrees of one repository are
// one fleet. Store is the interface; Local keeps it in files under
// $LASERBRAIN_HOME/fleet and is the default. The interface is cut for a
// PostgreSQL implementation too (issue 16): every method takes a context,
// does one small thing, returns explicit errors (ErrNotFound, ErrExists,
// ErrSpent), and writes are idempotent on caller-chosen ids (an event
// recorded twice by two hook layers is kept once). UpdateRun is a
// read-modify-write under the run's lock (a row lock in a database).
//
// Halts and Journal are two more small interfaces beside Runs, Events and
// Authorizations. A halt is keyed by fleet and agent, one in force at a
// time, and its id is the caller's, so a re-run round puts it once. The
// journal is one hash chain per fleet in the reference's audit format (see
// JournalRecord): the hash covers the record's content only, so a database
// keeps the same chain as the files; AppendJournal must read the last
// record and append the next as one step against every other writer (the
// file lock here; in PostgreSQL a row lock on the fleet's head, updated in
// the same transaction as the insert), and JournalRecords must return the
// bytes it stored (a text column, not jsonb). VerifyJournal checks any
// backend's records the same way; fleettest holds every backend to it.
//
// Nothing here is opened at package init: the pre-tool-use hook opens the
// store only when a decision needs it.
package fleet
