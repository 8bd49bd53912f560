package laserbrain

import (
	_ "embed"
	"encoding/json"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// Attention: when should a person look? The reference's calibration of
// how often a reading is goal-drift against how long the agent has run since
// a person last spoke (one machine's corpus; it says so in its provenance),
// and the agent's own clock beside it, with its censoring. No verdict is
// consulted: the answer needs only a timestamp.
//
// attention-0.53.0.json is the reference package's attention.json, as it
// ships in 0.53.0 (MIT, vectors/LICENSE-laserbrain-sdk).
//
//go:embed attention-0.53.0.json
var attentionJSON []byte

// AttentionBand is one band of a clock: its span, the readings in it and
// how many were goal-drift. Rate is nil for a band with too few readings to
// quote (underpowered).
type AttentionBand struct {
	Label       string   `json:"label"`
	FromSeconds *float64 `json:"from_seconds,omitempty"`
	ToSeconds   *float64 `json:"to_seconds,omitempty"`
	FromSteps   *int     `json:"from_steps,omitempty"`
	ToSteps     *int     `json:"to_steps,omitempty"`
	Drift       int      `json:"drift"`
	N           int      `json:"n"`
	Rate        *float64 `json:"rate"`
}

// AttentionTable is the calibration.
type AttentionTable struct {
	Bands       []AttentionBand `json:"bands"`
	MinN        int             `json:"min_n"`
	Z           float64         `json:"z_between_best_powered"`
	BestPair    []string        `json:"best_powered_pair"`
	BestN       int             `json:"best_powered_n"`
	AgentClock  AgentClock      `json:"agent_clock"`
	Provenance  map[string]any  `json:"provenance"`
	Description string          `json:"what"`
}

// AgentClock is drift against steps since the agent last spelled its
// state. Gaps from CensoredBeyond steps on are the coverage gate's doing,
// not the agent's, so they carry no rate.
type AgentClock struct {
	Bands          []AttentionBand `json:"bands"`
	Z              float64         `json:"z_between_best_powered"`
	BestPair       []string        `json:"best_powered_pair"`
	BestN          int             `json:"best_powered_n"`
	CensoredBeyond *int            `json:"censored_beyond_steps"`
	Censoring      string          `json:"censoring"`
}

var attention = firstuse.Value[AttentionTable]{New: decodeAttention}

// Attention returns the calibration, decoded on first use.
func Attention() AttentionTable { return attention.Get() }

func decodeAttention() AttentionTable {
	var t AttentionTable
	if err := json.Unmarshal(attentionJSON, &t); err != nil {
		panic("laserbrain: attention-0.53.0.json: " + err.Error()) // embedded; its test reads it
	}
	return t
}

// Risk is a clock's reading: the band, its rate (nil, and Known false,
// where the corpus cannot say), its readings and drifts.
type Risk struct {
	Band     *string  `json:"band"`
	Rate     *float64 `json:"rate"`
	N        int      `json:"n"`
	Drift    int      `json:"drift"`
	Known    bool     `json:"known"`
	Censored *bool    `json:"censored,omitempty"`
}

// AttentionRisk is the reading for an agent left seconds since a person
// last spoke.
func AttentionRisk(seconds float64) Risk {
	s := max(0, seconds)
	for _, b := range Attention().Bands {
		from := 0.0
		if b.FromSeconds != nil {
			from = *b.FromSeconds
		}
		if from <= s && (b.ToSeconds == nil || s < *b.ToSeconds) {
			label := b.Label
			return Risk{Band: &label, Rate: b.Rate, N: b.N, Drift: b.Drift, Known: b.Rate != nil}
		}
	}
	return Risk{}
}

// NextCheckIn is how many seconds from elapsed until the expected drift
// rate first exceeds tolerance: 0 when it already does, nil when no
// measured band ahead crosses it. The answer is a band's edge — the
// resolution the measurement has.
func NextCheckIn(elapsed, tolerance float64) *float64 {
	s := max(0, elapsed)
	if r := AttentionRisk(s); r.Known && *r.Rate > tolerance {
		zero := 0.0
		return &zero
	}
	for _, b := range Attention().Bands {
		if b.Rate == nil {
			continue
		}
		start := 0.0
		if b.FromSeconds != nil {
			start = *b.FromSeconds
		}
		if start <= s {
			continue
		}
		if *b.Rate > tolerance {
			wait := start - s
			return &wait
		}
	}
	return nil
}

// AgentRisk is the agent's own clock at steps since it last spelled its
// state: reported with its censoring, never as a schedule.
func AgentRisk(steps int) Risk {
	s := max(0, steps)
	ac := Attention().AgentClock
	censored := ac.CensoredBeyond != nil && s >= *ac.CensoredBeyond
	for _, b := range ac.Bands {
		from, to := 0, 1<<30
		if b.FromSteps != nil {
			from = *b.FromSteps
		}
		if b.ToSteps != nil {
			to = *b.ToSteps
		}
		if from <= s && s <= to {
			label := b.Label
			r := Risk{Band: &label, Rate: b.Rate, N: b.N, Drift: b.Drift, Known: b.Rate != nil && !censored, Censored: &censored}
			if censored {
				r.Rate = nil
			}
			return r
		}
	}
	return Risk{Censored: &censored}
}
