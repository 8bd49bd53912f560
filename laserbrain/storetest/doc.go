// Package storetest is the behaviour every persistent laserbrain.Store
// must have, as one suite run against each implementation (the local
// directory and PostgreSQL): runs that continue across stores and
// processes with the very verdicts an in-memory run gives, histories read
// back whole, held runs, contexts merged without loss, concurrent steppers
// in goroutines and in real processes, and export/import.
//
// The process tests re-run the test binary: a test package using them
// calls Child from its TestMain before m.Run.
package storetest
