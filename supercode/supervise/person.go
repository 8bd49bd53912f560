package supervise

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// A person's acts outside the supervisor's rounds, besides Release: the
// answer to an escalation given where the person watches (laserbrain ui)
// rather than by --on-escalate's command, and an authorization. Each is
// journaled as the person's, witnessed like a release (under the fleet's
// round lock, after the journal's chain is checked), before it takes
// effect: a journal that does not hold gets nothing, and nothing is done.

// ErrAnswered: the escalation has been answered already.
var ErrAnswered = errors.New("answered already")

// Question is an escalation as the journal holds it, with its answer.
type Question struct {
	Escalation
	// Answered is set once a person answered it (--on-escalate's command
	// exiting 0, or a person in laserbrain ui).
	Answered bool   `json:"answered"`
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`
}

// Questions reads a fleet's escalations from its journal, oldest first,
// each once (one asked again after a crash is one question), with what
// became of them.
func Questions(ctx context.Context, st fleet.Journal, fleetID string) ([]Question, error) {
	recs, _, err := fleet.ReadJournal(ctx, st, fleetID)
	if err != nil {
		return nil, err
	}
	return QuestionsIn(recs), nil
}

// QuestionsIn is Questions of journal records read already.
func QuestionsIn(recs []fleet.JournalRecord) []Question {
	var out []Question
	at := map[string]int{}
	for _, r := range recs {
		switch r.Kind {
		case fleet.JournalEscalation:
			var e Escalation
			if json.Unmarshal(r.Data, &e) != nil || e.ID == "" {
				continue
			}
			if _, seen := at[e.ID]; seen {
				continue
			}
			at[e.ID] = len(out)
			out = append(out, Question{Escalation: e})
		case fleet.JournalAnswer:
			var a struct {
				ID string `json:"id"`
				Resolution
			}
			if json.Unmarshal(r.Data, &a) != nil || !a.Delivered() {
				continue
			}
			if i, ok := at[a.ID]; ok && !out[i].Answered {
				out[i].Answered, out[i].Decision, out[i].By = true, a.Decision, a.By
			}
		}
	}
	return out
}

// AnswerEscalation is a person's answer to an escalation still open: it is
// journaled as by's answer, then acted on as an --on-escalate answer is —
// told to every agent the question was about (a message from the supervisor, at
// each one's next event) and, for a collision, naming one of its two
// agents halts that one (unless it is halted already). decision is one
// line; "" answers without a word (a collision's "let both go on"). A
// question never asked is fleet.ErrNotFound, one answered already
// ErrAnswered.
func AnswerEscalation(ctx context.Context, st fleet.Store, fleetID, id, by, decision string, now time.Time) (Question, error) {
	if by == "" {
		return Question{}, errors.New("an answer needs the person who gives it")
	}
	decision = strings.TrimSpace(strings.SplitN(decision, "\n", 2)[0])
	qs, err := Questions(ctx, st, fleetID)
	if err != nil {
		return Question{}, err
	}
	var q *Question
	for i := range qs {
		if qs[i].ID == id {
			q = &qs[i]
		}
	}
	switch {
	case q == nil:
		return Question{}, fmt.Errorf("no escalation %q in fleet %s: %w", id, fleetID, fleet.ErrNotFound)
	case q.Answered:
		return *q, fmt.Errorf("escalation %s: %w (by %s: %q)", id, ErrAnswered, who(q.By), q.Decision)
	}
	now = now.UTC()
	ans := Resolution{Decision: decision, By: by}
	data, err := json.Marshal(struct {
		ID string `json:"id"`
		Resolution
	}{id, ans})
	if err != nil {
		return Question{}, err
	}
	text := "answered by " + by
	if decision != "" {
		text += ": " + decision
	}
	err = witnessed(ctx, st, fleetID, true, func() error {
		_, err := st.AppendJournal(ctx, fleet.JournalRecord{At: fleet.JournalTime(now), Fleet: fleetID, Kind: fleet.JournalAnswer,
			Round: q.Round, Agent: q.Who, Text: text, Data: data})
		return err
	})
	if err != nil {
		return Question{}, err
	}
	q.Answered, q.Decision, q.By = true, decision, by
	if q.Kind == EscalateCollision && len(q.Agents) == 2 && (decision == q.Agents[0] || decision == q.Agents[1]) {
		other := q.Agents[0]
		if decision == other {
			other = q.Agents[1]
		}
		if _, halted, err := st.ActiveHalt(ctx, fleetID, decision); err != nil {
			return *q, err
		} else if !halted {
			h := fleet.Halt{ID: personHaltID(fleetID, decision, id), Fleet: fleetID, Agent: decision, Reason: "human decision: yield to " + other,
				By: by, Round: q.Round, Cause: CollisionCause(other, nil), At: now}
			if run, ok := strings.CutPrefix(decision, agentPrefix(decision)); ok && run != "" {
				h.Run = run
			}
			if err := witnessed(ctx, st, fleetID, false, func() error { return putHalt(ctx, st, h) }); err != nil {
				return *q, err
			}
		}
	}
	if decision != "" {
		for _, a := range q.Agents {
			if _, err := st.Say(ctx, fleet.Message{ID: "answer:" + id, Fleet: fleetID, Agent: a, Kind: fleet.MessageAnswer, Round: q.Round,
				Text: answerText(q.Escalation, decision), At: now}); err != nil {
				return *q, fmt.Errorf("the answer is journaled, but %s could not be told: %w", a, err)
			}
		}
	}
	return *q, nil
}

// agentPrefix is "<agent>:" of an agent run's name (<agent>:<run id>),
// "" for a ponder session, whose halt names no run.
func agentPrefix(name string) string {
	if strings.HasPrefix(name, "ponder:") {
		return ""
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[:i+1]
	}
	return ""
}

// personHaltID names the halt a person's answer puts, so answering twice
// (which ErrAnswered refuses) could not put two.
func personHaltID(fleetID, agent, question string) string {
	sum := sha256.Sum256([]byte(fleetID + "\x00" + agent + "\x00" + question))
	return "hp-" + hex.EncodeToString(sum[:6])
}

func who(by string) string {
	if by == "" {
		return "--on-escalate"
	}
	return by
}

// Authorize records a person's authorization of one action: journaled as
// theirs first (fleet.JournalAuthorize, the authorization as its data),
// then stored, where the gate finds it. A journal whose chain does not
// hold refuses it (a *fleet.JournalBrokenError) and nothing is stored.
func Authorize(ctx context.Context, st fleet.Store, a fleet.Authorization) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	scope := "the fleet"
	switch {
	case a.Run != "":
		scope = "run " + a.Run
	case a.Agent != "":
		scope = "agent " + a.Agent
	}
	text := fmt.Sprintf("%s authorized %q for %s: %d use(s) until %s", who(a.By), a.Action, scope, a.Uses, a.Expires.UTC().Format(time.RFC3339))
	if a.Reason != "" {
		text += " (" + a.Reason + ")"
	}
	err = witnessed(ctx, st, a.Fleet, true, func() error {
		_, err := st.AppendJournal(ctx, fleet.JournalRecord{At: fleet.JournalTime(a.Created), Fleet: a.Fleet, Kind: fleet.JournalAuthorize,
			Agent: a.Agent, Text: text, Data: data})
		return err
	})
	if err != nil {
		return err
	}
	return st.AddAuthorization(ctx, a)
}
