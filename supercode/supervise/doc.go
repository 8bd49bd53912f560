// Package supervise is `laserbrain supervise`: several ponder sessions and
// agent runs on one repository, watched in rounds by one supercode core.
//
// Each round observes what is new and nothing else: the passes ponder
// sessions decided (read through ponder's own Facts, never a second parser
// of its files), the checks and tool calls agent runs of the repository's
// fleet recorded (the fleet store and laserbrain's run store). Then it
// reports every agent (verdict, Φ, steps, catches), the collisions on
// grounds with the files both agents touched beside them as evidence (never
// as a verdict), the fleet catches, the route and the supervisor's own
// self-check — and takes the decisions it may take, which are three:
//
//   - halt the yielding agent of a colliding pair when the route names one
//     (a fleet.Halt the gate and ponder honour until a person releases it);
//   - deliver each drifting agent its own advice (in the round, the
//     journal, the link with Publish, and the supervision MCP tool);
//   - escalate to a person after a drift streak, or when a collision has no
//     basis to choose — every such pair, once per collision: the question's
//     id is the pair's, so a collision standing round after round is asked
//     once (Options.OnEscalate; a collision answer naming one of the two
//     halts it, and that halt is the round's as the supervisor's own are; a
//     drift answer replaces the agent's advice) — and,
//     with Options.EscalateWaiting, when an agent starts waiting for a
//     person (its client's permission or idle prompt), once per wait.
//
// A person may also answer a question outside the supervisor, and
// authorize an action (person.go: AnswerEscalation, Authorize, used by
// laserbrain ui and laserbrain authorize): journaled as theirs and
// witnessed like a release, then carried out as the supervisor would; a
// running supervisor takes such an answer in at its next round.
//
// It never regrounds, never sets a ground and never routes execution.
//
// What it decides about an agent it also says to the agent
// (fleet.Messages): a drifting verdict's advice, once per drifting check; a
// person's answer to its escalation; a halt (why, who can release it) and,
// from Release, its release; a route that makes it yield. Each message
// carries the round it came from and waits in the agent's queue until the
// agent's next hook event (or ponder command) takes it, exactly once.
//
// An agent run that made tool calls and spelled no check since its last
// ground is unmeasured (supercode/coverage): its row's verdict says so,
// with no Φ, whatever its ground read, and every running unmeasured run is
// named in an "unmeasured" fleet catch. Each run's row carries its
// coverage figures.
//
// Collisions are supercode.Collide's, the one model the fleet report and
// the MCP supervision tool share. A ponder session is the agent
// ponder:<slug>. Its start grounds it on its subject (and lens), distance
// unknown — but it collides on its subject alone, the lens compared apart
// and reported beside the collision (supercode.SetSubject): a lens does
// not dilute the subject, and two different lenses on one subject split the
// work. An agent run that drives a session (laserbrain run --ponder) is the
// same worker: the session collides for it. Each pass becomes one step once it
// is decided (or the session closed after judging it), read from the
// ledger's facts by PassStep (ponder/SPEC.md §10 has the table), with
// PassEvents as its observed events. Its footprint is every path its units
// carried. An agent run is <agent>:<run id>; its steps are its own checks,
// task by task (a later task's first check is read as a user turn, so
// reset_task never reads as drift), its events the tool calls its hooks
// recorded, its footprint the files its file tools wrote and its shell
// commands wrote or named.
//
// How a session and a run read — SessionStart, SessionStep, SessionFiles,
// EventFiles — is exported, and the fleet report (supercode/report) reads
// the fleet through the same functions, under the same names.
//
// Every decision is journaled before it is carried out (a halt before it
// is put, a question before it is asked, then the answer), and a round's
// readings after it, when anything changed. Open resumes from the journal:
// rounds go on from the last one journaled, a halt the store never got is
// put, an answered question is not asked again, and a question the journal
// shows asked but never answered (the supervisor died in between) is asked
// again, marked redelivered — at least once rather than lost (with nobody
// to ask, no --on-escalate, it stands journaled as asked and is not
// journaled again at every start). Only exit 0
// of the --on-escalate command answers; any other status (or none) is
// journaled with the answer and the question is asked again next round,
// marked redelivered, what the command printed deciding nothing.
//
// A start costs what was journaled since the last checkpoint, not the
// journal's length: every CheckpointEvery records a supervisor journals a
// checkpoint (what the records before it amount to), and Open reads the
// journal from the last one the round counter has seen, verifying the
// records from it to the head (checkpoint.go). A round journals the agents
// whose line changed and the collisions that began or ended since the last
// journaled round, not the fleet and every collision standing; a round
// that saw nothing new, and decided nothing, journals nothing; a
// supervisor's start record goes with its first record.
//
// Nothing is appended to a journal whose chain does not hold: Open checks
// it from its checkpoint (or whole, when it has none; the round counter
// included), each round its tail under the round lock
// (fleet.CheckJournalTail), and a supervisor's stop and a release take the
// round lock to check it and have their record witnessed by the counter. A broken journal is a *fleet.JournalBrokenError
// (ErrJournalBroken); laserbrain supervise then reports read-only.
//
// Decided here, where nothing else settles it:
//
//   - A round's halts and escalations are the ones it decided; the agents'
//     rows show every halt in force.
//   - A release sticks for the whole collision group: a collision halt's
//     cause names every agent the yielding one collided with, directly or
//     through others, when it was put, and a person's release frees each
//     of those pairs in both directions — neither is halted, nor asked
//     about, for the pair again, however the route turns. An agent that
//     joins the group later is a change of grounds, decided afresh.
//   - A ponder session's pass is not a step until decided: an undecided
//     pass can still change (grades, a re-run judge), and a step is never
//     taken back. So a session is read one pass behind its live state.
//   - Two live agents whose grounds do not collide but whose footprints
//     overlap at least SharedFilesMin (Jaccard 0.5) are reported as
//     sharing files (shares_files_with in each agent's row, a "shares"
//     line): a possible collision for a person to look at, never a
//     verdict, a route or a halt.
//   - Only agents still running collide: a finished run (ended, or at
//     distance 0) or a closed session is reported in its row and collides
//     with nobody. Decisions are taken only on live agents (not finished,
//     not halted); a halted agent still collides, so its halt's cause
//     stays in view.
//   - A round that changed nothing is not journaled; round numbers go on
//     from the fleet's round counter (or the last journaled round, for a
//     store without one) after a restart.
//   - The self-check (Supercode.SelfCheck, a step of the supervisor's own
//     run) is taken on rounds that saw something new, not on idle polls.
//   - Two supervisors on one fleet are safe (the journal stays one chain,
//     a halt is put once, and rounds take turns through fleet.Rounds, so
//     no round number is taken twice) but each asks its own questions.
package supervise
