// Package operator gates irreversible or outward actions (force-push, rm -rf,
// publish, deploy) and lints workflow method shapes. Its pattern lists, step
// verbs, phases and shape language come from grammar/grammar.json through the
// generated zz_generated_grammar.go; classification only ever escalates.
package operator

//go:generate go run ../gen
