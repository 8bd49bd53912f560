// Package laserbrain is the drift instrument. An agent spells its state
// (goal, progress, distance); laserbrain writes the laserscore, measures Φ
// against the run's frozen ground and returns one of nine verdicts, plus a
// whole-run judgment. It must agree exactly with the Python reference
// (laserbrain-sdk 0.53.0).
//
// Every constant and list it uses comes from grammar/grammar.json through
// the generated zz_generated_grammar.go.
package laserbrain

//go:generate go run ../gen
