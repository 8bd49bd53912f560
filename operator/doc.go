// Package operator is the gate for irreversible or outward actions
// (force-push, rm -rf, publish, deploy, writes into what supervision relies
// on). It reads nothing itself: package shell analyses a command once, and
// Decide is the one decision — the analysis, who is there (Presence), what
// the run says (RunState) and the project's policy (.laserbrain/policy.json)
// in; the answer with its reason, the rule that decided and the facts for
// the record out. The hook, the loop, authorize, the MCP classify tool and
// laserbrain classify all use it. POLICY.md states the policy.
//
// The step verbs, phases and the shape language of the grammar's dictionary
// live here too (zz_generated_grammar.go, from grammar/grammar.json): the
// method lint reads each step's default position on the gate's two axes.
package operator

//go:generate go run ../gen
