// Package report writes the supervisor's fleet report: one self-contained
// HTML page (internal/htmlreport) showing, per agent, Φ at every check with
// the verdicts marked against the grammar's thresholds; the agents on the
// same job (collisions) with the files both touched beside them as
// evidence and what the supervisor did about them; the operator gate's
// decisions per label; every ponder session of the repository (drawn by
// ponder/report); halts, escalations and whether the journal verifies.
//
// It reads the fleet as laserbrain supervise does: agents carry the
// supervisor's names (ponder:<slug>, <agent>:<run id>), a ponder session is
// an agent with one check per decided pass (supervise.SessionStep), and a
// footprint is the files the supervisor counts (supervise.EventFiles,
// supervise.SessionFiles), so its halts attach to the report's collisions
// and agents.
//
// Summarize reads the same model as a terminal's summary (laserbrain
// report without --html): the agents waiting for a person first, then each
// agent's status, client, verdict, coverage and last tool call, the
// collisions, the gate's denials, the halts in force and the open
// questions. The live view (supercode/ui) draws it too.
//
// Fleet is the view model. Each source has one adapter into it:
// AgentFromRuns (laserbrain's runs), AgentFromSession (ponder's read API),
// FromFleet (the fleet store's runs, events and gate decisions),
// FindCollisions and Outcomes (grounds, footprints, the supervisor's halts
// and escalations). Fleet.Sources records which panels were fed and which
// wait, and the page says so.
package report
