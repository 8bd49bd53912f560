// Package report draws ponder sessions as a self-contained HTML page: each
// pass's coverage, churn, novelty, thrash, voices and confidence floor
// against Rule 6's thresholds, the verdict of every pass and how many
// thresholds it missed (zero is silence), and the agent's churn forecast
// against the churn that came (surprise).
//
// Load reads a session through the engine's read-only API (Engine.Facts)
// into a Session, the view model; Blocks renders a Session with the neutral
// renderer (internal/htmlreport), so the supervisor's fleet report can show
// sessions the same way; Document makes the page `ponder report --html`
// writes.
package report
