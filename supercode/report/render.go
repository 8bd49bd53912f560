package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/firstuse"
	hr "github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/operator"
	preport "github.com/laserkit/laserkit/ponder/report"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// verdictLook is how a verdict is drawn: its shape carries it without
// colour; filled means the check interrupted (drifting), hollow that it
// did not.
type verdictLook struct {
	shape hr.Shape
	tone  hr.Tone
	prio  int
}

// verdictLookOf is how verdict v is drawn; ok false for one drawn as the
// line alone (advancing) or not a verdict.
func verdictLookOf(v string) (l verdictLook, ok bool) {
	switch v {
	case "grounded":
		return verdictLook{hr.Circle, hr.Info, 1}, true
	case "reground":
		return verdictLook{hr.Plus, hr.Info, 2}, true
	case "excursion":
		return verdictLook{hr.Diamond, hr.Meta, 3}, true
	case "stalled":
		return verdictLook{hr.Triangle, hr.Warn, 4}, true
	case "self-report":
		return verdictLook{hr.TriangleDown, hr.Warn, 5}, true
	case "oscillating":
		return verdictLook{hr.Hexagon, hr.Meta, 6}, true
	case "goal-drift":
		return verdictLook{hr.Square, hr.Bad, 7}, true
	case "ungrammatical":
		return verdictLook{hr.Cross, hr.Bad, 8}, true
	}
	return verdictLook{}, false
}

// verdictOrder lists the verdicts for legends and counts.
var verdictOrder = [...]string{"grounded", "advancing", "reground", "excursion", "stalled", "self-report", "oscillating", "goal-drift", "ungrammatical"}

// verdictMarks has two marks per drawn verdict: hollow (held) and filled
// (interrupted). Advancing, the common case, is drawn as the line alone.
// Built on first use: most processes that link the report draw none.
var verdictMarks = firstuse.Value[hr.MarkSet]{New: func() hr.MarkSet {
	var ms hr.MarkSet
	for _, v := range verdictOrder {
		l, ok := verdictLookOf(v)
		if !ok {
			continue
		}
		ms = append(ms,
			hr.MarkStyle{Key: v, Label: v, Shape: l.shape, Tone: l.tone, Filled: false, Priority: 2 * l.prio},
			hr.MarkStyle{Key: v + "!", Label: v + ", interrupting", Shape: l.shape, Tone: l.tone, Filled: true, Priority: 2*l.prio + 1})
	}
	return ms
}}

// verdictClass folds "self-report:stuck" into "self-report".
func verdictClass(reason string) string {
	if i := strings.IndexByte(reason, ':'); i > 0 {
		return reason[:i]
	}
	return reason
}

func markKey(s *Step) string {
	v := verdictClass(s.Reason)
	if _, ok := verdictLookOf(v); !ok {
		return ""
	}
	if s.Drifting {
		return v + "!"
	}
	return v
}

// Write renders the fleet report.
func Write(w io.Writer, f *Fleet) error { return hr.Write(w, Document(f)) }

// Render returns the fleet report as bytes.
func Render(f *Fleet) []byte { return hr.Render(Document(f)) }

// Document builds the page.
func Document(f *Fleet) *hr.Document {
	title := "laserkit fleet report"
	if f.Scope == "run" && len(f.Agents) == 1 {
		title = "laserkit run report: " + f.Agents[0].Name
	}
	doc := &hr.Document{Title: title,
		Subtitle: "Drift per agent against its own ground, agents on the same job, the gate's decisions, ponder's convergence and the supervisor's journal.",
		Meta:     []hr.Field{{Name: "generated", Value: f.Generated.UTC().Format(time.RFC3339)}}}
	if f.ID != "" {
		doc.Meta = append(doc.Meta, hr.Field{Name: "fleet", Value: f.ID})
	}
	if f.Repo != "" {
		doc.Meta = append(doc.Meta, hr.Field{Name: "repository", Value: f.Repo})
	}
	doc.Sections = append(doc.Sections, overview(f), drift(f))
	if sec, ok := spendingSection(f); ok {
		doc.Sections = append(doc.Sections, sec)
	}
	if sec, ok := callTokensSection(f); ok {
		doc.Sections = append(doc.Sections, sec)
	}
	doc.Sections = append(doc.Sections, collisions(f), gate(f), changes(f), supervisor(f))
	if len(f.Sessions) > 0 || f.Scope == "fleet" {
		doc.Sections = append(doc.Sections, sessions(f))
	}
	doc.Sections = append(doc.Sections, sources(f))
	return doc
}

func tone(bad bool, t hr.Tone) hr.Tone {
	if bad {
		return t
	}
	return hr.Good
}

func overview(f *Fleet) hr.Section {
	drifting, denied, unmeasured := 0, 0, 0
	for i := range f.Agents {
		if l := f.Agents[i].Last(); l != nil && l.Drifting {
			drifting++
		}
		if f.Agents[i].Unmeasured() {
			unmeasured++
		}
	}
	for _, g := range f.Gate {
		if g.Decision == operator.Deny {
			denied++
		}
	}
	standingHalts := 0
	for _, h := range f.Halts {
		if h.Released.IsZero() {
			standingHalts++
		}
	}
	journal := f.Journal.State
	if journal == JournalVerified {
		journal += " (" + text.Plural(f.Journal.Records, "record") + ")"
	}
	return hr.Section{ID: "overview", Title: "Overview", Blocks: []hr.Block{
		hr.Stats{Items: []hr.Stat{
			{Label: "agents", Value: strconv.Itoa(len(f.Agents))},
			{Label: "drifting now", Value: strconv.Itoa(drifting), Tone: tone(drifting > 0, hr.Bad)},
			{Label: "unmeasured", Value: strconv.Itoa(unmeasured), Tone: tone(unmeasured > 0, hr.Warn)},
			{Label: "collisions", Value: strconv.Itoa(len(f.Collisions)), Tone: tone(len(f.Collisions) > 0, hr.Warn)},
			{Label: "gate denials", Value: strconv.Itoa(denied), Tone: tone(denied > 0, hr.Warn)},
			{Label: "halts standing", Value: strconv.Itoa(standingHalts), Tone: tone(standingHalts > 0, hr.Warn)},
			{Label: "escalations", Value: strconv.Itoa(len(f.Escalations)), Tone: tone(len(f.Escalations) > 0, hr.Warn)},
			{Label: "ponder sessions", Value: strconv.Itoa(len(f.Sessions))},
			{Label: "journal", Value: journal, Tone: map[string]hr.Tone{JournalVerified: hr.Good, JournalBroken: hr.Bad}[f.Journal.State]},
		}},
	}}
}

// agentOrder puts the agents drifting now first, then by name.
func agentOrder(agents []Agent) []*Agent {
	out := make([]*Agent, len(agents))
	for i := range agents {
		out[i] = &agents[i]
	}
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := out[i].Last() != nil && out[i].Last().Drifting, out[j].Last() != nil && out[j].Last().Drifting
		if di != dj {
			return di
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func drift(f *Fleet) hr.Section {
	th := f.Thresholds
	sec := hr.Section{ID: "drift", Title: "Drift per agent",
		Intro: "Φ at every check, each agent against its own ground; the line holds each value until the next check. A mark's shape is the verdict; filled marks interrupted the agent (drifting), hollow ones did not. Advancing checks are the line alone."}
	if len(f.Agents) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "No agent runs in this fleet yet."})
		return sec
	}
	used := map[string]bool{}
	counts := map[string][2]float64{}
	var plots []hr.Block
	for _, a := range agentOrder(f.Agents) {
		for i := range a.Steps {
			s := &a.Steps[i]
			used[markKey(s)] = true
			c := counts[verdictClass(s.Reason)]
			if s.Drifting {
				c[0]++
			} else {
				c[1]++
			}
			counts[verdictClass(s.Reason)] = c
		}
		plots = append(plots, AgentTimeline(a, th))
	}
	var lm hr.MarkSet
	for _, m := range verdictMarks.Get() {
		if used[m.Key] {
			lm = append(lm, m)
		}
	}
	sec.Blocks = append(sec.Blocks,
		hr.Legend{Title: "Key", Marks: lm,
			Lines: []hr.LegendLine{{Label: "Φ", Tone: hr.Info}, {Label: fmt.Sprintf("self-report floor %s: stuck or circling above it is a self-report", hr.FormatNumber(th.SelfReportFloor)), Tone: hr.Warn, Dash: hr.Dashed}},
			Fills: []hr.LegendFill{{Label: fmt.Sprintf("goal-drift zone: only where Φ > %s can the goal overlap fall below goal_min %s", hr.FormatNumber(th.GoalDriftPhi), hr.FormatNumber(th.GoalMin)), Tone: hr.Bad, Pattern: hr.BackHatch}}},
		hr.Grid{Blocks: plots})

	// Verdict counts across the fleet.
	var cats []string
	var interrupt, held []float64
	for _, v := range verdictOrder {
		c, ok := counts[v]
		if !ok {
			continue
		}
		cats = append(cats, v)
		interrupt, held = append(interrupt, c[0]), append(held, c[1])
	}
	for v, c := range counts { // a reason outside the grammar's list
		if !slices.Contains(verdictOrder[:], v) {
			cats = append(cats, v)
			interrupt, held = append(interrupt, c[0]), append(held, c[1])
		}
	}
	sec.Blocks = append(sec.Blocks, hr.Bars{ID: "verdict-counts", Title: "Verdicts across the fleet", CategoryTitle: "verdict",
		Subtitle: "Every check of every agent, by verdict.", Desc: "How many checks ended in each verdict, split by whether the check interrupted the agent.",
		Categories: cats, Stacks: []hr.BarStack{{Name: "interrupting", Tone: hr.Bad, Pattern: hr.Solid, Values: interrupt}, {Name: "not interrupting", Tone: hr.Info, Pattern: hr.Hatch, Values: held}}})

	t := hr.Table{Caption: "Agents", Columns: []hr.Column{{Title: "agent"}, {Title: "kind"}, {Title: "run"}, {Title: "ground", Wrap: true},
		{Title: "checks", Numeric: true}, {Title: "tool calls", Numeric: true}, {Title: "coverage", Numeric: true}, {Title: "longest unchecked", Numeric: true},
		{Title: "coverage refusals", Numeric: true}, {Title: "last verdict"}, {Title: "Φ", Numeric: true}, {Title: "drifting"}, {Title: "judgment"}, {Title: "catches", Wrap: true}, {Title: "halt", Wrap: true},
		{Title: "network", Wrap: true}, {Title: "tokens", Numeric: true}}}
	for _, a := range agentOrder(f.Agents) {
		last, phi, drifting := "—", "—", "—"
		if l := a.Last(); l != nil {
			last, phi, drifting = l.Reason, hr.FormatNumber(l.Phi), yesNo(l.Drifting)
		}
		calls, cov, longest, refusals := "—", "—", "—", "—"
		if c := a.Coverage; c != nil {
			calls, longest, refusals = strconv.Itoa(c.ToolCalls), strconv.Itoa(c.LongestUnchecked), strconv.Itoa(c.Refusals)
			if c.ToolCalls+c.Checks > 0 {
				cov = hr.FormatNumber(c.Coverage*100) + "%"
			}
			if c.Unmeasured {
				last, phi, drifting = coverage.Unmeasured, "—", "—"
			}
		}
		halt := ""
		if a.Halt != nil && a.Halt.Released.IsZero() {
			halt = "halted: " + a.Halt.Reason
		}
		t.Rows = append(t.Rows, []string{a.Name, a.Kind, a.Run, a.Ground, strconv.Itoa(len(a.Steps)), calls, cov, longest, refusals, last, phi, drifting, a.Judgment, strings.Join(a.Catches, ", "), halt,
			networkText(a.Network), tokensText(a.Tokens)})
	}
	sec.Blocks = append(sec.Blocks, hr.Heading{Text: "Agents"}, t)
	return sec
}

// tokensText is the model tokens an agent spent, as the Agents table
// says them.
func tokensText(u *fleet.Usage) string {
	if u == nil {
		return "—"
	}
	return strconv.FormatInt(u.Total(), 10)
}

// networkText is what an agent's tree tried on the network, as the
// Agents table says it: the attempts by answer, and the endpoints refused.
func networkText(n *confine.NetSummary) string {
	if n == nil {
		return "—"
	}
	t := text.Plural(n.Allowed, "connection") + " allowed"
	if n.Refused+n.Asked > 0 {
		var refused []string
		for _, e := range n.Endpoints {
			if e.Refused+e.Asked > 0 {
				refused = append(refused, e.Endpoint)
			}
		}
		t += ", " + strconv.Itoa(n.Refused+n.Asked) + " refused (" + strings.Join(refused, ", ") + ")"
	}
	return t
}

// AgentTimeline is one agent's Φ plot as the report draws it: every
// check against the agent's own ground, its verdicts marked (filled when
// the check interrupted), the self-report floor and the goal-drift zone;
// the subtitle says its ground, its last reading, and whether it is
// unmeasured or halted.
func AgentTimeline(a *Agent, th PhiThresholds) hr.Timeline {
	ser := hr.Series{Name: "Φ", Tone: hr.Info, Step: true, Dots: len(a.Steps) <= 40, Points: make([]hr.Point, len(a.Steps))}
	for i := range a.Steps {
		s := &a.Steps[i]
		note := s.Reason
		if s.Underlying != "" {
			note += " (" + s.Underlying + ")"
		}
		if s.Task > 1 {
			note += " · task " + strconv.Itoa(s.Task)
		}
		ser.Points[i] = hr.Point{X: float64(s.N), Y: s.Phi, XText: strconv.Itoa(s.N), Mark: markKey(s), Note: note}
	}
	sub := []string{}
	if a.Kind == "ponder" {
		sub = append(sub, "ponder session")
	} else if a.Run != "" && a.Run != a.Name && !strings.HasSuffix(a.Name, ":"+a.Run) {
		sub = append(sub, "run "+a.Run) // the name says it already (<agent>:<run id>)
	}
	sub = append(sub, "ground “"+text.Clip(a.Ground, 80)+"”", text.Plural(len(a.Steps), "check"))
	if l := a.Last(); l != nil && !a.Unmeasured() {
		st := "last " + l.Reason + ", Φ " + hr.FormatNumber(l.Phi)
		if l.Drifting {
			st += " — DRIFTING"
		}
		sub = append(sub, st)
	}
	if a.Unmeasured() {
		sub = append(sub, "UNMEASURED: "+text.Plural(a.Coverage.SinceGround, "tool call")+" since the ground, no check")
	}
	if a.Halt != nil && a.Halt.Released.IsZero() {
		sub = append(sub, "HALTED: "+a.Halt.Reason)
	}
	return hr.Timeline{ID: "phi-" + a.Name, Title: a.Name, Subtitle: strings.Join(sub, " · "),
		Desc:   "Φ of agent " + a.Name + " at each check against its own ground.",
		XLabel: "check", YLabel: "Φ", YMin: 0, YMax: th.PhiMax, XInteger: true, Width: 400, Height: 180,
		Series:     []hr.Series{ser},
		Thresholds: []hr.Threshold{{Y: th.SelfReportFloor, Label: "self-report floor " + hr.FormatNumber(th.SelfReportFloor), Tone: hr.Warn}},
		Bands:      []hr.Band{{From: th.GoalDriftPhi, To: th.PhiMax, Label: "goal-drift zone", Tone: hr.Bad, Pattern: hr.BackHatch}},
		Marks:      verdictMarks.Get()}
}

// VerdictMarks are the marks AgentTimeline draws, for a legend.
func VerdictMarks() hr.MarkSet { return verdictMarks.Get() }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// outcomeLook is how an outcome's edge is drawn (dash and tone both
// differ, and the label says it in words).
type outcomeLook struct {
	dash hr.Dash
	tone hr.Tone
	word string
}

// outcomeLookOf is the look of outcome kind k ("" for none recorded); an
// unknown kind is drawn plain.
func outcomeLookOf(k string) outcomeLook {
	switch k {
	case "halted":
		return outcomeLook{hr.SolidLine, hr.Bad, "halted"}
	case "escalated":
		return outcomeLook{hr.Dashed, hr.Warn, "escalated"}
	case "routed":
		return outcomeLook{hr.Dotted, hr.Info, "routed"}
	case "":
		return outcomeLook{hr.DashDot, hr.Neutral, "no outcome recorded"}
	}
	return outcomeLook{}
}

func collisions(f *Fleet) hr.Section {
	sec := hr.Section{ID: "collisions", Title: "Collisions: agents on the same job",
		Intro: fmt.Sprintf("Two agents collide when their grounds overlap at least %s — each may be perfectly on its own ground. The files both touched are shown beside each collision as evidence, never as its cause.", hr.FormatNumber(f.Thresholds.CollisionMin))}
	if len(f.Collisions) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Kind: hr.Fine, Text: "No two agents share a ground."})
		return sec
	}
	inPair := map[string]bool{}
	for _, c := range f.Collisions {
		inPair[c.Agents[0]], inPair[c.Agents[1]] = true, true
	}
	var nodes []hr.Node
	for _, a := range agentOrder(f.Agents) {
		if !inPair[a.Name] {
			continue
		}
		n := hr.Node{ID: a.Name, Label: a.Name, Shape: hr.Circle, Tone: hr.Info, Note: "ground “" + a.Ground + "”"}
		if a.Halt != nil && a.Halt.Released.IsZero() {
			n.Shape, n.Tone, n.Filled, n.Note = hr.Cross, hr.Bad, true, n.Note+" — halted: "+a.Halt.Reason
		}
		nodes = append(nodes, n)
	}
	var edges []hr.Edge
	used := map[string]bool{}
	t := hr.Table{Caption: "Collisions", Columns: []hr.Column{{Title: "agents"}, {Title: "overlap", Numeric: true}, {Title: "grounds", Wrap: true},
		{Title: "first seen"}, {Title: "outcome", Wrap: true}, {Title: "shared files", Numeric: true}, {Title: "file evidence", Wrap: true}}}
	for _, c := range f.Collisions {
		look := outcomeLookOf(c.Outcome.Kind)
		used[c.Outcome.Kind] = true
		e := hr.Edge{From: c.Agents[0], To: c.Agents[1], Weight: c.Overlap, Tone: look.tone, Dash: look.dash,
			Label: hr.FormatNumber(c.Overlap) + " · " + look.word}
		if c.Outcome.Yield != "" {
			e.From, e.To, e.Arrow = c.Outcome.Yield, c.Outcome.Keep, true
		}
		e.Title = fmt.Sprintf("%s and %s: overlap %s since %s; %s; %s", c.Agents[0], c.Agents[1], hr.FormatNumber(c.Overlap), when(c.FirstSeen), outcomeText(c.Outcome), text.Plural(len(c.SharedFiles), "shared file"))
		edges = append(edges, e)
		files := c.SharedFiles
		more := ""
		if len(files) > 12 {
			files, more = files[:12], fmt.Sprintf(" … and %d more", len(c.SharedFiles)-12)
		}
		outcome := outcomeText(c.Outcome)
		if c.Over {
			outcome += "; over: one of the two has finished"
		}
		t.Rows = append(t.Rows, []string{c.Agents[0] + " + " + c.Agents[1], hr.FormatNumber(c.Overlap), groundText(c.Grounds[0], c.Lenses[0]) + " / " + groundText(c.Grounds[1], c.Lenses[1]),
			when(c.FirstSeen), outcome, strconv.Itoa(len(c.SharedFiles)), strings.Join(files, ", ") + more})
	}
	lg := &hr.Legend{Title: "Key", Lines: []hr.LegendLine{}}
	for _, k := range []string{"halted", "escalated", "routed", ""} {
		if used[k] {
			l := outcomeLookOf(k)
			lg.Lines = append(lg.Lines, hr.LegendLine{Label: l.word, Tone: l.tone, Dash: l.dash})
		}
	}
	lg.Lines = append(lg.Lines, hr.LegendLine{Label: "line width: ground overlap; arrow: from the agent that yields to the one that keeps the ground", Tone: hr.Neutral})
	sec.Blocks = append(sec.Blocks, hr.Relation{ID: "collision-graph", Title: "Who collides with whom",
		Subtitle: text.Plural(len(f.Collisions), "collision") + " among " + text.Plural(len(nodes), "agent"),
		Desc:     "Agents whose grounds overlap, joined by a line as thick as the overlap; the label gives the overlap and what the supervisor did.",
		Nodes:    nodes, Edges: edges, Table: &t, Legend: lg})
	return sec
}

// groundText is a ground as compared, with its lens beside it.
func groundText(ground, lens string) string {
	if lens == "" {
		return "“" + ground + "”"
	}
	return "“" + ground + "” (lens " + lens + ")"
}

func outcomeText(o Outcome) string {
	switch o.Kind {
	case "halted":
		return fmt.Sprintf("halted %s (%s keeps the ground) at %s: %s", o.Yield, o.Keep, when(o.At), o.Why)
	case "escalated":
		return fmt.Sprintf("escalated to a person at %s: %s", when(o.At), o.Why)
	case "routed":
		if o.Yield == "" {
			return "routed: " + o.Why
		}
		return fmt.Sprintf("routed: %s should yield to %s (%s)", o.Yield, o.Keep, o.Why)
	}
	return "no outcome recorded"
}

// gateLabel is the category a decision is counted under.
func gateLabel(g *GateDecision) []string {
	if len(g.Labels) > 0 {
		return g.Labels
	}
	tool := g.Tool
	if tool == "" {
		tool = "unknown tool"
	}
	return []string{"(no label recorded) " + tool}
}

func gate(f *Fleet) hr.Section {
	sec := hr.Section{ID: "gate", Title: "The gate's decisions",
		Intro: "Irreversible or outward actions the operator gate stopped (deny), put to a person (ask) or let through on a person's authorization (allow), counted per label."}
	if len(f.Gate) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "The gate has decided nothing on these agents' actions."})
		return sec
	}
	type tally struct{ deny, ask, allow float64 }
	by := map[string]*tally{}
	for i := range f.Gate {
		g := &f.Gate[i]
		for _, l := range gateLabel(g) {
			tt := by[l]
			if tt == nil {
				tt = &tally{}
				by[l] = tt
			}
			switch g.Decision {
			case operator.Deny:
				tt.deny++
			case operator.Ask:
				tt.ask++
			default:
				tt.allow++
			}
		}
	}
	labels := make([]string, 0, len(by))
	for l := range by {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool {
		a, b := by[labels[i]], by[labels[j]]
		if ta, tb := a.deny+a.ask+a.allow, b.deny+b.ask+b.allow; ta != tb {
			return ta > tb
		}
		return labels[i] < labels[j]
	})
	var deny, ask, allow []float64
	for _, l := range labels {
		deny, ask, allow = append(deny, by[l].deny), append(ask, by[l].ask), append(allow, by[l].allow)
	}
	sec.Blocks = append(sec.Blocks, hr.Bars{ID: "gate-labels", Title: "Decisions per label", CategoryTitle: "label",
		Desc:       "How often the gate denied, asked about or allowed an action, for each of the operator's labels.",
		Categories: labels, Stacks: []hr.BarStack{{Name: "deny", Tone: hr.Bad, Pattern: hr.Solid, Values: deny},
			{Name: "ask", Tone: hr.Warn, Pattern: hr.Hatch, Values: ask}, {Name: "allow", Tone: hr.Good, Pattern: hr.Dots, Values: allow}}})
	t := hr.Table{Caption: "Every decision, oldest first", Columns: []hr.Column{{Title: "when"}, {Title: "agent"}, {Title: "tool"}, {Title: "decision"},
		{Title: "labels", Wrap: true}, {Title: "role"}, {Title: "presence"}, {Title: "reason", Wrap: true}}}
	for _, g := range f.Gate {
		t.Rows = append(t.Rows, []string{when(g.At), g.Agent, g.Tool, g.Decision.String(), strings.Join(g.Labels, "; "), g.Role, g.Presence, g.Reason})
	}
	sec.Blocks = append(sec.Blocks, hr.Table{Caption: t.Caption, Columns: t.Columns, Rows: t.Rows, Collapsed: len(t.Rows) > 20,
		Summary: "Every decision (" + strconv.Itoa(len(t.Rows)) + ")"})
	return sec
}

// changes is what each agent's calls changed in its work tree, read off
// the undo checkpoints, with the command that undoes each.
func changes(f *Fleet) hr.Section {
	sec := hr.Section{ID: "changes", Title: "What the calls changed",
		Intro: "Each call that changed an agent's work tree (files added, modified or deleted, named data, refs, the stash, the staged changes), read off the undo checkpoint taken before it and the next, with the command that goes back to before it. A loss is a call that deleted or overwrote more than the project policy lets go unreported."}
	t := hr.Table{Caption: "Every call that changed something, oldest first", Columns: []hr.Column{{Title: "when"}, {Title: "agent"},
		{Title: "call"}, {Title: "what", Wrap: true}, {Title: "changed", Wrap: true}, {Title: "loss", Wrap: true}, {Title: "undo", Wrap: true}}}
	for _, c := range latestChangesAll(f.Agents) {
		t.Rows = append(t.Rows, []string{when(c.At), c.Agent, c.Call, strings.TrimSpace(c.Tool + " " + text.Clip(text.OneLine(c.What), 120)), c.Changed, c.Loss, c.Undo})
	}
	if len(t.Rows) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "No call changed a work tree, or its undo checkpoints are not on this machine."})
		return sec
	}
	t.Collapsed, t.Summary = len(t.Rows) > 20, "Every change ("+strconv.Itoa(len(t.Rows))+")"
	sec.Blocks = append(sec.Blocks, t)
	return sec
}

func supervisor(f *Fleet) hr.Section {
	sec := hr.Section{ID: "supervisor", Title: "Halts, escalations and the journal"}
	switch f.Journal.State {
	case JournalVerified:
		sec.Blocks = append(sec.Blocks, hr.Note{Kind: hr.Fine, Text: fmt.Sprintf("The supervisor journal verifies: %s, every hash chained to the one before.", text.Plural(f.Journal.Records, "record"))})
	case JournalBroken:
		sec.Blocks = append(sec.Blocks, hr.Note{Kind: hr.Warning, Text: fmt.Sprintf("The supervisor journal does NOT verify: record %d of %d is bad — %s. Nothing after it can be trusted.", f.Journal.FirstBad, f.Journal.Records, f.Journal.Problem)})
	default:
		txt := "the supervisor journal"
		if f.Journal.Problem != "" {
			txt += ": " + f.Journal.Problem
		}
		sec.Blocks = append(sec.Blocks, hr.Note{Kind: hr.Pending, Text: txt})
	}
	if len(f.Halts) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "No halts recorded."})
	} else {
		t := hr.Table{Caption: "Halts", Columns: []hr.Column{{Title: "agent"}, {Title: "halted"}, {Title: "reason", Wrap: true}, {Title: "released"}, {Title: "release reason", Wrap: true}}}
		for _, h := range f.Halts {
			rel := "standing"
			if !h.Released.IsZero() {
				rel = when(h.Released)
			}
			t.Rows = append(t.Rows, []string{h.Agent, when(h.At), h.Reason, rel, h.ReleaseReason})
		}
		sec.Blocks = append(sec.Blocks, t)
	}
	if len(f.Escalations) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "No escalations recorded."})
	} else {
		t := hr.Table{Caption: "Escalations", Columns: []hr.Column{{Title: "when"}, {Title: "who"}, {Title: "why", Wrap: true}, {Title: "--on-escalate exit", Numeric: true}}}
		for _, e := range f.Escalations {
			st := "—"
			if e.ExitStatus != nil {
				st = strconv.Itoa(*e.ExitStatus)
			}
			t.Rows = append(t.Rows, []string{when(e.At), e.Who, e.Why, st})
		}
		sec.Blocks = append(sec.Blocks, t)
	}
	return sec
}

func sessions(f *Fleet) hr.Section {
	sec := hr.Section{ID: "ponder", Title: "ponder sessions",
		Intro: "Each session's passes against Rule 6's thresholds, its verdicts, and its churn forecasts (surprise)."}
	if len(f.Sessions) == 0 {
		sec.Blocks = append(sec.Blocks, hr.Note{Text: "No ponder session in this repository."})
	}
	for _, s := range f.Sessions {
		sec.Blocks = append(sec.Blocks, hr.Heading{ID: "ponder-" + s.Slug, Text: s.Slug + ": " + s.Subject})
		sec.Blocks = append(sec.Blocks, preport.Blocks(s, "ponder-"+s.Slug)...)
	}
	return sec
}

func sources(f *Fleet) hr.Section {
	t := hr.Table{Caption: "Where each panel's data comes from", Columns: []hr.Column{{Title: "panel"}, {Title: "state"}, {Title: "source", Wrap: true}}}
	for _, s := range f.Sources {
		st := "shown"
		if !s.Fed {
			st = "not available yet"
		}
		t.Rows = append(t.Rows, []string{s.Panel, st, s.From})
	}
	return hr.Section{ID: "sources", Title: "Data sources", Blocks: []hr.Block{t}}
}

// spendingTones tell agents' lines apart; dashes do too past their count.
var spendingTones = [...]hr.Tone{hr.Info, hr.Warn, hr.Meta, hr.Good, hr.Bad, hr.Neutral}

// SpendingTimeline draws agent runs' tokens over time, from the model
// requests their clients reported: one line per run, the running total
// after each request (the cost so far beside it). ok is false when no
// client reported any.
func SpendingTimeline(agents []*Agent) (tl hr.Timeline, ok bool) {
	var t0 time.Time
	for _, a := range agents {
		if sp := a.Spending; len(sp) > 0 && (t0.IsZero() || sp[0].At.Before(t0)) {
			t0 = sp[0].At
		}
	}
	if t0.IsZero() {
		return tl, false
	}
	tl = hr.Timeline{ID: "tokens", Title: "Tokens over time",
		Desc:   "Each agent run's model tokens (input, output and cache) after each model request its client reported, from the first such request.",
		XLabel: "seconds since the first model request", YLabel: "tokens", YInteger: true, Legend: true, Width: 640, Height: 220}
	for _, a := range agents {
		if len(a.Spending) == 0 {
			continue
		}
		n := len(tl.Series)
		ser := hr.Series{Name: a.Name, Tone: spendingTones[n%len(spendingTones)], Step: true, Dots: len(a.Spending) <= 40}
		if n >= len(spendingTones) {
			ser.Dash = hr.Dashed
		}
		for _, s := range a.Spending {
			p := hr.Point{X: s.At.Sub(t0).Seconds(), Y: float64(s.Tokens), XText: s.At.UTC().Format("15:04:05")}
			if s.CostUSD > 0 {
				p.Note = fleet.USD(s.CostUSD) + " so far"
			}
			ser.Points = append(ser.Points, p)
		}
		tl.Series = append(tl.Series, ser)
	}
	return tl, true
}

// spendingSection is the fleet's SpendingTimeline as a section of the
// report.
func spendingSection(f *Fleet) (hr.Section, bool) {
	tl, ok := SpendingTimeline(agentOrder(f.Agents))
	if !ok {
		return hr.Section{}, false
	}
	return hr.Section{ID: "tokens", Title: "Tokens and cost over time",
		Intro:  "What each agent run spent as its client reported it, request by request; the table gives the cost so far where the client reported one.",
		Blocks: []hr.Block{tl}}, true
}
