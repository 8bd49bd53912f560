// Package supercode judges a fleet: it watches N agents (agent runs and
// ponder sessions on one repository), each against its own ground, judges
// them on observed events as well as on what they spell, reports two agents
// doing the same job while they run, and says which of them should yield.
// It manages the work and never writes the reference: it may halt an agent,
// deliver the agent's own verdict and escalate to a person, but never set
// or move a ground, and never route execution (operator work is refused).
//
// The core is Supercode, at exact parity with the Python reference
// (laserbrain-sdk 0.53.0, supercode.py; the vectors package checks 150
// scenarios the reference produced): Observe and Saw take in an agent's
// spelled states and observed events; Findings, Collisions, FleetCatches
// and Route read the fleet; Manage runs scripted agents under supervision;
// SelfCheck puts the Supercode under its own instrument (grounded at New,
// so it can disagree with itself); Report renders it all in the reference's
// words; Publish writes routes and findings into the link.
//
// laserbrain supervise (package supervise) feeds it a repository's ponder
// sessions and agent runs in rounds, and takes its decisions.
//
// Where things live, and why. The observed Event, the catches over an
// agent's event log and Run.Saw are in package laserbrain: a run's
// corroboration reads events, and an agent's hooks record them without any
// Supercode present. The shared link is package laserbrain/link: agents
// read and write it themselves, and an agent has no business importing the
// Supercode. supercode imports both, never the reverse.
//
// Decided where the reference is silent or cannot be followed in Go:
//
//   - Report: an agent seen only through events that has a catch has no
//     Φ; the reference's report raises formatting it. Here its row reads
//     "Φ=-" (and its reason "-", as the reference writes a missing reason).
//     The vectors record the reference's crash as report null.
//   - thin_evidence is implemented as the reference has it, and like there
//     it cannot fire: a check that passed everywhere has already fired
//     unfalsified for each agent that saw it, which suppresses it.
//   - blind_fleet compares results by Python repr with map keys sorted (Go
//     maps keep no insertion order; equal results read equal).
//   - A tied collision is escalated as the reference does it: both agents
//     are marked escalated and the question goes up only while the pair's
//     first agent is unmarked — so with three agents on one ground, one
//     question is asked, and every pair is still recorded on both contexts.
//   - Manage takes agents as an ordered list (the reference steps its dict
//     in insertion order), stops when its context.Context is done, and
//     observes no step as a user turn, so nothing it runs can reground. A
//     Spelled progress is not defaulted: "" is ungrammatical.
//   - Route ranks as the reference does: fewer catches, then more steps,
//     then smaller Φ. Steps come before Φ, so of a colliding pair the one
//     that invested more keeps the ground even when it is the one drifting;
//     its drift is a finding of its own. Kept for parity (the vectors hold
//     the reference's routes).
//   - Routing refusal: an agent implementing Routable() == false is
//     operator work, and the whole fleet is refused before anything runs.
//   - Saw feeds only the catches, as in the reference; Options.CorroborateSaw
//     also hands the events to the agent's run, so observed work backs its
//     checks (anchored, the stall veto). Off by default: it changes verdicts.
//   - Publish keys the yielding agent "yield_" in the payload, as the
//     reference does, so Python agents reading the link find it; the Go
//     Route and the vectors call it "yield".
//   - A Supercode is safe for concurrent use; Manage holds its lock only
//     while observing and routing, never while an agent steps.
//
// Measured with go test -run '^$' -bench . -benchmem ./supercode/ on 2
// cores shared with other work (load ≈ 9), so read the ratios rather than
// the times. The baseline is 50 bare laserbrain checks — one Run.Step per
// agent, no Supercode — timed in the same run:
//
//   - a full round for 50 agents (one observed step each, then collisions,
//     route and findings): 0.25 ms, 0.9× the baseline — the supervision
//     costs about nothing beside the checks themselves (target < 1 ms);
//   - 50 agents × 1,000 steps, Collisions after every round: 0.36 s, 1.3×
//     the baseline per round;
//   - Report on that state: 0.14 ms, 0.5× the baseline.
//
// Collisions are cached until an agent's ground is first set (grounds never
// move), catches until an agent's next event, fleet catches until any.
package supercode
