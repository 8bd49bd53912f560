package report

import (
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	preport "github.com/laserkit/laserkit/ponder/report"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Fleet is everything the fleet report shows: the view model. Each field is
// filled by one adapter (sources.go lists them); a panel whose source does
// not exist yet says so instead of showing nothing.
type Fleet struct {
	// ID is the fleet id (the repository's root commit); Repo the directory.
	ID        string    `json:"id"`
	Repo      string    `json:"repo"`
	Generated time.Time `json:"generated"`
	// Scope says what was asked for: "fleet" or "run".
	Scope       string            `json:"scope"`
	Thresholds  PhiThresholds     `json:"thresholds"`
	Agents      []Agent           `json:"agents"`
	Collisions  []Collision       `json:"collisions"`
	Gate        []GateDecision    `json:"gate"`
	Sessions    []preport.Session `json:"sessions"`
	Halts       []Halt            `json:"halts"`
	Escalations []Escalation      `json:"escalations"`
	Journal     Journal           `json:"journal"`
	// Sources says, per panel, where its data came from or what it waits
	// for.
	Sources []Source `json:"sources"`
}

// Source is one panel's provenance.
type Source struct {
	Panel string `json:"panel"`
	// Fed is true when the panel shows real data from From; false when
	// From names what it waits for.
	Fed  bool   `json:"fed"`
	From string `json:"from"`
}

// Agent is one supervised agent: an agent run (laserbrain run, the hooks,
// laserbrain check) or a ponder session seen as an agent.
type Agent struct {
	Name string `json:"name"`
	Run  string `json:"run"`
	// Kind is "run" or "ponder".
	Kind    string    `json:"kind"`
	Ground  string    `json:"ground"`
	Created time.Time `json:"created"`
	Ended   time.Time `json:"ended,omitzero"`
	Steps   []Step    `json:"steps"`
	// Judgment is the whole-run verdict (continue, finish, narrow, ...).
	Judgment string `json:"judgment"`
	// Catches are the signatures of the agent's catches.
	Catches []string `json:"catches"`
	// Footprint is the files the agent touched, sorted.
	Footprint []string `json:"footprint"`
	// Halt is the agent's standing halt, nil when it may act.
	Halt *Halt `json:"halt"`
	// Coverage is an agent run's tool calls and checks as its hooks
	// recorded them (nil for a ponder session or a bare run). An
	// unmeasured run is judged "unmeasured".
	Coverage *coverage.Figures `json:"coverage,omitempty"`
	// Network is what the agent's tree tried on the network through
	// laserbrain run's boundary (nil when nothing).
	Network *confine.NetSummary `json:"network,omitempty"`
	// Subject and Lens are a ponder session's: it collides on its subject,
	// the lens compared apart (supercode.Collide).
	Subject *string `json:"subject,omitempty"`
	Lens    string  `json:"lens,omitempty"`
	// SameAs is the ponder session an agent run drives (laserbrain run
	// --ponder): the two are one worker and never collide.
	SameAs string `json:"sameAs,omitempty"`
	// Finished: the run ended or the session closed, or it reached its
	// ground (supervise.Finished); a finished agent collides with nobody.
	Finished bool `json:"finished"`
	// Client is the agent client the run is (Claude Code, Gemini CLI, …),
	// or the program `laserbrain run` started; "ponder" for a session.
	Client string `json:"client,omitempty"`
	// Status is what the agent is doing now (one of the Status* values).
	Status string `json:"status"`
	// Waiting is what it waits on a person for, while it waits.
	Waiting *fleet.Wait `json:"waiting,omitempty"`
	// LastTool is its latest tool call; LastEvent when anything was last
	// seen of it (a call, a check, a gate decision, a prompt).
	LastTool  *ToolCall `json:"lastTool,omitempty"`
	LastEvent time.Time `json:"lastEvent,omitzero"`
	// Tokens are the model tokens its client recorded (nil when none were
	// read).
	Tokens *fleet.Usage `json:"tokens,omitempty"`
	// Spending is its tokens and cost over time: after each model request
	// its client reported, what the run had spent by then (none when its
	// client reported none).
	Spending []Spent `json:"spending,omitempty"`
	// CallTokens are what its tool calls cost, where its client recorded
	// which model response asked for which call.
	CallTokens []CallTokens `json:"callTokens,omitempty"`
	// Changes are what its calls changed in its work tree, with the
	// commands that undo them (UndoChanges).
	Changes []CallChange `json:"changes,omitempty"`

	losses map[string]string // a loss its hooks reported, by call
}

// Agent statuses: finished outranks halted, halted waiting, waiting
// unmeasured, and an agent none of these is working.
const (
	StatusWorking    = "working"
	StatusWaiting    = "waiting"
	StatusHalted     = "halted"
	StatusFinished   = "finished"
	StatusUnmeasured = coverage.Unmeasured
)

// StatusText is a status in words.
func StatusText(status string) string {
	if status == StatusWaiting {
		return "waiting for a person"
	}
	return status
}

// ToolCall is one tool call an agent's hooks recorded.
type ToolCall struct {
	At   time.Time `json:"at"`
	Tool string    `json:"tool"`
	// Text is the call in one line (its command, its file).
	Text string        `json:"text"`
	OK   laserbrain.OK `json:"ok"`
}

// Unmeasured reports whether the agent worked without being measured:
// tool calls and no check since its ground.
func (a *Agent) Unmeasured() bool { return a.Coverage != nil && a.Coverage.Unmeasured }

// Last is the agent's latest step, nil before any.
func (a *Agent) Last() *Step {
	if len(a.Steps) == 0 {
		return nil
	}
	return &a.Steps[len(a.Steps)-1]
}

// Step is one check of an agent, as its run recorded it.
type Step struct {
	N int `json:"n"`
	// Task is the run's task the check belongs to (1 for the first).
	Task     int       `json:"task"`
	At       time.Time `json:"at"`
	Goal     string    `json:"goal"`
	Progress string    `json:"progress"`
	Distance string    `json:"distance"`
	// Reason is the verdict as returned (oscillating included);
	// Underlying the verdict an oscillating report replaced.
	Reason     string  `json:"reason"`
	Underlying string  `json:"underlying,omitempty"`
	Drifting   bool    `json:"drifting"`
	Phi        float64 `json:"phi"`
}

// Collision is two agents on the same job: their grounds overlap at least
// collision_min. The shared files are evidence beside it, never its cause.
type Collision struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	Grounds [2]string `json:"grounds"`
	// Lenses are the sessions' lenses beside the subjects compared.
	Lenses [2]string `json:"lenses"`
	// Over: one of the two has finished (supervise.Finished), so the
	// supervisor no longer counts the collision — the report still shows
	// it, as history. The collisions not over are exactly the ones
	// laserbrain supervise reports.
	Over bool `json:"over"`
	// FirstSeen is when the collision began to exist: when the later of
	// the two grounds was set.
	FirstSeen time.Time `json:"firstSeen"`
	Outcome   Outcome   `json:"outcome"`
	// SharedFiles are the files both agents touched.
	SharedFiles []string `json:"sharedFiles"`
}

// Outcome is what the supervisor did about a collision.
type Outcome struct {
	// Kind is "halted", "escalated", "routed" (a recommendation, not
	// acted on) or "" when nothing is recorded.
	Kind  string    `json:"kind"`
	Keep  string    `json:"keep,omitempty"`
	Yield string    `json:"yield,omitempty"`
	Why   string    `json:"why,omitempty"`
	At    time.Time `json:"at,omitzero"`
}

// GateDecision is one decision of the operator gate on an agent's action.
type GateDecision struct {
	At    time.Time `json:"at"`
	Agent string    `json:"agent"`
	Run   string    `json:"run"`
	Tool  string    `json:"tool"`
	// Decision is deny, ask or allow (an authorized action).
	Decision operator.Answer `json:"decision"`
	Reason   string          `json:"reason"`
	// Labels are the operator's labels for the action (why it needs a
	// person), when the store recorded them.
	Labels []string `json:"labels"`
	// Role is where the deciding match stood in the command (executed,
	// data, …); Presence who could answer (attended, unattended, unknown).
	Role     string `json:"role,omitempty"`
	Presence string `json:"presence,omitempty"`
	// Action is the action decided on as an authorization names it (the
	// command, "write <path>"), when the gate recorded it.
	Action string `json:"action,omitempty"`
	// ID is the recorded event's id.
	ID string `json:"id,omitempty"`
}

// Halt is a halt the supervisor put on an agent, and its release.
type Halt struct {
	Agent    string    `json:"agent"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
	Released time.Time `json:"released,omitzero"`
	// ReleaseReason is what the person said releasing it.
	ReleaseReason string `json:"releaseReason,omitempty"`
}

// Escalation is a question the supervisor sent to a person.
type Escalation struct {
	ID string `json:"id"`
	// Kind is drift, collision or waiting.
	Kind     string    `json:"kind"`
	At       time.Time `json:"at"`
	Who      string    `json:"who"`
	Agents   []string  `json:"agents"`
	Why      string    `json:"why"`
	Question string    `json:"question"`
	// ExitStatus is the --on-escalate command's exit status, nil when none
	// ran.
	ExitStatus *int `json:"exitStatus"`
	// Answered is set once it was answered (the command exited 0, or a
	// person answered it in laserbrain ui: By), with the Decision given.
	Answered bool   `json:"answered"`
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`
}

// Journal is the supervisor journal's verification.
type Journal struct {
	// State is "verified", "broken" or "unavailable".
	State   string `json:"state"`
	Records int    `json:"records"`
	// FirstBad is the 1-based number of the first record that fails, 0
	// when none does.
	FirstBad int    `json:"firstBad"`
	Problem  string `json:"problem,omitempty"`
}

// Journal states.
const (
	JournalVerified    = "verified"
	JournalBroken      = "broken"
	JournalUnavailable = "unavailable"
)

// Spent is what an agent run had spent at a moment: its tokens (input,
// output and cache) and the cost its client reported, both running totals.
type Spent struct {
	At      time.Time `json:"at"`
	Tokens  int64     `json:"tokens"`
	CostUSD float64   `json:"cost_usd,omitempty"`
}

// spending is the running totals of a run's model requests.
func spending(events []fleet.RunEvent) []Spent {
	var out []Spent
	var u fleet.Usage
	for _, e := range events {
		if e.Kind != fleet.KindModel {
			continue
		}
		one, ok := fleet.ModelUsage([]fleet.RunEvent{e})
		if !ok {
			continue
		}
		u.Add(one)
		out = append(out, Spent{At: e.At, Tokens: u.Total(), CostUSD: u.Cost()})
	}
	return out
}
