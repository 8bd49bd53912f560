// Package fleet is what the supervisor and the agent hooks persist beyond
// laserbrain's run store: the registry of agent runs (agent, run id, fleet,
// Claude session ids, attended or not, command, created and ended), the
// events observed on each run, and the authorizations a person gave for
// single irreversible or outward actions (dated, scoped, expiring, held as
// data).
//
// A fleet is one repository: its id is the repository's root commit
// (LASERBRAIN_FLEET overrides), so clones and worktrees of one repository are
// one fleet. Store is the interface; Local keeps it in files under
// $LASERBRAIN_HOME/fleet and is the default; package pgfleet keeps it in
// PostgreSQL (supercode/backend picks by LASERBRAIN_STORE). Every method takes a context,
// does one small thing, returns explicit errors (ErrNotFound, ErrExists,
// ErrSpent), and writes are idempotent on caller-chosen ids (an event
// recorded twice by two hook layers is kept once). UpdateRun is a
// read-modify-write under the run's lock (a row lock in a database). Halts,
// releases and the hash-chained supervisor journal (issue 11) are further
// interfaces beside these three, not new methods on them.
//
// Nothing here is opened at package init: the pre-tool-use hook opens the
// store only when a decision needs it.
package fleet
