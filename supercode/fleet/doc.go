// Package fleet is what the supervisor and the agent hooks persist beyond
// laserbrain's run store: the registry of agent runs (agent, run id, fleet,
// Claude session ids, attended or not, command, created and ended), the
// events observed on each run, the authorizations a person gave for
// single irreversible or outward actions (dated, scoped, expiring, held as
// data), the halts the supervisor put on agents and their releases, what
// the supervisor says to each agent until the agent is told, and the
// supervisor's hash-chained journal.
//
// A fleet is one repository: its id is the repository's root commit
// (LASERBRAIN_FLEET overrides), so clones and worktrees of one repository are
// one fleet. Store is the interface; Local keeps it in files under
// $LASERBRAIN_HOME/fleet and is the default; package pgfleet keeps it in
// PostgreSQL (supercode/backend picks by LASERBRAIN_STORE). Every method takes a context,
// does one small thing, returns explicit errors (ErrNotFound, ErrExists,
// ErrSpent), and writes are idempotent on caller-chosen ids (an event
// recorded twice by two hook layers is kept once; AppendEvents records a
// batch of them in one durable write). UpdateRun is a read-modify-write
// under the run's lock (a row lock in a database).
//
// Halts, Journal and Messages are three more small interfaces beside Runs,
// Events and Authorizations. Messages is the supervisor's per-agent message
// queue (stored under the name "voice", in files and in the database): Say
// is idempotent on the message's id, Deliver hands each message out exactly
// once however many processes ask, and journals each delivery with the
// round the message came from. A halt is keyed by fleet and agent, one in
// force at a time, and its id is the caller's, so a re-run round puts it
// once. The
// journal is one hash chain per fleet in the reference's audit format (see
// JournalRecord): the hash covers the record's content only, so a database
// keeps the same chain as the files; AppendJournal must read the last
// record and append the next as one step against every other writer (the
// file lock here; in PostgreSQL one transaction holding the fleet's
// advisory lock, which moves the head with the insert), and JournalRecords
// must return the bytes it stored (a text column, not jsonb). VerifyJournal
// checks any backend's records the same way; fleettest holds every backend
// to it. Rounds lets supervisors of one fleet take turns, so that a round
// number is taken once across all of them.
//
// The round counter is also the journal's witness. Each round's end (and a
// supervisor's stop, and a release, which take the same lock) records
// where the journal's head stood (RoundMark), never moving it back.
// CheckJournal checks the chain, then the head, then the counter;
// CheckJournalTail checks only the records the head and the counter name,
// what a writer checks before it appends. Without a key this is what can
// and cannot be shown: a record edited, inserted, reordered or deleted in
// the middle is named; a journal deleted, or cut short with its head
// rewritten to match, is named while the counter stands (a fleet whose
// counter says a round ran has a journal, holding at least the records the
// counter saw); records a writer appended and died before its round ended
// are beyond the counter, and a journal, head and counter rewritten
// together — the same directory, the same database — make a consistent
// forgery. The chain makes a change evident; it does not stop one.
//
// What a machine verified of each journal is kept beside the store, not in
// it (Machine, machine.json in the laserbrain home): the records and head
// hash verified, and the halts in force. The gate reads each journal on
// from there, honours nothing past a break, and holds the halts it knew
// through a journal deleted or rewritten with its head and counter (the
// fleet's directory removed, say); writers check it before they append and
// move it on after; a person accepts a loss (RestartJournal sets the old
// journal aside, whole). It cannot stop whoever rewrites the store and
// machine.json together: it makes what the commands an agent reaches for
// do to the records evident, and stops the halted agent meanwhile.
//
// A supervisor does not read the whole journal at every start: it
// resumes from its last checkpoint record (JournalCheckpoint) the round
// counter has seen, and VerifyJournalFrom checks the records from it to the
// head; CheckJournal, laserbrain supervise verify, still reads them all.
//
// A journal is bounded on disk by rotation (JournalArchive, rotate.go):
// the records before a checkpoint the round counter has seen go into an
// archive segment, and a rotation record in the chain says which, with the
// hash the checkpoint's prev names and what they witness. The live journal
// then starts at that checkpoint; VerifyJournal holds it only when a
// rotation in it explains the records it lacks, CheckArchive holds the
// archive to it (a segment missing or changed is named), ReadWitness reads
// on from what a machine verified through the archive — and a machine
// that verified records a "rotation" cut without archiving them has lost
// them: its halts hold. ReadJournal reads archive and journal as one.
// The local store reads what was appended after a record by reading the
// file backwards as far as that record, and every append-only file here
// goes through internal/jsonl (one rule for a torn last line).
//
// Nothing here is opened at package init: the pre-tool-use hook opens the
// store only when a decision needs it.
package fleet
