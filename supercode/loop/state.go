package loop

import (
	"encoding/json"
)

// state is everything the loop carries between steps. Every done record of
// an agent, judge or ./ci step holds a copy of it, so --resume restores it
// exactly from the last completed step.
type state struct {
	// Iteration is the number of judge looks so far: iterations are
	// started by the judge, and every agent call before the first look
	// (the pre-judge repairs) falls in the implicit iteration 0.
	Iteration int `json:"iteration"`
	// Repairs counts the agent calls since the judge last looked (or since
	// the run began) that were not its work order: what --max-iters holds
	// to when ./ci never goes green and the judge is never asked.
	Repairs int `json:"repairs,omitempty"`
	// A round is what the loop's drift run is stepped on: one opens with
	// every judge call, and with every agent call that is not the work
	// order of the judge call that opened the current round. Opener is
	// what opened the current round ("agent" or "judge"); OpenerAgent: an
	// agent already ran in it.
	Opener      string `json:"opener,omitempty"`
	OpenerAgent bool   `json:"opener_agent,omitempty"`
	// PendingCI is the status of the latest ./ci run since the current
	// round opened; IterCI is the one the current round opened on.
	PendingCI *int `json:"pending_ci,omitempty"`
	IterCI    *int `json:"iter_ci,omitempty"`
	LastCI    *int `json:"last_ci,omitempty"`

	Tokens int64 `json:"tokens"`
	// Calls counts calls per role and service ("agent fix", "judge judge"),
	// in first-call order.
	Calls []Count `json:"calls,omitempty"`

	Soak   map[string]int         `json:"soak,omitempty"`
	Judges map[string]*judgeState `json:"judges,omitempty"`

	// NoopStreak counts consecutive agent calls that changed nothing while
	// there was work to do (WorkPending: ./ci failed or the last verdict
	// did not pass).
	NoopStreak  int  `json:"noop_streak,omitempty"`
	WorkPending bool `json:"work_pending,omitempty"`

	// LastDistance and Signatures are what the drift reading compares with.
	LastDistance *int     `json:"last_distance,omitempty"`
	LastSoak     int      `json:"last_soak,omitempty"`
	Signatures   []string `json:"signatures,omitempty"`

	LastRef      string `json:"last_ref,omitempty"` // the latest checkpoint
	FinalVerdict string `json:"final_verdict,omitempty"`
	FinalPasses  *bool  `json:"final_passes,omitempty"` // whether the last verdict passed
	FinalMode    string `json:"final_mode,omitempty"`
	FinalPassed  int    `json:"final_passed,omitempty"` // soak count, or jurors that passed
	FinalOf      int    `json:"final_of,omitempty"`
	Suggestions  int    `json:"suggestions,omitempty"`
}

// Count is how many calls one role and service had.
type Count struct {
	Name string `json:"name"` // "agent fix", "judge judge"
	N    int    `json:"n"`
}

// judgeState is one judge's pinned session.
type judgeState struct {
	// Session is the pinned session id (a UUID); Born: it has completed a
	// call, so the next one resumes it.
	Session string `json:"session,omitempty"`
	Born    bool   `json:"born,omitempty"`
	Calls   int    `json:"calls"`
	// LastRef is the checkpoint of the tree this judge last gave a verdict on.
	LastRef string `json:"last_ref,omitempty"`
}

func (s *state) clone() *state {
	b, _ := json.Marshal(s)
	var c state
	_ = json.Unmarshal(b, &c)
	return &c
}

func (s *state) count(name string) {
	for i := range s.Calls {
		if s.Calls[i].Name == name {
			s.Calls[i].N++
			return
		}
	}
	s.Calls = append(s.Calls, Count{Name: name, N: 1})
}

func (s *state) judge(name string) *judgeState {
	if s.Judges == nil {
		s.Judges = map[string]*judgeState{}
	}
	j := s.Judges[name]
	if j == nil {
		j = &judgeState{}
		s.Judges[name] = j
	}
	return j
}

// maxSignatures is how many past iterations the circling test looks back.
const maxSignatures = 8

func (s *state) remember(sig string) {
	s.Signatures = append(s.Signatures, sig)
	if len(s.Signatures) > maxSignatures {
		s.Signatures = s.Signatures[len(s.Signatures)-maxSignatures:]
	}
}

func (s *state) seen(sig string) bool {
	for _, x := range s.Signatures {
		if x == sig {
			return true
		}
	}
	return false
}
