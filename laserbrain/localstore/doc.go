// Package localstore is laserbrain's default Store: one directory on this
// machine, safe for any number of processes at once.
//
// Runs. A save adds one record to runs/log.jsonl (a process's saves are
// appended together, at the latest at the flush that makes them durable
// with one fsync; see runlog.go for the format), so a new run costs an
// append, like a step, instead of files created and synced; every process
// reads the log. When the log passes CompactAt, a flush moves each run in
// it out: a small one (under PackBelow) into one new pack with the others,
// runs/packs/<seq>.pack (its records and an index; see pack.go), any other
// into its own files — runs/<id>.json (the state, replaced atomically,
// recording how many bytes of the history are committed) and
// runs/<id>.history.jsonl (its checks, appended) — with one round of syncs
// for all of them, and starts the log again. A run reads as its own files,
// or else its record in the newest pack holding it, followed by the chain
// of its saves in the log; records a crash cut off or already compacted do
// not chain and are passed over. A run in a pack that grows past PackBelow
// gets files of its own at a compaction; one with files keeps them. Homes
// written by earlier versions (own files, no log or no packs) are read as
// they are.
//
// The log is read through a bounded window (its records' bodies are
// checked and skipped, not held) and compaction copies a run's steps a
// window at a time and closes its files before the next run, so neither
// the memory nor the open files of a process grow with a run's length or
// the number of runs.
//
// A process holds a run while it steps it: on Linux a one-byte lock in one
// of 256 files under runs/locks.d at an offset hashed from the run id (no
// file per run, and a lock costs the same however many runs are held; see
// runlock_linux.go), elsewhere runs/<id>.lock. All processes on a home must
// run this version or later: an earlier one writes runs only to their own
// files, locks runs in runs/locks, which this one does not look at, and
// does not read packs.
//
// Contexts. contexts.json stays the Python reference's file, shared both
// ways; flushes append to contexts.log and compaction merges it in, exactly
// once even across crashes (contexts.go). evidence.json holds the
// machine's evidence counters, read-modified-written under the reference's
// lock.
package localstore
