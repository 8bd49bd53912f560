package ponder

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/laserkit/laserkit/ponder/ledger"
)

func readFileIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// StatusResult is what status reports.
type StatusResult struct {
	Slug        string   `json:"slug"`
	Subject     string   `json:"subject"`
	Lens        *string  `json:"lens"`
	Project     string   `json:"project"`
	Status      string   `json:"status"`
	Pass        int      `json:"pass"`
	PassBudget  int      `json:"passBudget"`
	Phase       string   `json:"phase"`
	Next        []string `json:"next"`
	Seeded      bool     `json:"seeded"`
	Units       int      `json:"units"`
	Grading     Grading  `json:"coverage"`
	Live        int      `json:"live"`
	LastVerdict *string  `json:"lastVerdict"`
	Records     int      `json:"records"`
	Current     bool     `json:"current"`
	// SelectedBy says where this session was selected from: --slug,
	// PONDER_SLUG or .ponder/current.
	SelectedBy string `json:"selectedBy"`
	// Halted is the halt in force on the session (absent when there is
	// none): while it holds, next is only abort, and a person's release
	// (Halted.Release) is the way back.
	Halted *StatusHalt `json:"halted,omitempty"`
}

// StatusHalt is a halt as status shows it.
type StatusHalt struct {
	Reason  string `json:"reason"`
	Release string `json:"release"`
}

// read opens a session to read it, and its state as the ledger gives it.
func (e *Engine) read(slug string) (*handle, *State, error) {
	h, err := e.open(slug, reader)
	if err != nil {
		return nil, nil, err
	}
	st, _, err := h.state()
	if err != nil {
		return nil, nil, err
	}
	return h, st, nil
}

// write opens an active session to change it (the caller releases it),
// and its state and ledger.
func (e *Engine) write(slug, cmd string) (*handle, *State, *ledger.Log, error) {
	h, err := e.open(slug, writer(cmd))
	if err != nil {
		return nil, nil, nil, err
	}
	if err := h.requireActive(cmd); err != nil {
		h.release()
		return nil, nil, nil, err
	}
	st, l, err := h.state()
	if err != nil {
		h.release()
		return nil, nil, nil, err
	}
	return h, st, l, nil
}

// Status reads a session without changing anything.
func (e *Engine) Status(slug string) (*StatusResult, error) {
	h, st, err := e.read(slug)
	if err != nil {
		return nil, err
	}
	s := h.s
	cur, _ := e.currentSlug()
	res := &StatusResult{Slug: s.Slug, Subject: s.Subject, Lens: s.Lens, Project: s.Project, Status: s.Status,
		Pass: s.CurrentPass, PassBudget: s.PassBudget, Phase: s.Phase, Next: expectedNext(s, st.Seeded, h.hasForecast(s.CurrentPass)),
		Seeded: st.Seeded, Units: len(st.Units), Grading: gradingOf(st), Live: st.Live, Records: st.Records,
		Current: cur == s.Slug, SelectedBy: h.selectedBy}
	for i := len(s.History) - 1; i >= 0; i-- {
		if s.History[i].Verdict != nil {
			res.LastVerdict = s.History[i].Verdict
			break
		}
	}
	if s.Status == StatusActive {
		// Reading goes on whatever the halts say; one that cannot be read
		// is said, not assumed away.
		switch halt, err := e.sessionHalt(s.Slug); {
		case err != nil:
			e.Warn(err.Error())
		case halt != nil:
			res.Halted = &StatusHalt{Reason: halt.Reason, Release: halt.Release}
			res.Next = []string{"abort"}
		}
	}
	return res, nil
}

// ListEntry is one session in list.
type ListEntry struct {
	Slug      string  `json:"slug"`
	Subject   string  `json:"subject"`
	Lens      *string `json:"lens"`
	Status    string  `json:"status"`
	Pass      int     `json:"pass"`
	Phase     string  `json:"phase"`
	CreatedAt string  `json:"createdAt"`
	Current   bool    `json:"current"`
}

// ListResult is what list reports.
type ListResult struct {
	Current  *string     `json:"current"`
	Sessions []ListEntry `json:"sessions"`
}

// List lists the sessions under .ponder/, newest first.
func (e *Engine) List() (*ListResult, error) {
	res := &ListResult{Sessions: []ListEntry{}}
	cur, err := e.currentSlug()
	if err != nil {
		return nil, err
	}
	if cur != "" {
		res.Current = &cur
	}
	entries, err := os.ReadDir(e.stateDir())
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		s, err := readSession(filepath.Join(e.stateDir(), ent.Name()))
		if err != nil {
			continue // not a session directory
		}
		res.Sessions = append(res.Sessions, ListEntry{Slug: s.Slug, Subject: s.Subject, Lens: s.Lens, Status: s.Status,
			Pass: s.CurrentPass, Phase: s.Phase, CreatedAt: s.CreatedAt, Current: s.Slug == cur})
	}
	sort.SliceStable(res.Sessions, func(i, j int) bool {
		if res.Sessions[i].CreatedAt != res.Sessions[j].CreatedAt {
			return res.Sessions[i].CreatedAt > res.Sessions[j].CreatedAt
		}
		return res.Sessions[i].Slug < res.Sessions[j].Slug
	})
	return res, nil
}

// ReportPass is one pass in report.
type ReportPass struct {
	Pass       int      `json:"pass"`
	OverBudget bool     `json:"overBudget"`
	Skipped    bool     `json:"skipped"`
	Judged     bool     `json:"judged"`
	Metrics    *Metrics `json:"metrics"`
	Verdict    *string  `json:"verdict"`
	Rule       *string  `json:"rule"`
	Decision   *string  `json:"decision"`
}

// ReportFinding is one live finding in report.
type ReportFinding struct {
	ID             string  `json:"id"`
	Severity       string  `json:"severity"`
	Confidence     float64 `json:"confidence"`
	UnitID         string  `json:"unitId"`
	Path           string  `json:"path"`
	Text           string  `json:"text"`
	Recommendation *string `json:"recommendation"`
	Evidence       *string `json:"evidence"`
}

// ReportResult is what report shows: per-pass metrics and verdicts, then
// the live findings by severity, then id.
type ReportResult struct {
	Slug     string          `json:"slug"`
	Subject  string          `json:"subject"`
	Lens     *string         `json:"lens"`
	Status   string          `json:"status"`
	Pass     int             `json:"pass"`
	Grading  Grading         `json:"coverage"`
	Passes   []ReportPass    `json:"passes"`
	Findings []ReportFinding `json:"findings"`
	Ungraded []string        `json:"ungraded"`
}

// Report reads a session's passes and findings.
func (e *Engine) Report(slug string) (*ReportResult, error) {
	h, st, err := e.read(slug)
	if err != nil {
		return nil, err
	}
	s := h.s
	res := &ReportResult{Slug: s.Slug, Subject: s.Subject, Lens: s.Lens, Status: s.Status, Pass: s.CurrentPass,
		Grading: gradingOf(st), Passes: []ReportPass{}, Findings: []ReportFinding{}, Ungraded: []string{}}
	for _, ph := range s.History {
		rp := ReportPass{Pass: ph.Pass, OverBudget: ph.OverBudget, Skipped: ph.Skipped, Verdict: ph.Verdict, Rule: ph.Rule, Decision: ph.Decision}
		var j Judgement
		if ok, err := readJSON(filepath.Join(passDir(h.dir, ph.Pass), judgeFile), &j); err != nil {
			return nil, err
		} else if ok {
			rp.Judged, rp.Metrics = true, &j.Metrics
		}
		res.Passes = append(res.Passes, rp)
	}
	for _, f := range sortedFindings(st) {
		path := ""
		if u := st.Unit(f.UnitID); u != nil {
			path = u.Path()
		}
		res.Findings = append(res.Findings, ReportFinding{ID: f.ID, Severity: f.Severity, Confidence: f.Confidence, UnitID: f.UnitID,
			Path: path, Text: f.Text, Recommendation: f.Recommendation, Evidence: f.Evidence})
	}
	for _, u := range st.Ungraded() {
		res.Ungraded = append(res.Ungraded, u.ID)
	}
	return res, nil
}
