package telemetry

import (
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Record is an ended run as the exporter takes it (laserbrain run reads
// it from the stores and hands it to laserbrain-otel as JSON): the run,
// its events and checks, and how it ended.
type Record struct {
	Agent  Agent                   `json:"agent"`
	Events []fleet.RunEvent        `json:"events"`
	Checks []laserbrain.StepRecord `json:"checks"`
	Ending Ending                  `json:"ending"`
	// Usage is the model tokens the agent's client recorded, nil when
	// none were read.
	Usage *fleet.Usage `json:"usage,omitempty"`
}

// Agent is what a run's invoke_agent span says of the agent.
type Agent struct {
	Run fleet.Run `json:"run"`
	// Client is the agent client (claude, codex, …; "" when none is
	// known), Model the model it was asked to use ("" when not known).
	Client string `json:"client,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Ending is how the run ended.
type Ending struct {
	At       time.Time `json:"at"`
	ExitCode int       `json:"exit_code"`
	// Stopped is the limit that stopped the agent ("" when none);
	// Judgment the whole-run verdict.
	Stopped  string `json:"stopped,omitempty"`
	Judgment string `json:"judgment,omitempty"`
}

// Journal is a supervisor's decisions as the exporter takes them: the
// fleet's journal records appended since the last hand-off (laserbrain
// supervise hands them to laserbrain-otel after each round).
type Journal struct {
	Fleet   string                `json:"fleet"`
	Records []fleet.JournalRecord `json:"records"`
}
