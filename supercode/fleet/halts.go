package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/laserkit/laserkit/internal/shellquote"
)

// Halt is a stop put on one agent of a fleet. While it is in force (not
// released) the gate denies every tool call the agent makes and ponder
// refuses every writing command on the session, each with Reason; only a
// person lifts it (laserbrain supervise release). A halt never gives the
// agent a new goal: it stops duplicate or runaway work, and what the agent
// does next is a person's call.
type Halt struct {
	// ID makes PutHalt idempotent: the supervisor derives it from the round
	// and the agent, so a round re-run after a crash puts the same halt.
	ID    string `json:"id"`
	Fleet string `json:"fleet"`
	// Agent is the agent's name in the fleet: "ponder:<slug>" for a ponder
	// session, "<agent>:<run id>" for an agent run.
	Agent string `json:"agent"`
	// Run is the agent run's id ("" for a ponder session).
	Run    string `json:"run,omitempty"`
	Reason string `json:"reason"`
	// By is who halted it: "supervisor", or a person's name.
	By string `json:"by"`
	// Round is the supervisor round that decided it (0 when a person did).
	Round int64 `json:"round,omitempty"`
	// Cause names what it stops, so that once a person released it the
	// same cause does not halt the agent again: for a collision,
	// "collision:" and a JSON array of every partner of the collision
	// group it was put in, the agent kept first (supervise.CollisionCause;
	// "collision:<agent kept>" in the earlier form).
	Cause    string    `json:"cause,omitempty"`
	At       time.Time `json:"at"`
	Released *Release  `json:"released,omitempty"`
}

// Release is how a halt ended.
type Release struct {
	At     time.Time `json:"at"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// InForce reports whether the halt still holds.
func (h *Halt) InForce() bool { return h.Released == nil }

// ReleaseCommand is what a person runs to lift a halt on agent.
func ReleaseCommand(agent string) string {
	return "laserbrain supervise release " + shellquote.Word(agent)
}

// Message is the refusal every gate prints for a halt in force: who halted
// the agent and why, and the way back.
func (h *Halt) Message() string {
	by := h.By
	if by == "" {
		by = "the supervisor"
	}
	return fmt.Sprintf("%s is halted by %s: %s. Nothing more runs on its behalf until a person releases it (%s).",
		h.Agent, by, h.Reason, ReleaseCommand(h.Agent))
}

// Halts keeps the halts and their releases. One halt at most is in force
// per agent of a fleet.
type Halts interface {
	// PutHalt puts h in force. ErrExists when h.ID is taken or the agent is
	// already halted (the halt in force is kept: the first reason stands).
	PutHalt(ctx context.Context, h Halt) error
	// ReleaseHalt lifts the halt in force on agent and returns it, released;
	// ErrNotFound when the agent is not halted.
	ReleaseHalt(ctx context.Context, fleet, agent string, r Release) (Halt, error)
	// ActiveHalt is the halt in force on agent; ok is false when there is none.
	ActiveHalt(ctx context.Context, fleet, agent string) (h Halt, ok bool, err error)
	// ListHalts lists a fleet's halts ("" = every fleet), released ones
	// too, oldest first.
	ListHalts(ctx context.Context, fleet string) ([]Halt, error)
	// AnyHaltInForce reports whether any agent of any fleet is halted: the
	// gate's and ponder's fast path, one cheap read when nothing is halted.
	AnyHaltInForce(ctx context.Context) (bool, error)
}

// PonderAgent is the name of a ponder session in its fleet.
func PonderAgent(slug string) string { return "ponder:" + slug }

// RunAgent is the name of an agent run in its fleet: the agent's name and
// the run id, so two runs of one agent are two agents.
func RunAgent(r Run) string {
	name := r.Agent
	if name == "" {
		name = "agent"
	}
	return name + ":" + r.ID
}

// PutJournaledHalt journals a halt through journal, puts it in force (a
// halt put already stands), notes it for this machine's gate (note: now;
// a supervisor notes its round's halts together at the round's end) and
// tells the agent why: the one way a halt is imposed, by the supervisor or
// by the hooks.
func PutJournaledHalt(ctx context.Context, st Store, h Halt, journal func(JournalRecord) error, note bool) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := journal(JournalRecord{At: JournalTime(h.At), Fleet: h.Fleet, Kind: JournalHalt,
		Round: h.Round, Agent: h.Agent, Text: h.Reason, Data: data}); err != nil {
		return err
	}
	if err := st.PutHalt(ctx, h); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	// This machine's gate holds it from now on, even if the store goes
	// out of reach, or loses its records, before a hook reads it (best
	// effort: the store has it).
	if note {
		_ = NoteMachineHalts([]Halt{h})
		_ = NoteJournal(ctx, st, h.Fleet, h.At)
	}
	_, err = st.Say(ctx, Message{ID: "halt:" + h.ID, Fleet: h.Fleet, Agent: h.Agent, Kind: MessageHalt, Round: h.Round, Text: h.Message(), At: h.At})
	if err != nil {
		return fmt.Errorf("telling %s: %w", h.Agent, err)
	}
	return nil
}
