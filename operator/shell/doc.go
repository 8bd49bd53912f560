// Package shell reads what a shell command line would do, without running
// it. Analyze runs the grammar's operator patterns on the raw text (the
// reference layer, ClassifyGrammar), then walks the bash parse once through
// everything the text would run — wrappers, nested shells, script files,
// functions, aliases, git with the configuration set along the line,
// interpreters' code — with one table of programs (programs.go), each read
// the way it parses its own options (git's parse-options, GNU getopt, the
// publishers' subcommands); a program it does not know is unknown, never
// data. The Analysis holds every finding with its role, every path written
// or deleted, and what the walk could not follow, within AnalysisBudget.
//
// The package knows nothing of answers: who is there, what a run says and a
// project's policy are the gate's (package operator), which turns one
// Analysis into one answer. The operator patterns come from
// grammar/grammar.json (zz_generated_grammar.go), the extra pack of
// irreversible commands from pack.json (zz_generated_pack.go).
package shell

//go:generate go run ../../gen
