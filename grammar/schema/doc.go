// Package schema validates grammar documents: the JSON Schema
// (grammar.schema.json, santhosh-tekuri/jsonschema/v5), then the rules a
// schema cannot state (grammar.SemanticProblems), and Verify compares the
// declared content_hash. It is its own package so that only the binaries
// that validate link the schema validator, whose package init alone takes
// several milliseconds: a hook process, started for every tool call, must
// not pay it.
package schema
