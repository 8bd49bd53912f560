package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/ponder"
)

// Session is one ponder session as the report shows it.
type Session struct {
	Slug    string `json:"slug"`
	Subject string `json:"subject"`
	Lens    string `json:"lens"`
	Status  string `json:"status"`
	// Pass is the current pass; Budget the pass budget.
	Pass   int `json:"pass"`
	Budget int `json:"budget"`
	// Graded and Counted are the coverage now.
	Graded  int `json:"graded"`
	Counted int `json:"counted"`
	// Live is the number of live findings now.
	Live       int                    `json:"live"`
	Passes     []Pass                 `json:"passes"`
	Thresholds ponder.Rule6Thresholds `json:"thresholds"`
}

// Pass is one pass: its metrics as judged (nil where a metric is undefined or
// the pass was not judged), its forecast and its verdict.
type Pass struct {
	N          int  `json:"n"`
	Judged     bool `json:"judged"`
	Skipped    bool `json:"skipped"`
	OverBudget bool `json:"overBudget"`

	Coverage *float64 `json:"coverage"`
	Graded   int      `json:"graded"`
	Counted  int      `json:"counted"`
	Churn    *float64 `json:"churn"`
	Novelty  *float64 `json:"novelty"`
	Thrash   *float64 `json:"thrash"`
	Voices   *int     `json:"voices"`
	// Skeptic: the Skeptic argued in the pass (nil before judge).
	Skeptic         *bool `json:"skeptic"`
	ConfidenceFloor *int  `json:"confidenceFloor"`
	// FloorValue is the confidence below which a finding counts against
	// the floor.
	FloorValue float64  `json:"floorValue"`
	Surprise   *float64 `json:"surprise"`
	// Forecast is the churn the agent predicted for this pass.
	Forecast *float64 `json:"forecast"`

	Verdict  string `json:"verdict"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
	Decision string `json:"decision"`
	// Misses are the Rule-6 thresholds the pass missed, as judge wrote them
	// ([] for a silent pass).
	Misses []string `json:"misses"`
}

// Load reads one session ("" for the current one).
func Load(e *ponder.Engine, slug string) (Session, error) {
	f, err := e.Facts(slug)
	if err != nil {
		return Session{}, err
	}
	return FromFacts(f), nil
}

// LoadAll reads every session under .ponder/, newest first.
func LoadAll(e *ponder.Engine) ([]Session, error) {
	l, err := e.List()
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(l.Sessions))
	for _, s := range l.Sessions {
		one, err := Load(e, s.Slug)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", s.Slug, err)
		}
		out = append(out, one)
	}
	return out, nil
}

// FromFacts is the one adapter from ponder's read API to the view model.
func FromFacts(f *ponder.SessionFacts) Session {
	s := Session{Slug: f.Slug, Subject: f.Subject, Status: f.Status, Pass: f.Pass, Budget: f.Budget,
		Graded: f.Grading.Graded, Counted: f.Grading.Counted, Live: f.Live, Thresholds: ponder.Rule6(), Passes: []Pass{}}
	if f.Lens != nil {
		s.Lens = *f.Lens
	}
	for _, pf := range f.Passes {
		p := Pass{N: pf.Pass, Skipped: pf.Skipped, OverBudget: pf.OverBudget, Decision: str(pf.Decision)}
		if pf.Forecast != nil {
			c := pf.Forecast.Churn
			p.Forecast = &c
		}
		if j := pf.Judgement; j != nil {
			m := j.Metrics
			cov, voices, floor := m.Coverage, m.Voices, m.ConfidenceFloor
			p.Judged = true
			p.Coverage, p.Graded, p.Counted = &cov, m.Graded, m.Counted
			p.Churn, p.Novelty, p.Thrash, p.Surprise = m.Churn, m.Novelty, m.Thrash, m.Surprise
			skeptic := m.Skeptic
			p.Voices, p.ConfidenceFloor, p.Skeptic, p.FloorValue = &voices, &floor, &skeptic, m.FloorValue
			p.Verdict, p.Rule, p.Reason = j.Verdict, j.Rule, j.Reason
			p.Misses = append([]string{}, j.Details.Rule6.Current...)
			if j.Forecast != nil && p.Forecast == nil {
				c := j.Forecast.Churn
				p.Forecast = &c
			}
		}
		s.Passes = append(s.Passes, p)
	}
	return s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Marks of a pass: its verdict, shaped so that greyscale still tells them
// apart.
var verdictMarks = htmlreport.MarkSet{
	{Key: ponder.VerdictContinue, Label: "continue", Shape: htmlreport.Circle, Tone: htmlreport.Info, Filled: false, Priority: 1},
	{Key: ponder.VerdictBlocked, Label: "blocked (R1: coverage below 1)", Shape: htmlreport.Square, Tone: htmlreport.Warn, Filled: true, Priority: 3},
	{Key: ponder.VerdictEscalate, Label: "escalate", Shape: htmlreport.Triangle, Tone: htmlreport.Bad, Filled: true, Priority: 4},
	{Key: ponder.VerdictStop, Label: "stop (Rule 6: converged)", Shape: htmlreport.Diamond, Tone: htmlreport.Good, Filled: true, Priority: 2},
}

// Marks of a metric value: whether it meets its Rule-6 threshold.
var thresholdMarks = htmlreport.MarkSet{
	{Key: "meets", Label: "meets the Rule-6 threshold", Shape: htmlreport.Circle, Tone: htmlreport.Good, Filled: true, Priority: 1},
	{Key: "misses", Label: "misses the Rule-6 threshold", Shape: htmlreport.Cross, Tone: htmlreport.Bad, Filled: true, Priority: 2},
}

var forecastMarks = htmlreport.MarkSet{
	{Key: "forecast", Label: "forecast churn", Shape: htmlreport.Diamond, Tone: htmlreport.Meta, Filled: false, Priority: 1},
	{Key: "actual", Label: "actual churn", Shape: htmlreport.Circle, Tone: htmlreport.Info, Filled: true, Priority: 2},
	{Key: "surprise", Label: "surprise |forecast − actual|", Shape: htmlreport.Triangle, Tone: htmlreport.Warn, Filled: true, Priority: 3},
}

// Converged reports how the session ended or stands, in one sentence.
func (s Session) Converged() string {
	var last *Pass
	for i := range s.Passes {
		if s.Passes[i].Judged {
			last = &s.Passes[i]
		}
	}
	switch {
	case last == nil:
		return "No pass judged yet."
	case last.Verdict == ponder.VerdictStop:
		return fmt.Sprintf("Converged at pass %d by Rule 6: passes %d and %d both met every threshold (epistemic silence).", last.N, last.N-1, last.N)
	case last.Verdict == ponder.VerdictBlocked:
		return fmt.Sprintf("Blocked at pass %d: coverage %d/%d — every counted unit must be graded first.", last.N, last.Graded, last.Counted)
	case last.Verdict == ponder.VerdictEscalate:
		return fmt.Sprintf("Escalated at pass %d (%s): %s.", last.N, last.Rule, last.Reason)
	case len(last.Misses) == 0:
		return fmt.Sprintf("Pass %d was silent (met every threshold); one more silent pass converges.", last.N)
	default:
		return fmt.Sprintf("Not converged at pass %d: missed %s.", last.N, strings.Join(last.Misses, "; "))
	}
}

func fptr(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func iptr(p *int) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p)
}

// Blocks renders one session: headline numbers, the convergence plot, the
// metrics against their thresholds as small multiples, the forecasts, and
// the pass table. idPrefix keeps ids apart when several sessions share a
// page.
func Blocks(s Session, idPrefix string) []htmlreport.Block {
	id := func(x string) string { return idPrefix + "-" + x }
	blocks := headline(s)
	blocks = append(blocks, convergence(s, id("convergence")))
	blocks = append(blocks, metricBlocks(s, id)...)
	blocks = append(blocks, forecastBlocks(s, id("forecast"))...)
	return append(blocks, htmlreport.Heading{Text: "Passes"}, passTable(s))
}

// headline is the session's subject, its figures and whether it converged.
func headline(s Session) []htmlreport.Block {
	lens := ""
	if s.Lens != "" {
		lens = " · lens " + s.Lens
	}
	lastVerdict := "—"
	for _, p := range s.Passes {
		if p.Judged {
			lastVerdict = p.Verdict + " (" + p.Rule + ")"
		}
	}
	statusTone := htmlreport.Neutral
	switch s.Status {
	case "converged", "applied":
		statusTone = htmlreport.Good
	case "aborted", "stopped":
		statusTone = htmlreport.Warn
	}
	covTone := htmlreport.Good
	if s.Counted == 0 || s.Graded < s.Counted {
		covTone = htmlreport.Warn
	}
	return []htmlreport.Block{
		htmlreport.Fields{Items: []htmlreport.Field{{Name: "subject", Value: s.Subject + lens}, {Name: "session", Value: s.Slug}}},
		htmlreport.Stats{Items: []htmlreport.Stat{
			{Label: "status", Value: s.Status, Tone: statusTone},
			{Label: "pass / budget", Value: fmt.Sprintf("%d / %d", s.Pass, s.Budget)},
			{Label: "coverage (graded/counted)", Value: fmt.Sprintf("%d/%d", s.Graded, s.Counted), Tone: covTone},
			{Label: "live findings", Value: strconv.Itoa(s.Live)},
			{Label: "last verdict", Value: lastVerdict},
		}},
		htmlreport.Note{Text: s.Converged()},
	}
}

// convergence plots the thresholds each judged pass missed, marked with
// the pass's verdict.
func convergence(s Session, id string) htmlreport.Block {
	conv := htmlreport.Series{Name: "Rule-6 thresholds missed", Tone: htmlreport.Info, Dots: true}
	maxMiss := 6.0
	for _, p := range s.Passes {
		pt := htmlreport.Point{X: float64(p.N), Y: math.NaN(), XText: strconv.Itoa(p.N), Mark: p.Verdict}
		if p.Judged {
			pt.Y = float64(len(p.Misses))
			maxMiss = math.Max(maxMiss, pt.Y)
			pt.Note = p.Reason
			if len(p.Misses) > 0 {
				pt.Note += " — missed: " + strings.Join(p.Misses, "; ")
			}
		} else {
			pt.Mark, pt.Note = "", "not judged"
		}
		conv.Points = append(conv.Points, pt)
	}
	return htmlreport.Timeline{ID: id, Title: "Convergence: Rule-6 thresholds missed per pass",
		Subtitle: "0 is a silent pass; two silent passes in a row stop the session (R6). The mark is the pass's verdict.",
		Desc:     "How many of Rule 6's thresholds each judged pass missed, with the verdict of each pass.",
		XLabel:   "pass", YLabel: "missed", YMin: 0, YMax: maxMiss, XInteger: true, YInteger: true,
		Series: []htmlreport.Series{conv}, Marks: verdictMarks, Legend: true, Height: 190,
		Bands: []htmlreport.Band{{From: 0, To: 0.25, Label: "silent", Tone: htmlreport.Good, Pattern: htmlreport.Dots}},
	}
}

// metricBlocks are the metrics, one small plot each, against their
// thresholds.
func metricBlocks(s Session, id func(string) string) []htmlreport.Block {
	th := s.Thresholds
	type metric struct {
		key, title, label string
		val               func(Pass) float64
		ok                func(float64) bool
		band              htmlreport.Band
		thr               float64
		ymax              float64
		integer           bool
	}
	metrics := []metric{
		{"coverage", "coverage", "coverage = 1", func(p Pass) float64 { return fptr(p.Coverage) },
			func(v float64) bool { return v >= 1 }, htmlreport.Band{From: 1, To: 1}, 1, 1, false},
		{"churn", "churn", fmt.Sprintf("churn < %s", num(th.MaxChurn)), func(p Pass) float64 { return fptr(p.Churn) },
			func(v float64) bool { return v < th.MaxChurn }, htmlreport.Band{From: 0, To: th.MaxChurn}, th.MaxChurn, 1, false},
		{"novelty", "novelty", fmt.Sprintf("novelty < %s", num(th.MaxNovelty)), func(p Pass) float64 { return fptr(p.Novelty) },
			func(v float64) bool { return v < th.MaxNovelty }, htmlreport.Band{From: 0, To: th.MaxNovelty}, th.MaxNovelty, 1, false},
		{"thrash", "thrash", fmt.Sprintf("thrash ≤ %s (above: R3 escalates)", num(th.MaxThrash)), func(p Pass) float64 { return fptr(p.Thrash) },
			func(v float64) bool { return v <= th.MaxThrash }, htmlreport.Band{From: 0, To: th.MaxThrash}, th.MaxThrash, 1, false},
		{"voices", "voices that argued", fmt.Sprintf("voices ≥ %d", th.MinVoices), func(p Pass) float64 { return iptr(p.Voices) },
			func(v float64) bool { return v >= float64(th.MinVoices) }, htmlreport.Band{From: float64(th.MinVoices), To: 4}, float64(th.MinVoices), 4, true},
		{"floor", "findings below the confidence floor" + floorNote(s), "none below the floor (= 0)", func(p Pass) float64 { return iptr(p.ConfidenceFloor) },
			func(v float64) bool { return v == 0 }, htmlreport.Band{From: 0, To: 0}, 0, 0, true},
	}
	if th.Skeptic {
		metrics = append(metrics, metric{"skeptic", "the Skeptic argued (1 = yes)", "the Skeptic argues (= 1)", func(p Pass) float64 { return bptr(p.Skeptic) },
			func(v float64) bool { return v == 1 }, htmlreport.Band{From: 1, To: 1}, 1, 1, true})
	}
	var small []htmlreport.Block
	for _, m := range metrics {
		ser := htmlreport.Series{Name: m.title, Tone: htmlreport.Info}
		ymax := m.ymax
		for _, p := range s.Passes {
			v := m.val(p)
			pt := htmlreport.Point{X: float64(p.N), Y: v, XText: strconv.Itoa(p.N)}
			switch {
			case !p.Judged:
				pt.Note = "not judged"
			case math.IsNaN(v):
				pt.Note = "null (pass 1 has none)"
			case m.ok(v):
				pt.Mark = "meets"
			default:
				pt.Mark = "misses"
			}
			if !math.IsNaN(v) {
				ymax = math.Max(ymax, v)
			}
			ser.Points = append(ser.Points, pt)
		}
		if ymax == 0 {
			ymax = 1
		}
		band := m.band
		band.Tone, band.Pattern = htmlreport.Good, htmlreport.Hatch
		// The threshold line carries the condition; the band only says
		// which side passes, so the condition is drawn once.
		band.Label = "accepted"
		if band.To == band.From { // an exact value: draw a thin region
			band.To = band.From + ymax*0.02
			band.From -= ymax * 0.02
		}
		small = append(small, htmlreport.Timeline{ID: id(m.key), Title: m.title, Subtitle: "Rule 6: " + m.label,
			Desc:   fmt.Sprintf("%s per pass; Rule 6 needs %s.", m.title, m.label),
			XLabel: "pass", YMin: 0, YMax: ymax, XInteger: true, YInteger: m.integer, Height: 170, Width: 360,
			Series:     []htmlreport.Series{ser},
			Thresholds: []htmlreport.Threshold{{Y: m.thr, Label: m.label, Tone: htmlreport.Good}},
			Bands:      []htmlreport.Band{band},
			Marks:      thresholdMarks,
		})
	}
	return []htmlreport.Block{htmlreport.Heading{Text: "Metrics per pass against Rule 6"},
		htmlreport.Legend{Marks: thresholdMarks, Fills: []htmlreport.LegendFill{{Label: "the region Rule 6 accepts", Tone: htmlreport.Good, Pattern: htmlreport.Hatch}},
			Lines: []htmlreport.LegendLine{{Label: "threshold", Tone: htmlreport.Good, Dash: htmlreport.Dashed}}},
		htmlreport.Grid{Blocks: small}}
}

// forecastBlocks plot the churn the agent forecast against the churn
// judge measured, and their difference.
func forecastBlocks(s Session, id string) []htmlreport.Block {
	fc := htmlreport.Series{Name: "forecast churn", Tone: htmlreport.Meta, Dash: htmlreport.Dashed}
	ac := htmlreport.Series{Name: "actual churn", Tone: htmlreport.Info}
	su := htmlreport.Series{Name: "surprise", Tone: htmlreport.Warn, Dash: htmlreport.Dotted}
	ft := htmlreport.Table{Caption: "Forecast against actual churn", Columns: []htmlreport.Column{{Title: "pass"}, {Title: "forecast churn", Numeric: true},
		{Title: "actual churn", Numeric: true}, {Title: "surprise", Numeric: true}}}
	ymax, anyForecast := 1.0, false
	for _, p := range s.Passes {
		x, xt := float64(p.N), strconv.Itoa(p.N)
		fc.Points = append(fc.Points, htmlreport.Point{X: x, XText: xt, Y: fptr(p.Forecast), Mark: markIf(p.Forecast, "forecast")})
		ac.Points = append(ac.Points, htmlreport.Point{X: x, XText: xt, Y: fptr(p.Churn), Mark: markIf(p.Churn, "actual")})
		su.Points = append(su.Points, htmlreport.Point{X: x, XText: xt, Y: fptr(p.Surprise), Mark: markIf(p.Surprise, "surprise")})
		for _, v := range []*float64{p.Forecast, p.Churn, p.Surprise} {
			if v != nil {
				ymax = math.Max(ymax, *v)
			}
		}
		anyForecast = anyForecast || p.Forecast != nil
		ft.Rows = append(ft.Rows, []string{xt, fnum(p.Forecast), fnum(p.Churn), fnum(p.Surprise)})
	}
	blocks := []htmlreport.Block{htmlreport.Heading{Text: "Forecast against actual churn"}}
	if !anyForecast {
		blocks = append(blocks, htmlreport.Note{Text: "The agent recorded no churn forecast (ponder predict --churn), so there is no surprise to show."})
	}
	return append(blocks, htmlreport.Timeline{ID: id, Title: "Churn: forecast, actual and surprise",
		Subtitle: "The agent predicts each pass's churn before deliberating; surprise = |forecast − actual|.",
		Desc:     "Per pass, the churn the agent forecast, the churn judge measured, and their absolute difference.",
		XLabel:   "pass", YMin: 0, YMax: ymax, XInteger: true, Height: 190,
		Series: []htmlreport.Series{fc, ac, su}, Marks: forecastMarks, Legend: true, Table: &ft})
}

// passTable is every pass in one table.
func passTable(s Session) htmlreport.Table {
	pt := htmlreport.Table{Caption: "Passes", Columns: []htmlreport.Column{{Title: "pass"}, {Title: "verdict"}, {Title: "rule"},
		{Title: "coverage"}, {Title: "churn", Numeric: true}, {Title: "novelty", Numeric: true}, {Title: "thrash", Numeric: true},
		{Title: "voices", Numeric: true}, {Title: "Skeptic"}, {Title: "below floor", Numeric: true}, {Title: "forecast", Numeric: true}, {Title: "surprise", Numeric: true},
		{Title: "decision"}, {Title: "reason", Wrap: true}}}
	for _, p := range s.Passes {
		cov := "—"
		if p.Judged {
			cov = fmt.Sprintf("%d/%d", p.Graded, p.Counted)
		}
		verdict := p.Verdict
		if !p.Judged {
			verdict = "not judged"
		}
		if p.Skipped {
			verdict += " (skipped deliberation)"
		}
		if p.OverBudget {
			verdict += " (over budget)"
		}
		pt.Rows = append(pt.Rows, []string{strconv.Itoa(p.N), verdict, p.Rule, cov, fnum(p.Churn), fnum(p.Novelty), fnum(p.Thrash),
			inum(p.Voices), yesNo(p.Skeptic), inum(p.ConfidenceFloor), fnum(p.Forecast), fnum(p.Surprise), p.Decision, p.Reason})
	}
	return pt
}

func bptr(p *bool) float64 {
	switch {
	case p == nil:
		return math.NaN()
	case *p:
		return 1
	}
	return 0
}

func floorNote(s Session) string {
	for _, p := range s.Passes {
		if p.Judged && p.FloorValue > 0 {
			return " (" + num(p.FloorValue) + ")"
		}
	}
	return ""
}

func markIf(v *float64, key string) string {
	if v == nil {
		return ""
	}
	return key
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func fnum(p *float64) string {
	if p == nil {
		return "null"
	}
	return htmlreport.FormatNumber(*p)
}

func yesNo(p *bool) string {
	switch {
	case p == nil:
		return "—"
	case *p:
		return "yes"
	}
	return "no"
}

func inum(p *int) string {
	if p == nil {
		return "—"
	}
	return strconv.Itoa(*p)
}

// Document is the page for one or more sessions of a project.
func Document(sessions []Session, project string, generated time.Time) *htmlreport.Document {
	title := "ponder sessions"
	if len(sessions) == 1 {
		title = "ponder session " + sessions[0].Slug
	}
	doc := &htmlreport.Document{Title: title,
		Subtitle: "Each pass against Rule 6's thresholds, the verdicts, and the churn forecasts — read from .ponder/ without changing it.",
		Meta: []htmlreport.Field{{Name: "project", Value: project}, {Name: "generated", Value: generated.UTC().Format(time.RFC3339)},
			{Name: "sessions", Value: strconv.Itoa(len(sessions))}}}
	if len(sessions) > 1 {
		t := htmlreport.Table{Caption: "Sessions, newest first", Columns: []htmlreport.Column{{Title: "session"}, {Title: "subject", Wrap: true},
			{Title: "status"}, {Title: "pass", Numeric: true}, {Title: "coverage"}, {Title: "standing", Wrap: true}}}
		for _, s := range sessions {
			t.Rows = append(t.Rows, []string{s.Slug, s.Subject, s.Status, strconv.Itoa(s.Pass), fmt.Sprintf("%d/%d", s.Graded, s.Counted), s.Converged()})
		}
		doc.Sections = append(doc.Sections, htmlreport.Section{ID: "overview", Title: "Overview", Blocks: []htmlreport.Block{t}})
	}
	if len(sessions) == 0 {
		doc.Sections = append(doc.Sections, htmlreport.Section{ID: "none", Title: "No sessions",
			Blocks: []htmlreport.Block{htmlreport.Note{Text: "There is no session under .ponder/ (ponder start creates one)."}}})
	}
	for _, s := range sessions {
		doc.Sections = append(doc.Sections, htmlreport.Section{ID: "s-" + s.Slug, Title: s.Slug + ": " + s.Subject, Blocks: Blocks(s, s.Slug)})
	}
	return doc
}
