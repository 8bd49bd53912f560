// Package operator gates irreversible or outward actions (force-push, rm -rf,
// publish, deploy, writes into what supervision relies on). Analyze reads a
// shell command once: the grammar's operator patterns on the raw text (the
// reference layer, ClassifyGrammar), then one walk of its bash parse through
// everything it would run — wrappers, nested shells, script files,
// functions, aliases, git with the configuration set along the line,
// interpreters' code — with one table of programs (programs.go), each read
// the way it parses its own options (git's parse-options, GNU getopt, the
// publishers' subcommands); a program it does not know is unknown, never
// data. The Analysis has every finding with its role, every path written or
// deleted, and what the walk could not follow, within AnalysisBudget.
// Decide is the one decision: the analysis, who is there (Presence), what
// the run says (RunState) and the project's policy (.laserbrain/policy.json)
// in, the answer with its reason, the rule that decided and the facts for
// the record out; the hook, the loop, authorize, the MCP classify tool and
// laserbrain classify all use it. Act is the operator of spec §12 for
// library callers. Pattern lists, step verbs, phases and the shape language
// come from grammar/grammar.json (zz_generated_grammar.go); the pack from
// pack.json (zz_generated_pack.go). POLICY.md states the policy.
package operator

//go:generate go run ../gen
