// Package pgfleet is the fleet store (supercode/fleet.Store) in
// PostgreSQL, beside laserbrain's run store in the same "laserbrain"
// schema, so several machines share one registry of agent runs, their
// observed events and the authorizations people gave.
//
// Each row keeps the Go value as jsonb plus the columns looked up by (a
// run's fleet and creation time, an event's run and order), so a later
// field needs no ALTER. Concurrency, and why:
//
//   - UpdateRun and UseAuthorization read the row FOR UPDATE and write it
//     back in one READ COMMITTED transaction: the row lock is the run's
//     lock, as the local store's file lock is, and nothing else is read.
//   - An event is inserted ON CONFLICT (run, id) DO NOTHING, so recording
//     it twice (two hook layers, a retry after a lost connection) keeps it
//     once; its order is a sequence number taken at insert.
//   - One halt in force per agent is a partial unique index (fleet, agent)
//     WHERE in_force: two supervisors halting one agent at once put one.
//   - A journal append is one transaction holding the fleet's advisory lock
//     (pg_advisory_xact_lock): one writer per fleet at a time, so the head
//     read and the next record never fork — the head alone would not
//     serialise the first append, and a row lock cannot lock a row not
//     there yet. TestJournalOneWriterPerFleet shows appends lost without it.
//     A retry after a lost connection that finds its own record at the head
//     returns it rather than append it twice.
//   - Supervisor rounds take turns through a session advisory lock per
//     fleet held for the round, on a pooled connection, with the last round
//     in laserbrain.rounds (fleet.Rounds): a supervisor that dies mid-round
//     drops its session and the lock with it.
//
// Creates and adds retried after a lost connection find their own row and
// succeed; a second create with the same id is ErrExists.
package pgfleet
