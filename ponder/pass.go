package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Forecast is passes/NN/predict.json: the agent's churn forecast for pass NN.
type Forecast struct {
	Pass  int     `json:"pass"`
	Churn float64 `json:"churn"`
	Claim *string `json:"claim"`
}

// Predict records the churn forecast for the next pass to be deliberated:
// after pass N's judge it is about pass N+1 (SPEC.md §1).
func (e *Engine) Predict(slug string, churn float64, claim *string) (*Forecast, error) {
	if math.IsNaN(churn) || churn < 0 || churn > 1 {
		return nil, usageErr("--churn must be in [0,1], got %v", churn)
	}
	h, err := e.open(slug, writer("predict"))
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.phaseGate("predict", PhaseReady, PhaseJudged); err != nil {
		return nil, err
	}
	target := h.s.CurrentPass
	if h.s.Phase == PhaseJudged {
		target++
	}
	if target == 1 {
		return nil, outOfOrder("predict", "deliberate", "pass 1 has no churn to forecast; predict for pass N+1 runs after pass N's judge")
	}
	f := &Forecast{Pass: target, Churn: churn, Claim: claim}
	if err := writeJSON(filepath.Join(passDir(h.dir, target), predictFile), f); err != nil {
		return nil, err
	}
	return f, nil
}

// VoiceArg is one voice of a deliberation; a silent voice has both null.
type VoiceArg struct {
	Argument   *string  `json:"argument"`
	Confidence *float64 `json:"confidence"`
}

// Voices are the four perspectives of a deliberation.
type Voices struct {
	Skeptic VoiceArg `json:"skeptic"`
	Builder VoiceArg `json:"builder"`
	Dreamer VoiceArg `json:"dreamer"`
	Empath  VoiceArg `json:"empath"`
}

// ByName returns the voice called name, or nil.
func (v *Voices) ByName(name string) *VoiceArg {
	switch name {
	case ledger.Skeptic:
		return &v.Skeptic
	case ledger.Builder:
		return &v.Builder
	case ledger.Dreamer:
		return &v.Dreamer
	case ledger.Empath:
		return &v.Empath
	}
	return nil
}

// Count is the voices signal: perspectives with a non-empty argument.
func (v *Voices) Count() int {
	n := 0
	for _, a := range []VoiceArg{v.Skeptic, v.Builder, v.Dreamer, v.Empath} {
		if a.Argument != nil {
			n++
		}
	}
	return n
}

// Deliberation is passes/NN/deliberation.json.
type Deliberation struct {
	Pass    int    `json:"pass"`
	Stakes  string `json:"stakes"`
	Skipped bool   `json:"skipped"`
	Voices  Voices `json:"voices"`
}

// DeliberationInput is what an agent gives deliberate, from flags or a file.
type DeliberationInput struct {
	Stakes string
	Voices Voices
}

// ParseDeliberation reads a deliberation file: {"stakes": S, "voices":
// {"skeptic": {"argument": A, "confidence": C} | "A" | null, …}}.
func ParseDeliberation(data []byte) (*DeliberationInput, error) {
	var doc struct {
		Stakes *string                    `json:"stakes"`
		Voices map[string]json.RawMessage `json:"voices"`
	}
	data = trimBOM(data)
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("the file is not UTF-8, as JSON must be")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("want {\"stakes\", \"voices\": {skeptic, builder, dreamer, empath}}: %v", err)
	}
	in := &DeliberationInput{}
	if doc.Stakes != nil {
		in.Stakes = *doc.Stakes
	}
	for name, raw := range doc.Voices {
		v := in.Voices.ByName(name)
		if v == nil {
			return nil, fmt.Errorf("unknown voice %q (the four are skeptic, builder, dreamer, empath)", name)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			v.Argument = &s
			continue
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			return nil, fmt.Errorf("voice %s: want {\"argument\", \"confidence\"} or a string: %v", name, err)
		}
	}
	return in, nil
}

// normalise stores a blank argument as null (and its confidence with it)
// and checks confidences.
func (in *DeliberationInput) normalise() error {
	for _, name := range ledger.Voices {
		v := in.Voices.ByName(name)
		if v.Argument != nil && strings.TrimSpace(*v.Argument) == "" {
			v.Argument = nil
		}
		if v.Argument == nil {
			if v.Confidence != nil {
				return fmt.Errorf("voice %s has a confidence but no argument", name)
			}
			continue
		}
		if c := v.Confidence; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
			return fmt.Errorf("voice %s: confidence must be in [0,1], got %v", name, *c)
		}
	}
	switch in.Stakes = strings.TrimSpace(in.Stakes); {
	case in.Stakes == "":
		in.Stakes = "medium"
	case !slices.Contains(Stakes, in.Stakes):
		return fmt.Errorf("stakes must be one of %s, got %q", strings.Join(Stakes, ", "), in.Stakes)
	}
	return nil
}

// Stakes are the stakes a deliberation may declare (medium when none is
// given). OCA records them with the pass's deliberation.
var Stakes = []string{"low", "medium", "high"}

// DeliberateResult is what deliberate reports.
type DeliberateResult struct {
	Slug         string                  `json:"slug"`
	Deliberation Deliberation            `json:"deliberation"`
	Voices       int                     `json:"voices"`
	OCA          *oca.DeliberationResult `json:"oca"`
}

// Deliberate records the current pass's deliberation; skip records four
// silent voices.
func (e *Engine) Deliberate(slug string, in *DeliberationInput, skip bool) (*DeliberateResult, error) {
	if in == nil {
		in = &DeliberationInput{}
	}
	if skip && in.Voices.Count() > 0 {
		return nil, usageErr("--skip records four silent voices; do not give arguments with it")
	}
	if err := in.normalise(); err != nil {
		return nil, usageErr("%v", err)
	}
	if !skip && in.Voices.Count() == 0 {
		return nil, usageErr("deliberate records the voices that argued, and none did: give at least one (--skeptic A, --builder A, --dreamer A, --empath A, or a file), or --skip to record a pass without deliberation; nothing was recorded")
	}
	h, err := e.open(slug, writer("deliberate"))
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.phaseGate("deliberate", PhaseReady); err != nil {
		return nil, err
	}
	k := h.s.CurrentPass
	if h.needsForecast() {
		return nil, outOfOrder("deliberate", forecastCmd, fmt.Sprintf(
			"pass %d has no churn forecast — the agent must record one before each pass from pass 2 on (ponder predict --churn X, X the share of live findings this pass will revise, in [0,1])", k))
	}
	if err := h.requireOCA(); err != nil {
		return nil, err
	}
	d := Deliberation{Pass: k, Stakes: in.Stakes, Skipped: skip, Voices: in.Voices}
	if skip {
		d.Voices = Voices{}
	}
	if err := writeJSON(filepath.Join(passDir(h.dir, k), deliberationFile), d); err != nil {
		return nil, err
	}
	h.s.Phase = PhaseDeliberated
	h.s.history(k).Skipped = skip
	if err := h.save(); err != nil {
		return nil, err
	}
	res := &DeliberateResult{Slug: h.slug, Deliberation: d, Voices: d.Voices.Count()}
	res.OCA = e.Bridge.RecordDeliberation(deliberationRecord(h.s, &d, nil))
	h.ocaCall(res.OCA != nil, "recordDeliberation")
	if res.OCA != nil {
		h.s.OCA.Deliberations[strconv.Itoa(k)] = res.OCA.DeliberationID
		if err := h.save(); err != nil {
			return nil, err
		}
	}
	return res, h.ocaResult()
}

func deliberationRecord(s *Session, d *Deliberation, summary *string) oca.DeliberationRecord {
	conv := func(v VoiceArg) oca.Voice { return oca.Voice{Argument: v.Argument, Confidence: v.Confidence} }
	return oca.DeliberationRecord{
		Session: s.ocaSession(), Pass: d.Pass, Stakes: d.Stakes,
		Skeptic: conv(d.Voices.Skeptic), Builder: conv(d.Voices.Builder),
		Dreamer: conv(d.Voices.Dreamer), Empath: conv(d.Voices.Empath),
		Summary: summary,
	}
}

// DeltaResult is what delta reports.
type DeltaResult struct {
	Slug       string     `json:"slug"`
	Pass       int        `json:"pass"`
	Appended   int        `json:"appended"`
	FirstSeq   int        `json:"firstSeq"`
	LastSeq    int        `json:"lastSeq"`
	FindingIDs []string   `json:"findingIds"` // findings added by this batch
	UnitIDs    []string   `json:"unitIds"`    // units added by this batch
	Ops        OpCounts   `json:"ops"`
	UnitOps    UnitCounts `json:"unitOps"`
	Live       int        `json:"live"`
}

// Delta validates a batch whole — schema, bijection, liveness, phantom
// paths — and appends it all-or-nothing.
func (e *Engine) Delta(slug string, data []byte) (*DeltaResult, error) {
	ds, parseViol := ledger.ParseBatch(data)
	h, err := e.open(slug, writer("delta"))
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.phaseGate("delta", PhaseDeliberated); err != nil {
		return nil, err
	}
	if len(parseViol) > 0 && ds == nil {
		return nil, rejected(parseViol)
	}
	st, l, err := h.state()
	if err != nil {
		return nil, err
	}
	if !st.Seeded {
		return nil, outOfOrder("delta", "units", "the inventory has not been seeded")
	}
	k := h.s.CurrentPass
	before := *st.Pass(k)
	recs, viol := st.admit(ds, k, h.diskRoot(), deref(h.s.ScanRoot))
	if viol = append(parseViol, viol...); len(viol) > 0 {
		sort.SliceStable(viol, func(a, b int) bool { return viol[a].Record < viol[b].Record })
		return nil, rejected(viol)
	}
	if err := h.appendBatch(l, recs); err != nil {
		return nil, err
	}
	res := &DeltaResult{Slug: h.slug, Pass: k, Appended: len(recs), FirstSeq: recs[0].Seq, LastSeq: recs[len(recs)-1].Seq,
		FindingIDs: []string{}, UnitIDs: []string{}, Live: st.Live}
	after := st.Pass(k)
	res.Ops = OpCounts{Add: after.Ops.Add - before.Ops.Add, Edit: after.Ops.Edit - before.Ops.Edit, Change: after.Ops.Change - before.Ops.Change, Delete: after.Ops.Delete - before.Ops.Delete}
	res.UnitOps = UnitCounts{Add: after.Units.Add - before.Units.Add, Edit: after.Units.Edit - before.Units.Edit, Delete: after.Units.Delete - before.Units.Delete}
	unitsChanged := false
	for _, r := range recs {
		switch {
		case r.Type == ledger.Finding && r.Op == ledger.OpAdd:
			res.FindingIDs = append(res.FindingIDs, r.FindingID)
			unitsChanged = true // the unit is now graded
		case r.Type == ledger.UnitAdd:
			res.UnitIDs = append(res.UnitIDs, r.UnitID)
			unitsChanged = true
		case r.Type != ledger.Finding:
			unitsChanged = true
		}
	}
	if unitsChanged {
		if err := h.writeUnits(st); err != nil {
			return res, viewErr(err)
		}
	}
	return res, nil
}

func rejected(viol []ledger.Violation) *Error {
	details := make([]string, len(viol))
	for i, v := range viol {
		details[i] = v.String()
	}
	return stateErr(details, "delta batch rejected with %d violation(s); the ledger is unchanged", len(viol))
}
