// Command gen turns grammar/grammar.json into Go tables (and the grammar's own
// test vectors). It is run by go generate from each consuming package:
//
//	//go:generate go run ../gen
//
// gen reads $GOPACKAGE to decide what to write, validates the grammar against
// its schema, recomputes its content hash and refuses a grammar whose stored
// hash disagrees, compiles every pattern, and writes gofmt'd, deterministic
// zz_generated_*.go files whose first line marks them as generated.
package main
