package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/ponder/oca"
)

// SyncResult is what oca sync wrote: the rows the session was missing.
type SyncResult struct {
	Slug    string      `json:"slug"`
	Written SyncWritten `json:"written"`
	// ExpiredHypotheses counts the forecasts a closed session still had
	// pending, expired now.
	ExpiredHypotheses int `json:"expiredHypotheses"`
}

// SyncWritten lists the rows written, by what wrote them first time round.
type SyncWritten struct {
	Start bool `json:"start"` // the ponder_start episode
	// Deliberations are the passes whose deliberations row was written;
	// Resolved those whose open row got the resolution judge writes.
	Deliberations []int `json:"deliberations"`
	Resolved      []int `json:"resolved"`
	// Passes are the judged passes whose ponder_pass episode (and
	// hypothesis lifecycle) was written.
	Passes       []int    `json:"passes"`
	End          bool     `json:"end"`   // ponder_converged or ponder_stopped
	Apply        bool     `json:"apply"` // ponder_applied
	Observations []string `json:"observations"`
}

// SyncOCA writes the OCA rows a session is missing — the rows its commands
// would have written had OCA been there — and nothing it already has, so
// running it twice writes nothing twice. It is the recovery the writing
// commands name under PONDER_OCA=on when a row was lost after the local
// work was done: re-running them would be refused (the step is done) or,
// for start, begin a second session. It asks OCA what the session holds
// (its episodes by slug, its deliberations by pass, its observations) and,
// in the order the commands write them: the start episode, each pass's
// deliberation (complete when the pass was judged, the open row resolved
// otherwise), each judged pass's episode and forecast lifecycle, the
// closing episode, the apply episode, and the local observations OCA does
// not have. A closed session's pending forecasts are expired. A halted
// session may be synced: its rows record what was done, not new work.
func (e *Engine) SyncOCA(slug string) (*SyncResult, error) {
	h, err := e.open(slug, access{cmd: "oca sync", evenHalted: true})
	if err != nil {
		return nil, err
	}
	defer h.release()
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	s := h.s
	se := s.ocaSession()
	res := &SyncResult{Slug: h.slug, Written: SyncWritten{Deliberations: []int{}, Resolved: []int{}, Passes: []int{}, Observations: []string{}}}
	rows := e.Bridge.SessionRows(se)
	if rows == nil {
		note := "unreachable"
		if p := e.Bridge.Probe(); p != nil {
			note = p.Note
		}
		return nil, ocaErr("OCA cannot be read (%s), so nothing was written; run ponder oca sync again once it is back", note)
	}
	failed := func(fn string) (*SyncResult, error) {
		if err := h.save(); err != nil {
			return nil, err
		}
		return res, ocaErr("%s failed (see %s); what was written is kept — run `ponder oca sync --slug %s` again once OCA is back", fn, filepath.Join(h.dir, "oca.log"), h.slug)
	}

	if !rows.Start {
		r := e.Bridge.RecordStart(se)
		if r == nil {
			return failed("recordStart")
		}
		s.OCA.SessionRef, res.Written.Start = &r.SessionRef, true
	} else if s.OCA.SessionRef == nil {
		ref := se.Domain()
		s.OCA.SessionRef = &ref
	}

	for k := 1; k <= s.CurrentPass; k++ {
		fn, err := e.syncPass(h, rows, res, k)
		if err != nil {
			return nil, err
		}
		if fn != "" {
			return failed(fn)
		}
	}

	if ended, converged := endOf(s); ended && !rows.End {
		status := StatusStopped
		if converged {
			status = StatusConverged
		}
		r := e.Bridge.RecordConverged(oca.ConvergedRecord{Session: se, Converged: converged, Passes: s.CurrentPass, Outcome: finalCounts(s, st, status)})
		if r == nil {
			return failed("recordConverged")
		}
		res.Written.End = true
	}
	if s.Status == StatusApplied && !rows.Applied {
		if e.Bridge.RecordApply(oca.ApplyRecord{Session: se, Outcome: applyOutcome(st)}) == nil {
			return failed("recordApply")
		}
		res.Written.Apply = true
	}

	written, err := h.syncObservations(rows.Observations)
	res.Written.Observations = append(res.Written.Observations, written...)
	if err != nil {
		if _, ok := err.(*Error); ok {
			return failed("recordObservation")
		}
		return nil, err
	}

	if s.Status != StatusActive {
		if r := e.Bridge.ExpireForecasts(se); r == nil {
			return failed("expireForecasts")
		} else {
			res.ExpiredHypotheses = r.ExpiredHypotheses
		}
	}
	if err := h.save(); err != nil {
		return nil, err
	}
	return res, nil
}

// syncPass writes what OCA lacks of pass k: its deliberation (resolved
// once the pass was judged) and a judged pass's episode. It names the
// bridge call that failed, if one did.
func (e *Engine) syncPass(h *handle, rows *oca.SessionRows, res *SyncResult, k int) (failed string, err error) {
	s := h.s
	se := s.ocaSession()
	var d Deliberation
	ok, err := readJSON(filepath.Join(passDir(h.dir, k), deliberationFile), &d)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", nil
	}
	var j Judgement
	judged, err := readJSON(filepath.Join(passDir(h.dir, k), judgeFile), &j)
	if err != nil {
		return "", err
	}
	key := strconv.Itoa(k)
	row, have := rows.Deliberations[k]
	switch {
	case !have:
		var summary *string
		if judged {
			sum := deltaSummary(k, &j.Metrics)
			summary = &sum
		}
		r := e.Bridge.RecordDeliberation(deliberationRecord(s, &d, summary))
		if r == nil {
			return "recordDeliberation", nil
		}
		s.OCA.Deliberations[key] = r.DeliberationID
		res.Written.Deliberations = append(res.Written.Deliberations, k)
	default:
		s.OCA.Deliberations[key] = row.ID
		if judged && !row.Resolved {
			r := e.Bridge.ResolveDeliberation(se, row.ID, deltaSummary(k, &j.Metrics))
			if r == nil {
				return "resolveDeliberation", nil
			}
			res.Written.Resolved = append(res.Written.Resolved, k)
		}
	}
	if judged && !slices.Contains(rows.Passes, k) {
		p := e.Bridge.RecordPass(passRecord(s, &j))
		if p == nil {
			return "recordPass", nil
		}
		s.OCA.Hypotheses[key] = HypothesisNote{HypothesisID: p.HypothesisID, ClosedHypothesisID: p.ClosedHypothesisID,
			Lock: p.Lock, CloseNote: p.CloseNote, OpenNote: p.OpenNote, ClosedStatus: p.ClosedStatus}
		res.Written.Passes = append(res.Written.Passes, k)
	}
	return "", nil
}

// endOf says whether the session was ended by decide stop (converged or
// stopped, and so also when applied since) and whether it converged: the
// verdict of the pass decided stop.
func endOf(s *Session) (ended, converged bool) {
	switch s.Status {
	case StatusConverged:
		return true, true
	case StatusStopped:
		return true, false
	case StatusApplied:
		for i := len(s.History) - 1; i >= 0; i-- {
			if h := s.History[i]; h.Decision != nil && *h.Decision == "stop" {
				return true, h.Verdict != nil && *h.Verdict == VerdictStop
			}
		}
		return true, false
	}
	return false, false
}

// syncObservations gives OCA the local observations it lacks: each line
// of observations.jsonl without OCA ids is matched to an OCA row of the
// same type, description and severity that no other line claims (the row
// was written, the ids never recorded), else written; the file is then
// rewritten whole with the ids. It returns the observations written; an
// *Error when a write failed (the ids gathered so far are kept).
func (h *handle) syncObservations(inOCA []oca.ObservationRow) ([]string, error) {
	path := filepath.Join(h.dir, observationsFile)
	data, err := readFileIfExists(path)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	claimed := map[int64]bool{}
	type local struct {
		i   int
		obs Observation
	}
	var missing []local
	for i, l := range lines {
		var o Observation
		if json.Unmarshal(bytes.TrimSpace(l), &o) != nil || o.ID == "" {
			continue // a torn line is left as it is
		}
		if o.OCA != nil {
			claimed[o.OCA.ObservationID] = true
		} else {
			missing = append(missing, local{i, o})
		}
	}
	var written []string
	var failure error
	changed := false
	for _, m := range missing {
		o := m.obs
		for _, r := range inOCA {
			if !claimed[r.ID] && r.Type == o.Type && r.Description == o.Description && r.Severity == o.Severity {
				claimed[r.ID] = true
				o.OCA = &oca.ObservationResult{ObservationID: r.ID}
				break
			}
		}
		if o.OCA == nil {
			o.OCA = h.e.Bridge.RecordObservation(oca.ObservationRecord{Session: h.s.ocaSession(), Type: o.Type,
				Description: o.Description, Evidence: o.Evidence, Severity: o.Severity, Intervention: o.Intervention})
			if o.OCA == nil {
				failure = ocaErr("recordObservation failed")
				break
			}
			claimed[o.OCA.ObservationID] = true
			written = append(written, o.ID)
		}
		line, err := json.Marshal(o)
		if err != nil {
			return written, err
		}
		lines[m.i] = append(line, '\n')
		changed = true
	}
	if changed {
		if err := fsx.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
			return written, fmt.Errorf("recording the OCA ids in %s: %w", path, err)
		}
	}
	return written, failure
}
