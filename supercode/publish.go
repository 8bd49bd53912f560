package supercode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain/link"
)

// PublishKind is the kind of the records Publish writes by default.
const PublishKind = "supervision"

// PublishAgent is the agent name Publish writes under.
const PublishAgent = "supercode"

// Publish writes the Supercode's reading into the link, where the agents
// read it and decide for themselves: one record per route that names who
// should yield ("X and Y share a ground (overlap 0.80) — suggest X
// yields"), then one per finding ("agent: reason · catches"). Each record
// carries the Supercode's goal and the row as payload, keyed as the
// reference keys it (the route's yielding agent under "yield_") so Python
// readers find it. It takes no self-check; kind "" means PublishKind.
func (s *Supercode) Publish(l *link.Link, kind string) ([]link.Record, error) {
	if kind == "" {
		kind = PublishKind
	}
	s.mu.Lock()
	routes := s.routeLocked()
	findings := s.findingsLocked()
	s.mu.Unlock()
	goal := s.goal
	var written []link.Record
	write := func(text string, payload any) error {
		rec, err := l.Write(link.Entry{Text: text, Kind: kind, Goal: &goal, Payload: payload, Agent: PublishAgent})
		if err != nil {
			return err
		}
		written = append(written, rec)
		return nil
	}
	for _, r := range routes {
		if r.Keep == "" {
			continue
		}
		text := fmt.Sprintf("%s and %s share a ground (overlap %s) — suggest %s yields", r.Yield, r.Keep, f2(r.Overlap), r.Yield)
		if err := write(text, routePayload{r.Agents, pyFloat(r.Overlap), r.Ground, r.Keep, r.Yield, r.Why}); err != nil {
			return written, err
		}
	}
	for _, f := range findings {
		reason := "None"
		if f.Reason != nil {
			reason = *f.Reason
		}
		text := f.Agent + ": " + reason
		if len(f.Catches) > 0 {
			text += " · " + strings.Join(f.Catches, ", ")
		}
		p := findingPayload{Agent: f.Agent, Steps: f.Steps, Reason: f.Reason, Drifting: f.Drifting, Laserscore: f.Laserscore, Catches: f.Catches}
		if f.Phi != nil {
			phi := pyFloat(*f.Phi)
			p.Phi = &phi
		}
		if err := write(text, p); err != nil {
			return written, err
		}
	}
	return written, nil
}

// The payloads as the reference's dicts: its key order, its key names,
// floats written as Python writes them (1.0, not 1).
type routePayload struct {
	Agents  [2]string `json:"agents"`
	Overlap pyFloat   `json:"overlap"`
	Ground  string    `json:"ground"`
	Keep    string    `json:"keep"`
	Yield   string    `json:"yield_"`
	Why     string    `json:"why"`
}

type findingPayload struct {
	Agent      string   `json:"agent"`
	Steps      int      `json:"steps"`
	Reason     *string  `json:"reason"`
	Phi        *pyFloat `json:"phi"`
	Drifting   bool     `json:"drifting"`
	Laserscore *string  `json:"laserscore"`
	Catches    []string `json:"catches"`
}

type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	return []byte(grammar.PythonFloatRepr(float64(f))), nil
}

var _ json.Marshaler = pyFloat(0)
