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
// catches (Catches and the six signatures: drift in how an agent verifies,
// read from observed events, never from what it spells), the ceiling
// marker (Mark), observed progress (InferProgress), the search instrument
// (Explorer), Collisions between agents, and the policy layer (Modulate).
// A Store keeps runs, contexts and evidence across processes: MemStore in
// one process, package localstore on disk, package pgstore in a PostgreSQL
// database several machines share; package link is the shared log agents
// write to each other.
//
// The catches live here rather than in the supervisor because their input
// is the same Event a run's corroboration reads, recorded by an agent's
// own hooks whether or not a supervisor is watching; supercode reads them
// per agent and across the fleet. The texts an agent reads (advice, why,
// the judgment's because and counsel) are the reference's, word for word.
//
// Every constant and list it uses comes from grammar/grammar.json through
// the generated zz_generated_grammar.go.
package laserbrain

//go:generate go run ../gen
