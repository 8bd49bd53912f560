package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Coverage is the coverage gate's state.
type Coverage struct {
	Graded  int     `json:"graded"`
	Counted int     `json:"counted"`
	Value   float64 `json:"value"`
}

func coverageOf(st *State) Coverage {
	g, c := st.Coverage()
	cv := Coverage{Graded: g, Counted: c}
	if c > 0 {
		cv.Value = float64(g) / float64(c)
	}
	return cv
}

// GradeResult is what grade reports.
type GradeResult struct {
	Slug     string   `json:"slug"`
	Graded   []string `json:"graded"`
	Grade    *string  `json:"grade"`
	Coverage Coverage `json:"coverage"`
}

// Grade marks units graded with unit-grade records (deleted units too).
func (e *Engine) Grade(slug string, ids []string, label *string) (*GradeResult, error) {
	if len(ids) == 0 {
		return nil, usageErr("grade needs at least one unit id")
	}
	h, err := e.open(slug, true)
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.requireActive("grade"); err != nil {
		return nil, err
	}
	st, l, err := h.state()
	if err != nil {
		return nil, err
	}
	if !st.Seeded {
		return nil, outOfOrder("grade", "units", "the inventory has not been seeded")
	}
	var unknown []string
	var recs []ledger.Record
	seen := map[string]bool{}
	for _, id := range ids {
		if st.Unit(id) == nil {
			unknown = append(unknown, id)
			continue
		}
		if !seen[id] {
			seen[id] = true
			recs = append(recs, ledger.Record{Type: ledger.UnitGrade, UnitID: id, Grade: label})
		}
	}
	if len(unknown) > 0 {
		return nil, stateErr(unknown, "grade refused: %d unknown unit id(s); nothing was graded", len(unknown))
	}
	if err := h.appendBatch(l, recs); err != nil {
		return nil, err
	}
	res := &GradeResult{Slug: h.slug, Grade: label}
	for i := range recs {
		st.apply(&recs[i])
		res.Graded = append(res.Graded, recs[i].UnitID)
	}
	if err := h.writeUnits(st); err != nil {
		return nil, err
	}
	res.Coverage = coverageOf(st)
	return res, nil
}

// ObservationTypes are the five metacognitive observation types (spec §6.6).
var ObservationTypes = oca.ObservationTypes

// Observation is one line of observations.jsonl.
type Observation struct {
	ID                  string                 `json:"id"`
	TS                  string                 `json:"ts"`
	Pass                int                    `json:"pass"`
	Type                string                 `json:"type"`
	Description         string                 `json:"description"`
	Evidence            json.RawMessage        `json:"evidence"`
	Severity            float64                `json:"severity"`
	Intervention        *string                `json:"intervention"`
	InterventionApplied bool                   `json:"interventionApplied"`
	OCA                 *oca.ObservationResult `json:"oca"`
}

// MetacognizeOptions are metacognize's arguments.
type MetacognizeOptions struct {
	Type         string
	Description  string
	Evidence     string // JSON; "" = {}
	Severity     string // a number or a name; "" = medium (0.5)
	Intervention *string
}

// MetacognizeResult is what metacognize reports: the OCA ids (null when OCA
// is off or down) and the local record.
type MetacognizeResult struct {
	ObservationID *int64      `json:"observationId"`
	EventID       *int64      `json:"eventId"`
	Observation   Observation `json:"observation"`
}

// Metacognize records an observation about the loop itself.
func (e *Engine) Metacognize(slug string, o MetacognizeOptions) (*MetacognizeResult, error) {
	known := false
	for _, t := range ObservationTypes {
		known = known || t == o.Type
	}
	if !known {
		return nil, usageErr("--type must be one of %s, got %q", strings.Join(ObservationTypes, ", "), o.Type)
	}
	if strings.TrimSpace(o.Description) == "" {
		return nil, usageErr("--description is required")
	}
	evidence := json.RawMessage("{}")
	if strings.TrimSpace(o.Evidence) != "" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(o.Evidence)); err != nil {
			return nil, usageErr("--evidence must be JSON: %v", err)
		}
		evidence = buf.Bytes()
	}
	severity := oca.ParseSeverity(o.Severity)
	h, err := e.open(slug, true)
	if err != nil {
		return nil, err
	}
	defer h.release()
	path := filepath.Join(h.dir, observationsFile)
	data, err := readFileIfExists(path)
	if err != nil {
		return nil, err
	}
	n := bytes.Count(data, []byte{'\n'})
	torn := len(data) > 0 && data[len(data)-1] != '\n'
	if torn {
		n++
	}
	obs := Observation{ID: fmt.Sprintf("o%04d", n+1), TS: e.stamp(), Pass: h.s.CurrentPass, Type: o.Type,
		Description: o.Description, Evidence: evidence, Severity: severity, Intervention: o.Intervention}
	obs.OCA = e.Bridge.RecordObservation(oca.ObservationRecord{Session: h.s.ocaSession(), Type: o.Type,
		Description: o.Description, Evidence: evidence, Severity: severity, Intervention: o.Intervention})
	line, err := json.Marshal(obs)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if torn {
		// A crash cut the last line short: start ours on a line of its own.
		line = append([]byte{'\n'}, line...)
	}
	if err := fsx.AppendSync(path, line, 0o644); err != nil {
		return nil, err
	}
	res := &MetacognizeResult{Observation: obs}
	if obs.OCA != nil {
		res.ObservationID, res.EventID = &obs.OCA.ObservationID, &obs.OCA.EventID
	}
	return res, nil
}
