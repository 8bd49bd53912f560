// Package vectors reads, checks and emits test vectors: JSON files of inputs
// and expected outputs, one format per kind, so that implementations in other
// languages can prove parity with this one, and this one with the reference.
//
// grammar-shapes.json is generated from the grammar's own shape examples.
package vectors

//go:generate go run ../gen
