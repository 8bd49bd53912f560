package ponder

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// DecideResult is what decide reports.
type DecideResult struct {
	Slug       string               `json:"slug"`
	Pass       int                  `json:"pass"` // the pass decided
	Decision   string               `json:"decision"`
	Verdict    string               `json:"verdict"` // the pass's latest judge verdict
	Status     string               `json:"status"`
	NextPass   *int                 `json:"nextPass"`
	OverBudget bool                 `json:"overBudget"`
	OCA        *oca.ConvergedResult `json:"oca"`
}

// Decide acts on the current pass's judge: continue opens the next pass;
// stop ends the session, converged iff the verdict was stop, and is refused
// below full coverage.
func (e *Engine) Decide(slug, decision string) (*DecideResult, error) {
	if decision != "continue" && decision != "stop" {
		return nil, usageErr("decide takes continue or stop, not %q", decision)
	}
	h, err := e.open(slug, writer("decide "+decision))
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.phaseGate("decide "+decision, PhaseJudged); err != nil {
		return nil, err
	}
	k := h.s.CurrentPass
	hist := h.s.history(k)
	res := &DecideResult{Slug: h.slug, Pass: k, Decision: decision, Verdict: deref(hist.Verdict)}
	now := e.stamp()
	if decision == "continue" {
		next := k + 1
		hist.Decision, hist.DecidedAt = &res.Decision, &now
		h.s.CurrentPass, h.s.Phase = next, PhaseReady
		nh := h.s.history(next)
		nh.OverBudget = next > h.s.PassBudget
		if err := h.save(); err != nil {
			return nil, err
		}
		res.Status, res.NextPass, res.OverBudget = h.s.Status, &next, nh.OverBudget
		if nh.OverBudget {
			e.Warn(fmt.Sprintf("pass %d is beyond the budget of %d passes (overBudget recorded in session.json)", next, h.s.PassBudget))
		}
		return res, nil
	}
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	_, onDisk := st.ReverifyPhantoms(h.diskRoot())
	back := map[string]bool{}
	for _, p := range onDisk {
		back[p.Unit] = true
	}
	graded, counted := st.Grading()
	if counted == 0 || graded != counted {
		var details []string
		for _, u := range st.Ungraded() {
			d := u.ID + " " + u.Path()
			switch {
			case back[u.ID]:
				d += " (phantom-deleted, but on disk again: grade it, or remove the file)"
			case u.Deleted:
				d += " (deleted, still counted: grade it by id or delete it as a phantom)"
			}
			details = append(details, d)
		}
		return nil, stateErr(details, "decide stop refused: coverage %d/%d is below 1.00; %d counted unit(s) are ungraded (ponder grade <unit-id>…)", graded, counted, len(details))
	}
	// The gate is disk-anchored: every file in scope must be a unit's.
	uncovered, err := h.uncovered(st)
	if err != nil {
		return nil, err
	}
	if len(uncovered) > 0 {
		return nil, stateErr(uncovered, "decide stop refused: %d file(s) on disk under %s are no unit's path; a unit must carry each (a unit-edit for a renamed file, a unit-add for a new one) and be graded", len(uncovered), deref(h.s.ScanRoot))
	}
	if err := h.requireOCA(); err != nil {
		return nil, err
	}
	status := StatusStopped
	if res.Verdict == VerdictStop {
		status = StatusConverged
	}
	hist.Decision, hist.DecidedAt = &res.Decision, &now
	h.s.Status, h.s.Phase, h.s.StoppedAt = status, PhaseClosed, &now
	if err := h.save(); err != nil {
		return nil, err
	}
	res.Status = status
	outcome := finalCounts(h.s, st, status)
	res.OCA = e.Bridge.RecordConverged(oca.ConvergedRecord{Session: h.s.ocaSession(), Converged: status == StatusConverged, Passes: k, Outcome: outcome})
	h.ocaCall(res.OCA != nil, "recordConverged")
	return res, h.ocaResult()
}

// finalCounts is the compact JSON (sorted keys) of how a session ended.
func finalCounts(s *Session, st *State, status string) json.RawMessage {
	graded, counted := st.Grading()
	sev := map[string]int{"must": 0, "should": 0, "could": 0}
	for _, f := range st.LiveFindings() {
		sev[f.Severity]++
	}
	out, _ := json.Marshal(map[string]any{
		"status": status, "passes": s.CurrentPass, "graded": graded, "counted": counted,
		"units": len(st.Units), "live": st.Live, "findings": len(st.Findings),
		"must": sev["must"], "should": sev["should"], "could": sev["could"],
	})
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AbortResult is what abort reports.
type AbortResult struct {
	Slug      string `json:"slug"`
	Status    string `json:"status"`
	AbortedAt string `json:"abortedAt"`
	// Halted is the halt in force when the session was aborted (absent
	// when there was none): abort is the one writing command a halt lets
	// through, since ending the session answers "which one yields?".
	Halted *string `json:"halted,omitempty"`
	// OCA is the expiry of the session's pending forecasts (null when OCA
	// is off or could not be reached: abort never waits on it).
	OCA *oca.ExpireResult `json:"oca"`
}

// Abort marks an active session aborted. A halted session may be aborted,
// and the halt it ended under is recorded in session.json (abortedHalted).
func (e *Engine) Abort(slug string) (*AbortResult, error) {
	h, err := e.open(slug, access{cmd: "abort", evenHalted: true})
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.requireActive("abort"); err != nil {
		return nil, err
	}
	// A halt does not stop abort, so one that cannot be read does not
	// either: it is said, and the session ends without the record.
	halt, err := e.sessionHalt(h.slug)
	if err != nil {
		e.Warn(err.Error())
	}
	now := e.stamp()
	h.s.Status, h.s.Phase, h.s.AbortedAt = StatusAborted, PhaseClosed, &now
	if halt != nil {
		h.s.AbortedHalted = &halt.Reason
	}
	if err := h.save(); err != nil {
		return nil, err
	}
	res := &AbortResult{Slug: h.slug, Status: h.s.Status, AbortedAt: now, Halted: h.s.AbortedHalted}
	// An aborted session is finished: like decide stop, it leaves no
	// forecast pending — best-effort, since abort works with OCA down.
	res.OCA = e.Bridge.ExpireForecasts(h.s.ocaSession())
	return res, nil
}

// ApplyResult is what apply reports.
type ApplyResult struct {
	Slug     string           `json:"slug"`
	DryRun   bool             `json:"dryRun"`
	Status   string           `json:"status"`
	PlanPath *string          `json:"planPath"` // null on --dry-run: nothing is written
	Findings int              `json:"findings"`
	Plan     string           `json:"plan"`
	OCA      *oca.ApplyResult `json:"oca"`
}

// Apply renders the plan of the live findings. Committed, it requires a
// converged or stopped session, writes apply-plan.md and marks the session
// applied; --dry-run only prints the plan, at any time.
func (e *Engine) Apply(slug string, dryRun bool) (*ApplyResult, error) {
	a := writer("apply")
	if dryRun {
		a = reader
	}
	h, err := e.open(slug, a)
	if err != nil {
		return nil, err
	}
	defer h.release()
	if !dryRun && h.s.Status != StatusConverged && h.s.Status != StatusStopped {
		return nil, stateErr(nil, "apply refused: session %s is %s; a committed apply needs a converged or stopped session (ponder decide stop), or use --dry-run", h.slug, h.s.Status)
	}
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Slug: h.slug, DryRun: dryRun, Status: h.s.Status, Findings: st.Live}
	if dryRun {
		res.Plan = renderPlan(h.s, st, "")
		return res, nil
	}
	if err := h.requireOCA(); err != nil {
		return nil, err
	}
	now := e.stamp()
	res.Plan = renderPlan(h.s, st, now)
	path := filepath.Join(h.dir, applyPlanFile)
	if err := fsx.WriteFile(path, []byte(res.Plan), 0o644); err != nil {
		return nil, err
	}
	h.s.Status, h.s.AppliedAt = StatusApplied, &now
	if err := h.save(); err != nil {
		return nil, err
	}
	res.Status, res.PlanPath = h.s.Status, &path
	res.OCA = e.Bridge.RecordApply(oca.ApplyRecord{Session: h.s.ocaSession(), Outcome: applyOutcome(st)})
	h.ocaCall(res.OCA != nil, "recordApply")
	return res, h.ocaResult()
}

// applyOutcome is the compact JSON of what an apply plan covers.
func applyOutcome(st *State) json.RawMessage {
	sev := map[string]int{"must": 0, "should": 0, "could": 0}
	units := map[string]bool{}
	for _, f := range st.LiveFindings() {
		sev[f.Severity]++
		units[f.UnitID] = true
	}
	out, _ := json.Marshal(map[string]any{"findings": st.Live, "must": sev["must"], "should": sev["should"], "could": sev["could"], "units": len(units), "plan": applyPlanFile})
	return out
}

// sortedFindings orders live findings by severity, then id.
func sortedFindings(st *State) []*Finding {
	fs := st.LiveFindings()
	sort.SliceStable(fs, func(i, j int) bool {
		ri, rj := ledger.SeverityRank(fs[i].Severity), ledger.SeverityRank(fs[j].Severity)
		if ri != rj {
			return ri < rj
		}
		return idNumber(fs[i].ID) < idNumber(fs[j].ID)
	})
	return fs
}

// renderPlan is apply-plan.md: the live findings by severity, each with its
// unit, recommendation and evidence.
func renderPlan(s *Session, st *State, appliedAt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Apply plan: %s\n\n", planLine(s.Subject))
	lens := "none"
	if s.Lens != nil {
		lens = *s.Lens
	}
	graded, counted := st.Grading()
	fmt.Fprintf(&b, "- session: %s (lens %s, project %s)\n", s.Slug, planLine(lens), planLine(s.Project))
	fmt.Fprintf(&b, "- status: %s after %d pass(es); coverage %d/%d units\n", s.Status, s.CurrentPass, graded, counted)
	if appliedAt != "" {
		fmt.Fprintf(&b, "- applied: %s\n", appliedAt)
	}
	fs := sortedFindings(st)
	if len(fs) == 0 {
		b.WriteString("\nNo live findings: nothing to apply.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "- live findings: %d\n", len(fs))
	cur := ""
	for _, f := range fs {
		if f.Severity != cur {
			cur = f.Severity
			fmt.Fprintf(&b, "\n## %s\n\n", cur)
		}
		path := ""
		if u := st.Unit(f.UnitID); u != nil {
			path = u.Path()
		}
		fmt.Fprintf(&b, "- [ ] **%s** `%s` (%s, confidence %s): %s\n", f.ID, Printable(path), f.UnitID, num(f.Confidence), planLine(f.Text))
		if f.Recommendation != nil && *f.Recommendation != "" {
			fmt.Fprintf(&b, "  - recommendation: %s\n", planLine(*f.Recommendation))
		}
		if f.Evidence != nil && *f.Evidence != "" {
			fmt.Fprintf(&b, "  - evidence: %s\n", planLine(*f.Evidence))
		}
	}
	return b.String()
}

// planLine is text for one line of the plan: white space collapsed and
// anything a terminal would act on escaped (the plan is for people, and
// cat apply-plan.md must not recolour a terminal).
func planLine(s string) string {
	return Printable(text.OneLine(s))
}
