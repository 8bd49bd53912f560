// Package operator gates irreversible or outward actions (force-push, rm -rf,
// publish, deploy). Classify reads a shell command: the grammar's operator
// patterns on the raw text (the reference layer, ClassifyGrammar), then a
// bash parse that follows every command the text would run. git, rm, find,
// xargs and parallel are read the way they parse their own options (git's
// parse-options with each subcommand's option table, GNU getopt_long) and
// judged on what the parsed invocation destroys — checked against real git
// by the oracle test; other commands meet the grammar patterns and an extra
// pack. It only ever escalates a declaration; Result.Decision is the hook's
// deny/ask/allow when a person is there to answer (dry runs, help and data
// ask), and Result.HookAnswerFor the answer for a Presence with its wording
// (RoleAnswer's table: with nobody there nothing is asked — data and dry
// runs go ahead with a note, code and unreadable commands are denied), which
// supercode/hook answers with. Every input is answered within
// AnalysisBudget. Act refuses an action needing authorization
// while the run drifts or its judgment says stop, asks an Authorizer every
// time otherwise, and logs every decision. Pattern lists, step verbs, phases
// and the shape language come from grammar/grammar.json (zz_generated_grammar.go);
// the pack from pack.json (zz_generated_pack.go). POLICY.md states the policy.
package operator

//go:generate go run ../gen
