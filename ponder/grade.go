package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Grading is the grading gate's state: how many counted units are graded
// (the spec and the JSON call it coverage; it is not laserbrain's coverage
// of steps by checks).
type Grading struct {
	Graded  int     `json:"graded"`
	Counted int     `json:"counted"`
	Value   float64 `json:"value"`
}

func gradingOf(st *State) Grading {
	g, c := st.Grading()
	cv := Grading{Graded: g, Counted: c}
	if c > 0 {
		cv.Value = float64(g) / float64(c)
	}
	return cv
}

// GradeResult is what grade reports.
type GradeResult struct {
	Slug    string   `json:"slug"`
	Graded  []string `json:"graded"`
	Grade   *string  `json:"grade"`
	Grading Grading  `json:"coverage"`
}

// Grade marks units graded with unit-grade records (deleted units too).
// Each of units is a unit id or a path (stored form, or the raw name): the
// live unit carrying it, else the deleted unit whose path it was last.
func (e *Engine) Grade(slug string, units []string, label *string) (*GradeResult, error) {
	if len(units) == 0 {
		return nil, usageErr("grade needs at least one unit id or path")
	}
	h, st, l, err := e.write(slug, "grade")
	if err != nil {
		return nil, err
	}
	defer h.release()
	if !st.Seeded {
		return nil, outOfOrder("grade", "units", "the inventory has not been seeded")
	}
	var unknown []string
	var recs []ledger.Record
	seen := map[string]bool{}
	for _, arg := range units {
		u := st.resolveUnit(arg)
		if u == nil {
			unknown = append(unknown, ledger.EncodeName(arg))
			continue
		}
		if !seen[u.ID] {
			seen[u.ID] = true
			recs = append(recs, ledger.Record{Type: ledger.UnitGrade, UnitID: u.ID, Grade: label})
		}
	}
	if len(unknown) > 0 {
		return nil, stateErr(unknown, "grade refused: %d name(s) are neither a unit id nor a unit's path (ponder units --list); nothing was graded", len(unknown))
	}
	if err := h.appendBatch(l, recs); err != nil {
		return nil, err
	}
	res := &GradeResult{Slug: h.slug, Grade: label}
	for i := range recs {
		st.apply(&recs[i])
		res.Graded = append(res.Graded, recs[i].UnitID)
	}
	res.Grading = gradingOf(st)
	if err := h.writeUnits(st); err != nil {
		return res, viewErr(err)
	}
	return res, nil
}

// resolveUnit finds the unit an argument names: a unit id, else a path in
// stored form (or a raw name that is not UTF-8) — the live unit carrying it,
// else the unit deleted last while carrying it. nil when none.
func (st *State) resolveUnit(arg string) *Unit {
	if u := st.Unit(arg); u != nil {
		return u
	}
	p, err := cleanUnitPath(arg)
	if err != nil {
		if utf8.ValidString(arg) {
			return nil
		}
		raw, rerr := cleanRawPath(arg)
		if rerr != nil {
			return nil
		}
		p = ledger.EncodeName(raw)
	}
	if u := st.livePaths[p]; u != nil {
		return u
	}
	for i := len(st.Units) - 1; i >= 0; i-- {
		if u := st.Units[i]; u.Deleted && u.Path() == p {
			return u
		}
	}
	return nil
}

// ObservationTypes are the five metacognitive observation types.
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
	h, err := e.open(slug, writer("metacognize"))
	if err != nil {
		return nil, err
	}
	defer h.release()
	// Under PONDER_OCA=on the observation's row is the point: a dead OCA
	// refuses before anything is written: a row is never silently lost.
	if err := h.requireOCA(); err != nil {
		return nil, err
	}
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
	h.ocaCall(obs.OCA != nil || e.Bridge.Mode() == oca.ModeOff, "recordObservation")
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
	return res, h.ocaResult()
}
