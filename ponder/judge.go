package ponder

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Judgement is passes/NN/judge.json and judge's result.
type Judgement struct {
	Slug     string    `json:"slug"`
	Pass     int       `json:"pass"`
	JudgedAt string    `json:"judgedAt"`
	Metrics  Metrics   `json:"metrics"`
	Forecast *Forecast `json:"forecast"`
	Verdict  string    `json:"verdict"`
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason"`
	Advice   string    `json:"advice"`
	Details  Verdict   `json:"details"`
	Warnings []string  `json:"warnings"`
	// Ledger is the ledger this judgement measured: its records and the
	// hash of the last, so the verdict can be tied to exactly that prefix.
	Ledger ledger.Anchor `json:"ledger"`
	OCA    *JudgeOCA     `json:"oca"`
}

// JudgeOCA is what the bridge did at judge (null under PONDER_OCA=off).
type JudgeOCA struct {
	Pass          *oca.PassResult   `json:"pass"`
	Deliberation  *int64            `json:"deliberationId"`
	Resolved      *bool             `json:"resolved"`
	FallbackWrite bool              `json:"fallbackInsert"`
	Observations  []oca.Observation `json:"observations"`
}

// advice is what the agent does next, by verdict: a rule it can follow,
// not a comment.
var advice = map[string]string{
	VerdictBlocked:  "grade the ungraded units (ponder grade) and give every file in scope a unit (a unit-edit or unit-add delta next pass), then judge again; decide stop is refused until then",
	VerdictContinue: "run another pass: ponder decide continue",
	VerdictEscalate: "stop and hand this session to a person with the reason above; run no further pass on your own. The person decides: ponder decide continue (another pass), ponder decide stop (end it) or ponder abort",
	VerdictStop:     "converged: ponder decide stop",
}

// Judge computes the current pass's metrics and verdict (SPEC.md §7), in
// this order: metrics → open observations → verdict and tie-breaker →
// judge.json → recordPass → resolveDeliberation. It can be re-run until
// decide.
func (e *Engine) Judge(slug string) (*Judgement, error) {
	sc := &judgeScan{}
	a := writer("judge")
	a.replay = sc.replay
	h, err := e.open(slug, a)
	if err != nil {
		return nil, err
	}
	defer h.release()
	if sc.snaps != nil {
		sc.snaps.finish()
	}
	if err := h.phaseGate("judge", PhaseDeliberated, PhaseJudged); err != nil {
		return nil, err
	}
	st, l, err := h.state()
	if err != nil {
		return nil, err
	}
	if !st.Seeded {
		return nil, outOfOrder("judge", "units", "the inventory has not been seeded; units must seed before pass 1's judge")
	}
	if err := h.requireOCA(); err != nil {
		return nil, err
	}
	k := h.s.CurrentPass
	pd := passDir(h.dir, k)
	var delib Deliberation
	if ok, err := readJSON(filepath.Join(pd, deliberationFile), &delib); err != nil || !ok {
		return nil, stateErr(nil, "judge: pass %d has no readable %s (%v); re-run deliberate", k, deliberationFile, err)
	}
	j := &Judgement{Slug: h.slug, Pass: k, Warnings: []string{}, Ledger: l.Anchor()}
	var forecast Forecast
	if ok, err := readJSON(filepath.Join(pd, predictFile), &forecast); err != nil {
		return nil, err
	} else if ok {
		j.Forecast = &forecast
	} else if k >= 2 {
		j.Warnings = append(j.Warnings, fmt.Sprintf("no forecast for pass %d (ponder predict --churn before deliberate): its surprise is null", k))
	}
	// Phantom deletes hold only while their paths are absent: check them
	// again, so that a file that came back (or a forged phantom) counts.
	checked, onDisk := st.ReverifyPhantoms(h.diskRoot())
	j.Metrics = computeMetrics(st, k, &delib.Voices, j.Forecast, h.s.ConfidenceFloorValue)
	j.Metrics.Phantoms = PhantomCheck{Checked: checked, OnDisk: onDisk}
	// The gate is disk-anchored: a file in scope that no unit carries (a
	// rename, a new file) is a gap too.
	if sc.scanErr != nil {
		return nil, sc.scanErr
	}
	if sc.files != nil {
		j.Metrics.Uncovered = st.Uncovered(sc.files)
	}
	if len(onDisk) > 0 {
		j.Warnings = append(j.Warnings, fmt.Sprintf("%d phantom-deleted unit(s) are on disk again and count toward coverage: %s", len(onDisk), phantomList(onDisk)))
	}
	if k >= 2 && !j.Metrics.Skeptic {
		j.Warnings = append(j.Warnings, fmt.Sprintf("the Skeptic did not take part in pass %d: pass 2 onward always includes an adversarial falsification pass, so this pass cannot count toward convergence (deliberate --skeptic, with or without deltas)", k))
	}
	in, obs, err := e.verdictInput(h, sc, st, l, j)
	if err != nil {
		return nil, err
	}
	j.Details = Decide(in)
	j.Verdict, j.Rule, j.Reason = j.Details.Verdict, j.Details.Rule, j.Details.Reason
	j.Advice = advice[j.Verdict]
	j.JudgedAt = e.stamp()
	if e.Bridge.Mode() != oca.ModeOff {
		j.OCA = &JudgeOCA{Observations: obs}
	}
	if err := writeJSON(filepath.Join(pd, judgeFile), j); err != nil {
		return nil, err
	}
	hist := h.s.history(k)
	hist.Verdict, hist.Rule, hist.JudgedAt = &j.Verdict, &j.Rule, &j.JudgedAt
	h.s.Phase = PhaseJudged
	if err := h.save(); err != nil {
		return nil, err
	}
	for _, w := range j.Warnings {
		e.Warn(w)
	}
	if j.OCA == nil {
		return j, nil
	}
	if err := e.recordJudgedPass(h, j, &delib); err != nil {
		return nil, err
	}
	return j, h.ocaResult()
}

// verdictInput is what the verdict of judgement j is decided on: its
// metrics, the ungraded units, the previous pass measured again (a
// warning added to j where it cannot be) and the open observations OCA
// holds, which it also returns.
func (e *Engine) verdictInput(h *handle, sc *judgeScan, st *State, l *ledger.Log, j *Judgement) (VerdictInput, []oca.Observation, error) {
	k := j.Pass
	in := VerdictInput{Pass: k, Budget: h.s.PassBudget, Current: j.Metrics, ScanRoot: deref(h.s.ScanRoot)}
	for _, u := range st.Ungraded() {
		in.Ungraded = append(in.Ungraded, UnitRef{Unit: u.ID, Path: u.Path()})
	}
	if k >= 2 {
		prev, warning, err := sc.previous(h, l, k)
		if err != nil {
			return in, nil, err
		}
		if warning != "" {
			j.Warnings = append(j.Warnings, warning)
		}
		in.Previous = prev
	}
	obs := e.Bridge.OpenObservations(h.s.ocaSession())
	h.ocaCall(obs != nil || e.Bridge.Mode() == oca.ModeOff, "openObservations")
	if obs != nil {
		in.Observations = make([]float64, len(obs))
		for i, o := range obs {
			in.Observations[i] = o.Severity
		}
	}
	return in, obs, nil
}

// judgeScan is what judge's read of the ledger keeps. Rule 6 reads pass
// k−1 too: it is measured again from the ledger, at its end, in the same
// read that checks the ledger — and at the prefix its judge.json names, to
// tell whether that file still says what the ledger does. The scope on
// disk is scanned once: for this pass and the one before.
type judgeScan struct {
	snaps          *snapshots
	prev, atStored *snapshot
	storedPrev     *Judgement
	storedErr      error
	files          []string
	scanErr        error
}

// replay sets the snapshots up for a read of the ledger (again, when the
// read is retried) and returns what applies each record to them.
func (sc *judgeScan) replay(h *handle, st *State) func(*ledger.Record) {
	sc.snaps, sc.prev, sc.atStored, sc.storedPrev, sc.storedErr = &snapshots{st: st}, nil, nil, nil, nil
	k, floor := h.s.CurrentPass, h.s.ConfidenceFloorValue
	if sc.files == nil && sc.scanErr == nil {
		sc.files, sc.scanErr = h.scope()
	}
	if k < 2 {
		return sc.snaps.apply
	}
	root, onDisk := h.diskRoot(), map[*Unit]bool{}
	now := func(u *Unit) bool {
		if b, ok := onDisk[u]; ok {
			return b
		}
		onDisk[u] = len(u.PathsOnDisk(root)) > 0
		return onDisk[u]
	}
	sc.prev = &snapshot{Pass: k - 1, atEnd: true, fails: now, floor: floor, files: sc.files}
	sc.snaps.marks = append(sc.snaps.marks, sc.prev)
	var j Judgement
	ok, err := readJSON(filepath.Join(passDir(h.dir, k-1), judgeFile), &j)
	switch {
	case err != nil:
		sc.storedErr = err
	case ok:
		sc.storedPrev = &j
		sc.atStored = &snapshot{Pass: j.Pass, Records: j.Ledger.Records, fails: storedFails(&j), floor: floor}
		sc.snaps.marks = append(sc.snaps.marks, sc.atStored)
		h.heads = []int{j.Ledger.Records}
	}
	return sc.snaps.apply
}

// previous is pass k−1's metrics as the ledger stood at its end, with its
// deliberation's voices — never the figures its judge.json holds; warning
// says where that file no longer agrees with the ledger.
func (sc *judgeScan) previous(h *handle, l *ledger.Log, k int) (*Metrics, string, error) {
	switch {
	case sc.storedErr != nil:
		return nil, "", sc.storedErr
	case sc.storedPrev == nil || sc.prev == nil || !sc.prev.taken:
		return nil, "", stateErr(nil, "judge: pass %d has no %s to compare with", k-1, judgeFile)
	}
	voices, err := h.storedVoices(k - 1)
	if err != nil {
		return nil, "", err
	}
	warning := ""
	if problem := verifyJudgements(map[int]*Judgement{k - 1: sc.storedPrev}, l, map[int]*snapshot{k - 1: sc.atStored}, map[int]*Voices{k - 1: voices})[k-1]; problem != "" {
		warning = fmt.Sprintf("%s; pass %d is judged on the ledger", problem, k-1)
	}
	pm := sc.prev.Metrics
	if voices != nil {
		pm.Voices, pm.Skeptic = voices.Count(), voices.Skeptic.Argument != nil
	}
	return &pm, warning, nil
}

// recordJudgedPass is judge's OCA half: the episode and the hypothesis
// lifecycle, then the deliberation's resolution (or the complete row, if
// none is open); judge.json and the session are written again with what
// it returned.
func (e *Engine) recordJudgedPass(h *handle, j *Judgement, delib *Deliberation) error {
	k := j.Pass
	pd := passDir(h.dir, k)
	m := j.Metrics
	j.OCA.Pass = e.Bridge.RecordPass(passRecord(h.s, j))
	h.ocaCall(j.OCA.Pass != nil, "recordPass")
	if p := j.OCA.Pass; p != nil {
		h.s.OCA.Hypotheses[strconv.Itoa(k)] = HypothesisNote{HypothesisID: p.HypothesisID, ClosedHypothesisID: p.ClosedHypothesisID,
			Lock: p.Lock, CloseNote: p.CloseNote, OpenNote: p.OpenNote, ClosedStatus: p.ClosedStatus}
	}
	summary := deltaSummary(k, &m)
	if id, ok := h.s.OCA.Deliberations[strconv.Itoa(k)]; ok {
		r := e.Bridge.ResolveDeliberation(h.s.ocaSession(), id, summary)
		h.ocaCall(r != nil, "resolveDeliberation")
		if r != nil {
			j.OCA.Deliberation, j.OCA.Resolved = &r.DeliberationID, &r.Resolved
		}
	} else {
		r := e.Bridge.RecordDeliberation(deliberationRecord(h.s, delib, &summary))
		h.ocaCall(r != nil, "recordDeliberation")
		if r != nil {
			resolved := true
			j.OCA.Deliberation, j.OCA.Resolved, j.OCA.FallbackWrite = &r.DeliberationID, &resolved, true
			h.s.OCA.Deliberations[strconv.Itoa(k)] = r.DeliberationID
		}
	}
	if err := writeJSON(filepath.Join(pd, judgeFile), j); err != nil {
		return err
	}
	return h.save()
}

// passRecord is what recordPass writes of a judged pass.
func passRecord(s *Session, j *Judgement) oca.PassRecord {
	m := j.Metrics
	rec := oca.PassRecord{Session: s.ocaSession(), Pass: j.Pass, Metrics: oca.PassMetrics{
		Coverage: m.Coverage, Churn: m.Churn, Novelty: m.Novelty, Thrash: m.Thrash, Surprise: m.Surprise,
		Voices: m.Voices, DeltaVoices: m.DeltaVoices, Skeptic: m.Skeptic, ConfidenceFloor: m.ConfidenceFloor,
		Ops:     m.Ops,
		Verdict: j.Verdict,
	}}
	if j.Forecast != nil {
		claim := ""
		if j.Forecast.Claim != nil {
			claim = *j.Forecast.Claim
		}
		rec.Predict = &oca.Forecast{Churn: j.Forecast.Churn, Claim: claim}
	}
	return rec
}

// deltaSummary is the deliberation's resolution: what the pass's deltas did.
func deltaSummary(k int, m *Metrics) string {
	return fmt.Sprintf("pass %d: add=%d edit=%d change=%d delete=%d unit-add=%d unit-edit=%d unit-delete=%d live=%d",
		k, m.Ops.Add, m.Ops.Edit, m.Ops.Change, m.Ops.Delete, m.UnitOps.Add, m.UnitOps.Edit, m.UnitOps.Delete, m.Live)
}
