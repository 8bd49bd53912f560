package ui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hr "github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/report"
	"github.com/laserkit/laserkit/supercode/supervise"
)

//go:embed page.html
var assets embed.FS

// The page's stylesheet and script, as strings the binary holds (no copy
// at start).
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// tmpl is parsed on first use: every laserbrain process links this
// package, and only the ones that render a page need the templates.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html").Funcs(funcs).ParseFS(assets, "page.html"))
})

// sectionIDs are the page's live parts, in page order.
var sectionIDs = []string{"needs", "overview", "agents", "fleet", "feed"}

var funcs = template.FuncMap{
	"clip":   func(n int, s string) string { return text.Clip(s, n) }, // {{clip 90 .Ground}}
	"status": report.StatusText,
	"when":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"clock":  func(t time.Time) string { return t.UTC().Format("15:04:05Z") },
	"zero":   func(t time.Time) bool { return t.IsZero() },
	"num":    func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) },
	"pct":    report.Percent,
	"join":   strings.Join,
	"shape":  statusShape,
	"frag":   func(b []byte) template.HTML { return template.HTML(b) }, // htmlreport escapes what it writes
	"anchor": anchor,
	"hint":   questionHint,
}

// statusShape is the glyph beside a status word: each status has its own
// shape, so the colour never carries it alone.
func statusShape(status string) string {
	switch status {
	case report.StatusWaiting:
		return "◆"
	case report.StatusHalted:
		return "■"
	case report.StatusFinished:
		return "✓"
	case report.StatusUnmeasured:
		return "○"
	}
	return "●"
}

// anchor is an element id for a name (letters, digits and '-' kept).
func anchor(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// row is an agent's line in the table.
type row struct {
	*report.Agent
	Verdict  string
	Phi      string
	Drifting bool
	Coverage string
	Spark    template.HTML
}

// sectionData is what the section templates read.
type sectionData struct {
	V         *View
	Rows      []row
	Waiting   []*report.Agent
	Questions []report.Escalation
	Halts     []report.Halt
	Stats     template.HTML
	Catches   []supercodeCatch
	Route     []routeLine
	Collide   []report.Collision
}

type supercodeCatch struct{ Signature, Subject, Agents, Detail string }

type routeLine struct{ Text string }

func (s *Server) renderSections(v *View) map[string]string {
	return renderSections(v)
}

// renderSections draws each live part of the page.
func renderSections(v *View) map[string]string {
	d := sectionData{V: v}
	f := v.Fleet
	agents := byAttention(f.Agents)
	c := d.addRows(agents, f.Thresholds)
	d.addStanding(f)
	d.Stats = stats(f, len(agents), c, len(d.Questions))
	d.Collide = f.Collisions
	d.addRound(v.Round)
	out := make(map[string]string, len(sectionIDs))
	for _, id := range sectionIDs {
		var b bytes.Buffer
		if err := tmpl().ExecuteTemplate(&b, id, d); err != nil {
			b.Reset()
			template.HTMLEscape(&b, []byte("laserbrain ui: drawing "+id+": "+err.Error()))
		}
		out[id] = b.String()
	}
	return out
}

// byAttention are the agents in the order a person should look at them:
// those that need a person first, then the drifting, then by name.
func byAttention(all []report.Agent) []*report.Agent {
	agents := make([]*report.Agent, len(all))
	for i := range all {
		agents[i] = &all[i]
	}
	rank := func(a *report.Agent) int {
		switch {
		case a.Status == report.StatusWaiting:
			return 0
		case a.Status == report.StatusHalted:
			return 1
		case a.Last() != nil && a.Last().Drifting && a.Status != report.StatusFinished:
			return 2
		case a.Status == report.StatusFinished:
			return 4
		}
		return 3
	}
	sort.SliceStable(agents, func(i, j int) bool {
		if ri, rj := rank(agents[i]), rank(agents[j]); ri != rj {
			return ri < rj
		}
		return agents[i].Name < agents[j].Name
	})
	return agents
}

// counts are how many agents are drifting, waiting for a person and
// halted.
type counts struct{ drifting, waiting, halted int }

// addRows adds each agent's row, and the waiting ones to Waiting.
func (d *sectionData) addRows(agents []*report.Agent, th report.PhiThresholds) counts {
	var c counts
	for _, a := range agents {
		r := row{Agent: a, Verdict: "—", Phi: "—", Coverage: "—"}
		if l := a.Last(); l != nil && !a.Unmeasured() {
			r.Verdict, r.Phi, r.Drifting = l.Reason, strconv.FormatFloat(l.Phi, 'f', 2, 64), l.Drifting
			if l.Drifting && a.Status != report.StatusFinished {
				c.drifting++
			}
		}
		if a.Unmeasured() {
			r.Verdict = report.StatusUnmeasured
		}
		if c := a.Coverage; c != nil && c.ToolCalls+c.Checks > 0 {
			cov := c.Coverage
			r.Coverage = report.Percent(&cov)
		}
		r.Spark = spark(a, th)
		d.Rows = append(d.Rows, r)
		switch a.Status {
		case report.StatusWaiting:
			c.waiting++
			d.Waiting = append(d.Waiting, a)
		case report.StatusHalted:
			c.halted++
		}
	}
	return c
}

// addStanding adds the questions nobody answered and the halts in force.
func (d *sectionData) addStanding(f *report.Fleet) {
	for _, e := range f.Escalations {
		if !e.Answered {
			d.Questions = append(d.Questions, e)
		}
	}
	for _, h := range f.Halts {
		if h.Released.IsZero() {
			d.Halts = append(d.Halts, h)
		}
	}
}

// stats is the strip of figures at the top of the page.
func stats(f *report.Fleet, agents int, c counts, questions int) template.HTML {
	denied := 0
	for _, g := range f.Gate {
		if g.Decision == operator.Deny {
			denied++
		}
	}
	tone := func(bad bool, t hr.Tone) hr.Tone {
		if bad {
			return t
		}
		return hr.Good
	}
	journal := f.Journal.State
	return template.HTML(hr.Fragment(hr.Stats{Items: []hr.Stat{
		{Label: "agents", Value: strconv.Itoa(agents)},
		{Label: "waiting for a person", Value: strconv.Itoa(c.waiting), Tone: tone(c.waiting > 0, hr.Warn)},
		{Label: "drifting now", Value: strconv.Itoa(c.drifting), Tone: tone(c.drifting > 0, hr.Bad)},
		{Label: "halted", Value: strconv.Itoa(c.halted), Tone: tone(c.halted > 0, hr.Warn)},
		{Label: "collisions", Value: strconv.Itoa(len(f.Collisions)), Tone: tone(len(f.Collisions) > 0, hr.Warn)},
		{Label: "gate denials", Value: strconv.Itoa(denied), Tone: tone(denied > 0, hr.Warn)},
		{Label: "open questions", Value: strconv.Itoa(questions), Tone: tone(questions > 0, hr.Warn)},
		{Label: "journal", Value: journal, Tone: map[string]hr.Tone{report.JournalVerified: hr.Good, report.JournalBroken: hr.Bad}[journal]},
	}}))
}

// addRound adds what the last supervise round found for the whole fleet:
// its catches and its route.
func (d *sectionData) addRound(r *supervise.Round) {
	if r == nil {
		return
	}
	for _, c := range r.FleetCatches {
		d.Catches = append(d.Catches, supercodeCatch{Signature: c.Signature, Subject: c.Subject, Agents: strings.Join(c.Agents, ", "), Detail: c.Detail})
	}
	for _, rt := range r.Route {
		if rt.Yield != "" {
			d.Route = append(d.Route, routeLine{fmt.Sprintf("%s yields to %s: %s", rt.Yield, rt.Keep, rt.Why)})
		} else {
			d.Route = append(d.Route, routeLine{fmt.Sprintf("%s + %s: %s", rt.Agents[0], rt.Agents[1], rt.Why)})
		}
	}
}

// spark is an agent's Φ sparkline: its checks' Φ held until the next,
// the drifting ones marked.
func spark(a *report.Agent, th report.PhiThresholds) template.HTML {
	if len(a.Steps) == 0 {
		return ""
	}
	s := hr.Sparkline{Title: "Φ of " + a.Name, YMin: 0, YMax: th.PhiMax,
		Mark: hr.MarkStyle{Key: "drifting", Shape: hr.Square, Tone: hr.Bad, Filled: true}}
	drift := 0
	for i, st := range a.Steps {
		s.Values = append(s.Values, st.Phi)
		if st.Drifting {
			s.Marked = append(s.Marked, i)
			drift++
		}
	}
	last := a.Steps[len(a.Steps)-1]
	s.Desc = fmt.Sprintf("%s, %d drifting; the last %s at Φ %.2f", text.Plural(len(a.Steps), "check"), drift, last.Reason, last.Phi)
	return template.HTML(hr.Fragment(s))
}

// pageData is what the page template reads.
type pageData struct {
	Title    string
	Fleet    string
	Repo     string
	Token    string
	Nonce    string
	Version  uint64
	CSS      template.CSS
	JS       template.JS
	Sections map[string]template.HTML
}

// pageTop is the page's top, sent before the fleet is read: its head
// (the stylesheet) and its header.
func (s *Server) pageTop() []byte {
	_, csrf := s.g.secrets()
	return s.execPage("page-top", pageData{Title: "laserbrain ui", Fleet: s.o.FleetID, Repo: s.o.Repo, Token: csrf, CSS: template.CSS(hr.Stylesheet() + pageCSS)})
}

// pageRest is the rest of the page: the sections of the view at version,
// and the script that keeps them current.
func (s *Server) pageRest(secs map[string]string, version uint64) []byte {
	pd := pageData{Nonce: s.nonce, Version: version, JS: template.JS(pageJS), Sections: map[string]template.HTML{}}
	for id, html := range secs {
		pd.Sections[id] = template.HTML(html) // drawn by renderSections, escaped there
	}
	return s.execPage("page-rest", pd)
}

func (s *Server) execPage(name string, pd pageData) []byte {
	var b bytes.Buffer
	if err := tmpl().ExecuteTemplate(&b, name, pd); err != nil {
		return []byte("laserbrain ui: drawing the page: " + template.HTMLEscapeString(err.Error()))
	}
	return b.Bytes()
}

// detailData is what the drill-down template reads.
type detailData struct {
	*Detail
	Timeline template.HTML
	Spending template.HTML
	Calls    template.HTML
	Checks   template.HTML
	Events   template.HTML
	Gate     template.HTML
	Journal  template.HTML
	Said     template.HTML
	Changes  template.HTML
	Halted   bool
}

// renderDetail draws an agent's drill-down: its Φ timeline as the report
// draws it, and tables of its checks with their advice, its observed
// events, its gate decisions, its journal entries, what the supervisor
// said to it and what its calls changed (with the undo of each).
func renderDetail(d *Detail) []byte {
	a := d.Agent
	dd := detailData{Detail: d, Halted: a.Status == report.StatusHalted}
	if len(a.Steps) > 0 {
		dd.Timeline = template.HTML(hr.Fragment(report.AgentTimeline(a, d.Th)))
	}
	if tl, ok := report.SpendingTimeline([]*report.Agent{a}); ok {
		dd.Spending = template.HTML(hr.Fragment(tl))
	}
	if calls := report.CallTokensOf(d.Events); len(calls) > 0 {
		one := *a
		one.CallTokens = calls
		dd.Calls = template.HTML(hr.Fragment(report.CallTokensTable([]*report.Agent{&one}, false)))
	}
	checks := hr.Table{Caption: "Checks, with the advice given", Columns: []hr.Column{{Title: "check", Numeric: true}, {Title: "when"},
		{Title: "goal", Wrap: true}, {Title: "progress"}, {Title: "distance"}, {Title: "verdict"}, {Title: "Φ", Numeric: true}, {Title: "drifting"},
		{Title: "advice", Wrap: true}}}
	for i := len(a.Steps) - 1; i >= 0; i-- {
		st := a.Steps[i]
		checks.Rows = append(checks.Rows, []string{strconv.Itoa(st.N), st.At.UTC().Format(time.RFC3339), st.Goal, st.Progress, st.Distance,
			st.Reason, strconv.FormatFloat(st.Phi, 'f', 2, 64), yesNo(st.Drifting), d.Advice[st.N]})
	}
	checks.Collapsed, checks.Summary = len(checks.Rows) > 30, fmt.Sprintf("Every check (%d)", len(checks.Rows))
	dd.Checks = template.HTML(hr.Fragment(checks))
	if a.Kind == "run" {
		evs := hr.Table{Caption: "Observed events, newest first", Columns: []hr.Column{{Title: "when"}, {Title: "kind"}, {Title: "name"},
			{Title: "ok"}, {Title: "what", Wrap: true}}}
		for i := len(d.Events) - 1; i >= 0; i-- {
			e := d.Events[i]
			ok := "—"
			if e.OK.Known() {
				ok = yesNo(e.OK == laserbrain.OKTrue)
			}
			evs.Rows = append(evs.Rows, []string{e.At.UTC().Format(time.RFC3339), e.Kind, e.Name, ok, text.Clip(e.Text, 300)})
		}
		evs.Collapsed, evs.Summary = len(evs.Rows) > 30, fmt.Sprintf("Every event (%d)", len(evs.Rows))
		dd.Events = template.HTML(hr.Fragment(evs))
	}
	gate := hr.Table{Caption: "Its gate decisions", Columns: []hr.Column{{Title: "when"}, {Title: "tool"}, {Title: "decision"},
		{Title: "action", Wrap: true}, {Title: "labels", Wrap: true}, {Title: "role"}, {Title: "reason", Wrap: true}}}
	for i := len(d.Gate) - 1; i >= 0; i-- {
		g := d.Gate[i]
		gate.Rows = append(gate.Rows, []string{g.At.UTC().Format(time.RFC3339), g.Tool, g.Decision.String(), g.Action, strings.Join(g.Labels, "; "), g.Role, g.Reason})
	}
	dd.Gate = template.HTML(hr.Fragment(gate))
	jt := hr.Table{Caption: "Its entries in the supervisor's journal", Columns: []hr.Column{{Title: "seq", Numeric: true}, {Title: "when"},
		{Title: "round", Numeric: true}, {Title: "kind"}, {Title: "what", Wrap: true}}}
	for i := len(d.Journal) - 1; i >= 0; i-- {
		r := d.Journal[i]
		jt.Rows = append(jt.Rows, []string{strconv.FormatInt(r.Seq, 10), r.At, strconv.FormatInt(r.Round, 10), r.Kind, r.Text})
	}
	dd.Journal = template.HTML(hr.Fragment(jt))
	said := hr.Table{Caption: "What the supervisor said to it", Columns: []hr.Column{{Title: "when"}, {Title: "round", Numeric: true},
		{Title: "kind"}, {Title: "told", Wrap: true}, {Title: "delivered"}}}
	for i := len(d.Messages) - 1; i >= 0; i-- {
		m := d.Messages[i]
		del := "waiting for its next event"
		if m.Delivered != nil {
			del = m.Delivered.At.UTC().Format(time.RFC3339) + " via " + m.Delivered.Via
		}
		said.Rows = append(said.Rows, []string{m.At.UTC().Format(time.RFC3339), strconv.FormatInt(m.Round, 10), m.Kind, m.Text, del})
	}
	dd.Said = template.HTML(hr.Fragment(said))
	if len(a.Changes) > 0 {
		ch := hr.Table{Caption: "What its calls changed, newest first (each undo goes back to before its call)", Columns: []hr.Column{{Title: "when"},
			{Title: "call"}, {Title: "what", Wrap: true}, {Title: "changed", Wrap: true}, {Title: "loss", Wrap: true}, {Title: "undo", Wrap: true}}}
		for i := len(a.Changes) - 1; i >= 0; i-- {
			c := a.Changes[i]
			ch.Rows = append(ch.Rows, []string{c.At.UTC().Format(time.RFC3339), c.Call, strings.TrimSpace(c.Tool + " " + text.Clip(text.OneLine(c.What), 120)), c.Changed, c.Loss, c.Undo})
		}
		ch.Collapsed, ch.Summary = len(ch.Rows) > 30, fmt.Sprintf("Every change (%d)", len(ch.Rows))
		dd.Changes = template.HTML(hr.Fragment(ch))
	}
	var b bytes.Buffer
	if err := tmpl().ExecuteTemplate(&b, "detail", dd); err != nil {
		return []byte("laserbrain ui: drawing the drill-down: " + template.HTMLEscapeString(err.Error()))
	}
	return b.Bytes()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// questionHint says how an escalation is answered.
func questionHint(e report.Escalation) string {
	switch e.Kind {
	case supervise.EscalateCollision:
		return "Name the agent that yields (" + strings.Join(e.Agents, " or ") + ") to halt it, or answer nothing to let both go on."
	case supervise.EscalateDrift:
		return "Your answer replaces its own advice: it is told at its next event."
	case supervise.EscalateWaiting:
		return "Answer it where it runs; a line given here is told to it at its next event."
	}
	return ""
}
