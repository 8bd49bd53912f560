package ponder

import "path/filepath"

// Rule6Thresholds are Rule 6's convergence thresholds (SPEC §7), for
// readers that draw a session's course against them.
type Rule6Thresholds struct {
	MaxNovelty float64 `json:"maxNovelty"` // novelty < MaxNovelty
	MaxChurn   float64 `json:"maxChurn"`   // churn < MaxChurn
	MaxThrash  float64 `json:"maxThrash"`  // thrash ≤ MaxThrash (above it R3 escalates)
	MinVoices  int     `json:"minVoices"`  // voices ≥ MinVoices
	// Skeptic: from pass 2 on a pass counts only if the Skeptic argued.
	Skeptic bool `json:"skeptic"`
}

// Rule6 returns the thresholds the verdict applies.
func Rule6() Rule6Thresholds {
	return Rule6Thresholds{MaxNovelty: maxNovelty, MaxChurn: maxChurn, MaxThrash: maxThrash, MinVoices: minVoices, Skeptic: true}
}

// PassRecord is one pass as stored: its session.json line, its judge.json
// (nil before judge) and its forecast (predict.json, nil without one).
type PassRecord struct {
	PassHistory
	Judgement *Judgement `json:"judgement"`
	Forecast  *Forecast  `json:"forecast"`
}

// SessionPasses is a session with every pass it opened, oldest first:
// what a read-only reader drawing the session's course needs.
type SessionPasses struct {
	Session  Session      `json:"session"`
	Coverage Coverage     `json:"coverage"`
	Live     int          `json:"live"`
	Passes   []PassRecord `json:"passes"`
}

// Passes reads a session and each of its passes without changing anything.
func (e *Engine) Passes(slug string) (*SessionPasses, error) {
	h, err := e.open(slug, false)
	if err != nil {
		return nil, err
	}
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	res := &SessionPasses{Session: *h.s, Coverage: coverageOf(st), Live: st.Live, Passes: []PassRecord{}}
	for _, ph := range h.s.History {
		pr := PassRecord{PassHistory: ph}
		var j Judgement
		if ok, err := readJSON(filepath.Join(passDir(h.dir, ph.Pass), judgeFile), &j); err != nil {
			return nil, err
		} else if ok {
			pr.Judgement = &j
		}
		var f Forecast
		if ok, err := readJSON(filepath.Join(passDir(h.dir, ph.Pass), predictFile), &f); err != nil {
			return nil, err
		} else if ok {
			pr.Forecast = &f
		}
		res.Passes = append(res.Passes, pr)
	}
	return res, nil
}
