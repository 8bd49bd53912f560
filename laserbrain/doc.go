// Package laserbrain is the drift instrument. An agent spells its state
// (goal, progress, distance); laserbrain writes the laserscore, measures Φ
// against the run's frozen ground and returns one of nine verdicts, plus a
// whole-run judgment. It must agree exactly with the Python reference
// (laserbrain-sdk 0.53.0); the vectors package holds the proof.
//
// A Run is one agent's run: Step checks a state, Phronesis judges the run,
// LastVerdict and Judgment are what the operator gate reads. Saw hands a
// run observed Events (a check, a tool result, a claim, an edit; success
// true, false or unknown) that corroborate its next check. Around it: the
// ceiling marker (Mark), observed progress (InferProgress), the search
// instrument (Explorer), Collisions between agents, and the policy layer
// (Modulate). A Store keeps runs, contexts and evidence across processes:
// MemStore in one process, package localstore on disk.
//
// Every constant and list it uses comes from grammar/grammar.json through
// the generated zz_generated_grammar.go.
package laserbrain

//go:generate go run ../gen
