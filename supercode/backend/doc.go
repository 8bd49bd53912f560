// Package backend opens the stores a laserbrain process uses —
// laserbrain's run store and the fleet store — on the backend
// LASERBRAIN_STORE names: unset or "local" for the files under
// $LASERBRAIN_HOME (the default, nothing to set up), or a PostgreSQL
// database, postgres://… or postgresql://…, shared by every machine of a
// fleet. It is the one place that reads LASERBRAIN_STORE; every command and
// hook opens its stores through it.
//
// Under PostgreSQL the home still holds what belongs to the machine: the
// evidence counters (its tool calls), and the hooks' queue of events
// observed while the database was out of reach.
//
// Nothing connects before a store is used, and nothing here runs at
// package init: a hook that decides without a store pays nothing for one.
// Connection strings are only ever shown with the password masked.
package backend
