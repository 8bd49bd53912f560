// Package pgdb is what laserbrain's PostgreSQL stores share: the schema
// they live in (one PostgreSQL schema, "laserbrain", so the tables never
// meet another application's), its creation and check, the pool, the
// transaction with retries after a lost connection, and the one test for
// "the database is out of reach" that the failure policy hangs on.
//
// Creation is idempotent and never alters: Init creates what is missing
// and fails, changing nothing, when a table exists without a column the
// code needs. A newer version adds tables, never columns.
package pgdb
