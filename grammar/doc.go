// Package grammar holds the canonical laserbrain grammar (grammar.json), the
// JSON Schema for the parts the code relies on, and the tools that keep the
// document honest: an order-preserving reader, the canonical renderer its
// content_hash is defined over, the hash itself, and the validation rules a
// schema cannot state (grammar/schema runs the JSON Schema and those rules).
//
// Nothing here interprets the grammar. The generator in ../gen turns it into
// Go tables for the packages that do.
package grammar

import _ "embed"

// Canonical is the shipped grammar, byte for byte.
//
//go:embed grammar.json
var Canonical []byte

// SchemaJSON is the JSON Schema grammar documents are validated against.
//
//go:embed grammar.schema.json
var SchemaJSON []byte
