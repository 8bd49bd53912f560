// Package hookserver is how the lean laserbrain-gate answers a hook when
// the store is a database it cannot read. The gate links no database
// driver, so that every user of the local store starts it fast; a hook on
// PostgreSQL used to hand each event to a fresh `laserbrain hook`
// process, which started a connection of its own to read a halt or a run
// and threw it away. Instead, the gate hands the event over a unix socket
// to one long-lived `laserbrain hook serve` per user, store and binary,
// which answers it in its own process on a connection it keeps open.
//
// The server is started on demand: the first hook that finds no server
// takes a lock beside the socket, starts one, and waits (within its own
// deadline) for the line it writes once it listens. It exits when it has
// answered nothing for a while. Its socket lives in a directory only its
// user can enter, and it answers only callers of its own user
// (SO_PEERCRED), so it may take the caller's whole environment: it answers
// exactly as a hook process of the caller would.
//
// The socket's name is a digest of everything the server's own answers
// depend on and a caller cannot hand it per request: the laserbrain binary
// (its path, size and modification time), the store, the home and the
// variables the database driver reads (PG*). A caller with another store,
// or after an upgrade, reaches another server; an old one dies idle.
//
// Nothing here fails open: a server that cannot be started, or does not
// answer within the hook's deadline, is an error the hook turns into a
// refusal that says so.
package hookserver
