// Package broker is the one door from a confined agent to its supervisor.
// Under laserbrain run (and laserbrain loop) the agent's process tree cannot
// write the laserbrain home or the store's records (supercode/confine), and
// its hooks and MCP server run inside that tree: they are the agent's
// children. So they do not write anything themselves. Each one hands its
// whole operation — "answer this pre-tool-use event", "serve this MCP
// session", "record this check" — over a unix socket to the broker, which
// the unconfined laserbrain run process owns, and relays the answer.
//
// The broker answers the operation outside the confinement — in its own
// process where the supervisor gives it a way to (Server.Local: the hooks
// and the checks, sparing the agent a laserbrain start per call), else as
// a laserbrain process of its own — with the environment the supervisor
// gave the agent
// (LASERBRAIN_RUN, LASERBRAIN_HOME, LASERBRAIN_STORE, … as laserbrain run
// set them, whatever the agent changed since) and only the clients'
// session variables taken from the request. It accepts only the operations
// its Allow says (the hooks' own subcommands, the MCP server, check on the
// agent's own run, a stream only where Local holds its lines to that run),
// so the door opens on nothing an agent could not already
// make its hooks do: it cannot remove a halt, write an authorization or
// point the hooks at another store through it.
//
// The protocol: the client sends one JSON line (Request), then its standard
// input, and half-closes; the broker answers with frames — a kind byte
// ('o' standard output, 'e' standard error, 'x' the exit status), a
// big-endian uint32 length, the bytes.
package broker
