// Package report writes the supervisor's fleet report: one self-contained
// HTML page (internal/htmlreport) showing, per agent, Φ at every check with
// the verdicts marked against the grammar's thresholds; the agents on the
// same job (collisions) with the files both touched beside them as
// evidence and what the supervisor did about them; the operator gate's
// decisions per label; every ponder session of the repository (drawn by
// ponder/report); halts, escalations and whether the journal verifies.
//
// Fleet is the view model. Each source has one adapter into it, so the
// parts still being built plug in where their panel already waits:
// AgentFromRuns (laserbrain's runs), FindCollisions and Outcomes (grounds,
// footprints, the supervisor's halts and escalations), the fleet store
// adapter in load.go (runs, events, gate decisions, footprints), ponder's
// sessions through ponder/report. Fleet.Sources records which panels were
// fed and which wait, and the page says so.
package report
