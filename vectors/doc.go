// Package vectors proves parity across languages: JSON files of inputs and
// the outputs the reference gave for them, one format per kind, each with a
// JSON Schema (schemas/), checked against this implementation in process
// (Check) or sent case by case to any implementation that speaks the runner
// protocol over its standard input and output (RunImplementation; Serve is
// this implementation behind it). Reports say, per implementation and
// kind, what passed, failed, errored or was skipped, and what differs.
//
// grammar-shapes.json is generated from the grammar's own shape examples.
package vectors

//go:generate go run ../gen
