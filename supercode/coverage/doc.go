// Package coverage holds an agent to being measured: a session that works
// without spelling its state is reminded, then refused, until it checks.
// It is a pure decision over a small typed event and the session's Record:
// Gate answers a pre-tool-use call (allow, warn, deny, with the reason for
// the model), Observe takes in every other event (a tool call's outcome
// counts a step, check_state a check, reset_task closes a task, a prompt
// may ground the record, a Stop may be held), Checked counts a check made
// outside any tool call (laserbrain check, a loop step). Reading and
// saving the record, the link and the transcript is the caller's.
//
// Two ways of holding it. Default (mode "on") is one cadence everyone can
// predict: a reminder after 3 unchecked steps, calls that change something
// refused after 5 (reads still run, warned), every call after 10, no floor
// beyond that, a Stop with 3 or more unchecked steps held once;
// laserbrain's own tools are never refused, and every refusal says the
// client's name for check_state, its fields and an example call. Reference
// (mode "reference", or the reference's LASERBRAIN_PROBE_SHARE and
// LASERBRAIN_MIN_COVERAGE) is laserbrain-sdk 0.53.0's hooks answer for
// answer: its floor, its two probe arms drawn from a hash of the session
// id, its texts and extras, its claim gate, its gate-off door; the vectors
// package replays the reference's own sessions through it. Its blind-probe
// bookkeeping is left out: it changes no answer.
//
// Brief and HowTo are what the agent is told: the reasoning-state notation
// generated from the grammar, the run's ground, how coverage is held.
package coverage
