// Package childtest re-runs a test binary as a child process with a job to
// do, so suites can test stores across real processes: the child's
// TestMain calls Serve first, the parent starts children with Command.
package childtest
