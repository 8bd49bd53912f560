package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Message is something the supervisor says to one agent: the advice of
// its drifting verdict, a person's answer to its escalation, a halt put on
// it and its release, a collision it was routed to yield in. It waits in
// the agent's queue until the agent's next event that can carry text to
// the model takes it (Deliver).
type Message struct {
	// ID makes Say idempotent: the supervisor derives it from what the
	// message is about, so a round re-run says it once.
	ID    string `json:"id"`
	Fleet string `json:"fleet"`
	// Agent is the agent's name in the fleet (RunAgent, PonderAgent).
	Agent string `json:"agent"`
	// Kind is one of the Message* kinds.
	Kind string `json:"kind"`
	// Round is the supervisor round the message came from.
	Round int64 `json:"round"`
	// Text is what the agent is told.
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// Delivered is how it was handed out; nil while it waits.
	Delivered *Delivery `json:"delivered,omitempty"`
}

// Message kinds.
const (
	MessageAdvice  = "advice"  // a drifting verdict's advice
	MessageAnswer  = "answer"  // a person's answer to the agent's escalation
	MessageHalt    = "halt"    // the agent is halted: why, and who can release it
	MessageRelease = "release" // its halt was lifted
	MessageYield   = "yield"   // the route says it yields in a collision
	// MessageLoop is the account of a laserbrain loop the agent started,
	// handed to its session once as a turn of its own, as if pasted.
	MessageLoop = "loop"
)

// ValidKind reports whether kind is one of the Message* kinds.
func ValidKind(kind string) bool {
	switch kind {
	case MessageAdvice, MessageAnswer, MessageHalt, MessageRelease, MessageYield, MessageLoop:
		return true
	}
	return false
}

// Delivery is how a message reached its agent.
type Delivery struct {
	At time.Time `json:"at"`
	// Via is the event that carried it: a hook event (PreToolUse,
	// PostToolUse, Stop, UserPromptSubmit, …) or a ponder command.
	Via string `json:"via"`
}

// JournalDelivery is the journal record of a message handed to its agent,
// with the round the message came from.
const JournalDelivery = "delivery"

// Messages keeps what the supervisor says to each agent until the agent is
// told. Both stores hold it to the same rules (fleettest).
type Messages interface {
	// Say queues m for m.Agent; added is false when m.ID was queued
	// before (the first one stands).
	Say(ctx context.Context, m Message) (added bool, err error)
	// Deliver hands out every message waiting for agent, oldest first, and
	// marks each delivered via d: each message is handed out exactly once,
	// however many hooks of however many processes ask at the same time.
	// Each delivery is journaled (JournalDelivery) with its message's
	// round. While nothing waits it costs one file stat (one query).
	Deliver(ctx context.Context, fleet, agent string, d Delivery) ([]Message, error)
	// Messages lists agent's messages, delivered ones too, oldest first.
	Messages(ctx context.Context, fleet, agent string) ([]Message, error)
}

func validMessage(m Message) error {
	switch {
	case m.ID == "" || strings.ContainsAny(m.ID, "\x00\n"):
		return errors.New("a message needs an id (one line)")
	case m.Fleet == "" || m.Agent == "":
		return errors.New("a message needs its fleet and agent")
	case strings.TrimSpace(m.Text) == "":
		return errors.New("a message needs a text")
	}
	if ValidKind(m.Kind) {
		return nil
	}
	return fmt.Errorf("message kind %q: want advice, answer, halt, release, yield or loop", m.Kind)
}

// DeliveryRecord is the journal record of m's delivery (backends append it).
func DeliveryRecord(m Message) (JournalRecord, error) {
	data, err := json.Marshal(struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
		Via  string `json:"via"`
	}{m.ID, m.Kind, m.Delivered.Via})
	if err != nil {
		return JournalRecord{}, err
	}
	return JournalRecord{At: JournalTime(m.Delivered.At), Fleet: m.Fleet, Kind: JournalDelivery, Round: m.Round,
		Agent: m.Agent, Text: m.Text, Data: data}, nil
}

// Told is a delivered message as the agent reads it: who spoke, in which
// round, and what. A loop's account is told as it is, as if pasted.
func (m Message) Told() string {
	if m.Kind == MessageLoop {
		return m.Text
	}
	return fmt.Sprintf("laserbrain supervisor (round %d, %s): %s", m.Round, m.Kind, m.Text)
}
