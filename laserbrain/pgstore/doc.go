// Package pgstore is laserbrain's Store in PostgreSQL (pgx), for a fleet
// that spans machines: runs, their steps and the context store in the
// "laserbrain" schema of one database (LASERBRAIN_STORE=postgres://…). The
// machine's evidence counters stay on the machine (Options.Evidence).
//
// Concurrency, and why it is done this way:
//
//   - Holding a run (OpenRun until Close) is a session-level advisory lock,
//     pg_try_advisory_lock(hash of the run id), taken on one connection per
//     process (taken from the pool while any run is held; the held runs'
//     reads and saves use it too) and polled until LockTimeout. Session locks
//     outlive transactions, so a stream can hold hundreds of runs for
//     minutes without holding a transaction (or a connection) open for
//     each, and the server drops them if the process dies or its
//     connection breaks — the same semantics as the local store's file
//     locks.
//   - A save is one READ COMMITTED transaction: SELECT … FOR UPDATE on the
//     run's row, a version check, the state update, the new steps, and
//     their context records. The row lock plus the version is a fence: a
//     handle whose advisory lock was lost with its connection cannot
//     overwrite another process's save (ErrTakenOver). Context rows are
//     read-modify-written under FOR UPDATE in id order (no deadlock cycle),
//     a missing row inserted empty first so that two first records queue on
//     it. SERIALIZABLE would add serialization failures to retry on every
//     contended save and protect nothing the row locks do not already.
//   - A save is idempotent across a lost connection: its steps are keyed by
//     (run, n) and inserted ON CONFLICT DO NOTHING, a step's context record
//     is applied only when its step row was inserted in the same
//     transaction, and the save carries a save id chosen before its first
//     try, so a retry that finds its own save committed stops there.
//     Flushes of context records from runs stepped outside this store carry
//     a flush id recorded in laserbrain.applied the same way. pgdb.Tx
//     retries a transaction whose connection was lost.
//   - ReadRun reads the run and its steps in one statement, so in one
//     snapshot: the history matches the state.
//
// Every statement goes in one round trip (pgx's QueryExecModeExec, no
// statement prepared first): hooks are short processes that would pay a
// prepare for each statement they send once.
//
// Nothing connects until the store is used, and nothing runs at package
// init: the pre-tool-use hook pays for PostgreSQL only when it must read a
// run.
package pgstore
