// Package pgstore is the PostgreSQL side of ponder's OCA bridge: it
// implements oca.Backend over one pgx connection, with every value sent as
// a bind parameter, creates the subset of the OCA schema ponder needs
// (InitSchema), and runs the read-back queries a human uses to inspect a
// session's rows.
package pgstore
