// Package localstore is laserbrain's default Store: one directory on this
// machine, safe for any number of processes at once.
//
// Runs. A save appends one record to runs/log.jsonl (one write; see
// runlog.go for the format), so a new run costs an append, like a step,
// instead of files created and synced; every process reads it at once, and
// a flush makes all saves before it durable with one fsync. When the log
// passes CompactAt, a flush moves each run in it into its own files —
// runs/<id>.json (the state, replaced atomically, recording how many bytes
// of the history are committed) and runs/<id>.history.jsonl (its checks,
// appended) — with one round of syncs for all of them, and starts the log
// again. A run reads as its own files followed by the chain of its saves in
// the log; records a crash cut off or already compacted do not chain and
// are passed over. Homes written by earlier versions (own files, no log)
// are read as they are.
//
// A process holds a run while it steps it: on Linux a one-byte lock on
// runs/locks at an offset hashed from the run id (no file per run),
// elsewhere runs/<id>.lock. All processes on a home must run this version
// or later: an earlier one writes runs only to their own files.
//
// Contexts. contexts.json stays the Python reference's file, shared both
// ways; flushes append to contexts.log and compaction merges it in, exactly
// once even across crashes (contexts.go). evidence.json holds the
// machine's evidence counters, read-modified-written under the reference's
// lock.
package localstore
