// Package fleettest is the behaviour every fleet.Store must have, as one
// test suite run against each implementation (the local files and
// PostgreSQL): Run in one process, Processes across real processes (the
// test binary re-run; its TestMain calls Child first).
package fleettest
