package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Summary is the fleet in a terminal's few screens: what `laserbrain
// report` prints without --html (and, as JSON, with --json). It is drawn
// from the same view model as the page.
type Summary struct {
	Fleet     string    `json:"fleet"`
	Repo      string    `json:"repo"`
	Generated time.Time `json:"generated"`
	// Waiting are the agents waiting for a person, longest first.
	Waiting     []SummaryAgent `json:"waiting"`
	Agents      []SummaryAgent `json:"agents"`
	Collisions  []Collision    `json:"collisions"`
	Gate        GateTally      `json:"gate"`
	Halts       []Halt         `json:"halts"`
	Escalations []Escalation   `json:"escalations"`
	Journal     Journal        `json:"journal"`
	Sessions    int            `json:"sessions"`
	Denials     []GateDecision `json:"denials"`
	// Changes are the latest calls that changed a work tree, each with
	// the command that undoes it, oldest first.
	Changes []SummaryChange `json:"changes"`
	Unfed   []string        `json:"unfed"`
}

// SummaryChange is one agent's call that changed its work tree.
type SummaryChange struct {
	Agent string `json:"agent"`
	CallChange
}

// maxChanges is how many of the latest changes a summary lists.
const maxChanges = 10

// SummaryAgent is one agent's line.
type SummaryAgent struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Client   string   `json:"client"`
	Status   string   `json:"status"`
	Ground   string   `json:"ground"`
	Steps    int      `json:"steps"`
	Verdict  string   `json:"verdict"`
	Phi      *float64 `json:"phi"`
	Drifting bool     `json:"drifting"`
	// Coverage is the share of the run's tool calls checked (nil when it
	// made none, or for a ponder session).
	Coverage  *float64    `json:"coverage"`
	ToolCalls int         `json:"toolCalls"`
	LastTool  *ToolCall   `json:"lastTool,omitempty"`
	LastEvent time.Time   `json:"lastEvent,omitzero"`
	Waiting   *fleet.Wait `json:"waiting,omitempty"`
	Halt      string      `json:"halt,omitempty"`
	// Tokens are the model tokens its client recorded, when read.
	Tokens *fleet.Usage `json:"tokens,omitempty"`
	// Spending is its tokens and cost over time (Agent.Spending).
	Spending []Spent `json:"spending,omitempty"`
}

// GateTally counts the gate's decisions.
type GateTally struct {
	Deny  int `json:"deny"`
	Ask   int `json:"ask"`
	Allow int `json:"allow"`
}

// maxDenials is how many of the latest denials a summary lists.
const maxDenials = 10

// Summarize reads the summary off the view model.
func Summarize(f *Fleet) Summary {
	s := Summary{Fleet: f.ID, Repo: f.Repo, Generated: f.Generated, Waiting: []SummaryAgent{}, Agents: []SummaryAgent{},
		Collisions: f.Collisions, Halts: []Halt{}, Escalations: []Escalation{}, Journal: f.Journal, Sessions: len(f.Sessions),
		Denials: []GateDecision{}, Changes: []SummaryChange{}, Unfed: []string{}}
	s.Changes = latestChanges(f.Agents)
	for _, a := range agentOrder(f.Agents) {
		row := SummaryAgent{Name: a.Name, Kind: a.Kind, Client: a.Client, Status: a.Status, Ground: a.Ground, Steps: len(a.Steps),
			LastTool: a.LastTool, LastEvent: a.LastEvent, Waiting: a.Waiting, Tokens: a.Tokens, Spending: a.Spending}
		if l := a.Last(); l != nil && !a.Unmeasured() {
			phi := l.Phi
			row.Verdict, row.Phi, row.Drifting = l.Reason, &phi, l.Drifting
		}
		if a.Unmeasured() {
			row.Verdict = StatusUnmeasured
		}
		if c := a.Coverage; c != nil {
			row.ToolCalls = c.ToolCalls
			if c.ToolCalls+c.Checks > 0 {
				cov := c.Coverage
				row.Coverage = &cov
			}
		}
		if a.Status == StatusHalted && a.Halt != nil {
			row.Halt = a.Halt.Reason
		}
		s.Agents = append(s.Agents, row)
		if a.Status == StatusWaiting {
			s.Waiting = append(s.Waiting, row)
		}
	}
	sortWaiting(s.Waiting)
	for _, g := range f.Gate {
		switch g.Decision {
		case operator.Deny:
			s.Gate.Deny++
			s.Denials = append(s.Denials, g)
		case operator.Ask:
			s.Gate.Ask++
		default:
			s.Gate.Allow++
		}
	}
	if len(s.Denials) > maxDenials {
		s.Denials = s.Denials[len(s.Denials)-maxDenials:]
	}
	for _, h := range f.Halts {
		if h.Released.IsZero() {
			s.Halts = append(s.Halts, h)
		}
	}
	for _, e := range f.Escalations {
		if !e.Answered {
			s.Escalations = append(s.Escalations, e)
		}
	}
	for _, src := range f.Sources {
		if !src.Fed {
			s.Unfed = append(s.Unfed, src.Panel)
		}
	}
	return s
}

func sortWaiting(w []SummaryAgent) {
	for i := 1; i < len(w); i++ {
		for j := i; j > 0 && w[j].Waiting.Since.Before(w[j-1].Waiting.Since); j-- {
			w[j], w[j-1] = w[j-1], w[j]
		}
	}
}

// Ago is how long before now t was, in a person's units ("—" for none).
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// Percent writes a share as a whole percentage ("—" for none).
func Percent(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.Itoa(int(*p*100+0.5)) + "%"
}

// WriteText writes the summary for a terminal: a head line, the agents
// waiting for a person, one line per agent, the collisions with the files
// both touched, the gate's decisions and its latest denials, the halts in
// force (with the command that lifts each), the latest calls that changed
// a work tree (with the command that undoes each) and the open questions. What
// agents wrote (names, grounds, commands) is printed with control
// characters escaped.
func (s Summary) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	// What agents wrote is escaped field by field; the layout's own line
	// ends and tabs stay.
	p := func(format string, a ...any) {
		for i, v := range a {
			if s, ok := v.(string); ok {
				a[i] = ponder.Printable(s)
			}
		}
		fmt.Fprintf(bw, format+"\n", a...)
	}
	now := s.Generated
	head := []string{text.Plural(len(s.Agents), "agent"), text.Plural(len(s.Collisions), "collision"), text.Plural(s.Gate.Deny, "gate denial"),
		text.Plural(len(s.Halts), "halt") + " standing", text.Plural(len(s.Escalations), "open question")}
	where := s.Repo
	if where == "" {
		where = "one run"
	}
	p("fleet %s · %s", s.Fleet, where)
	p("%s · journal %s", strings.Join(head, " · "), s.Journal.State)

	if len(s.Waiting) > 0 {
		p("\nWAITING FOR A PERSON")
		for _, a := range s.Waiting {
			p("  %s  %s for %s: %s", a.Name, a.Waiting.Kind, Ago(now, a.Waiting.Since), a.Waiting.Message)
		}
	}

	s.textAgents(bw, p)
	s.textFindings(p)
	s.textStanding(p)
	return bw.Flush()
}

// textAgents is the table of agents, and which of them are halted.
func (s Summary) textAgents(bw io.Writer, p func(format string, a ...any)) {
	now := s.Generated
	p("\nAGENTS")
	if len(s.Agents) == 0 {
		p("  none yet")
	} else {
		tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  AGENT\tCLIENT\tSTATUS\tVERDICT\tΦ\tSTEPS\tCOVERAGE\tLAST SEEN\tLAST TOOL CALL")
		for _, a := range s.Agents {
			verdict, phi := dash(a.Verdict), "—"
			if a.Phi != nil {
				phi = strconv.FormatFloat(*a.Phi, 'f', 2, 64)
			}
			if a.Drifting {
				verdict += " (drifting)"
			}
			last := "—"
			if a.LastTool != nil {
				last = text.Clip(a.LastTool.Tool+" "+a.LastTool.Text, 60)
				if a.LastTool.OK.Failed() {
					last += " (failed)"
				}
			}
			cells := []string{"  " + a.Name, dash(a.Client), a.Status, verdict, phi, strconv.Itoa(a.Steps), Percent(a.Coverage), Ago(now, a.LastEvent), last}
			for i := range cells {
				cells[i] = ponder.Printable(cells[i])
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		_ = tw.Flush()
		for _, a := range s.Agents {
			if a.Halt != "" {
				p("  %s is halted: %s", a.Name, a.Halt)
			}
		}
	}
}

// textFindings are the collisions and the gate's decisions.
func (s Summary) textFindings(p func(format string, a ...any)) {
	if len(s.Collisions) > 0 {
		p("\nCOLLISIONS (the same job; the shared files are evidence)")
		for _, c := range s.Collisions {
			files := "no file both touched"
			if n := len(c.SharedFiles); n > 0 {
				shown, more := c.SharedFiles, ""
				if n > 6 {
					shown, more = shown[:6], fmt.Sprintf(", … %d more", n-6)
				}
				files = text.Plural(n, "shared file") + ": " + strings.Join(shown, ", ") + more
			}
			p("  %s + %s  overlap %.2f · %s · %s", c.Agents[0], c.Agents[1], c.Overlap, outcomeText(c.Outcome), files)
		}
	}

	p("\nGATE  %d deny · %d ask · %d allow", s.Gate.Deny, s.Gate.Ask, s.Gate.Allow)
	for _, g := range s.Denials {
		what := g.Action
		if what == "" {
			what = g.Tool
		}
		labels := ""
		if len(g.Labels) > 0 {
			labels = " (" + strings.Join(g.Labels, "; ") + ")"
		}
		p("  deny  %s  %s  %s%s", when(g.At), g.Agent, text.Clip(what, 80), labels)
	}
}

// textStanding is what stands: the changes and how to undo them, the
// halts and how to lift them, the open questions, a journal that does not
// verify.
func (s Summary) textStanding(p func(format string, a ...any)) {
	if len(s.Changes) > 0 {
		p("\nCHANGES (the latest calls that changed a work tree; each undo goes back to before its call)")
		for _, c := range s.Changes {
			loss := ""
			if c.Loss != "" {
				loss = "LOSS: "
			}
			what := c.Call
			if c.Tool != "" {
				what += " (" + c.Tool + ": " + text.Clip(text.OneLine(c.What), 50) + ")"
			}
			p("  %s  %s  %s — %s%s", when(c.At), c.Agent, what, loss, c.Changed)
			p("    undo: %s", c.Undo)
		}
	}
	if len(s.Halts) > 0 {
		p("\nHALTS IN FORCE")
		for _, h := range s.Halts {
			p("  %s since %s: %s", h.Agent, when(h.At), h.Reason)
			p("    lift it: %s", fleet.ReleaseCommand(h.Agent))
		}
	}
	if len(s.Escalations) > 0 {
		p("\nOPEN QUESTIONS")
		for _, e := range s.Escalations {
			p("  %s  %s (%s): %s", when(e.At), e.Who, e.Kind, e.Question)
		}
	}
	if s.Journal.State == JournalBroken {
		p("\nTHE JOURNAL DOES NOT VERIFY: record %d of %d — %s", s.Journal.FirstBad, s.Journal.Records, s.Journal.Problem)
	}
	if s.Sessions > 0 {
		p("\n%s (laserbrain report --html FILE draws them)", text.Plural(s.Sessions, "ponder session"))
	}
}

// latestChanges are the agents' latest calls that changed their work
// trees, oldest first.
func latestChanges(agents []Agent) []SummaryChange {
	out := latestChangesAll(agents)
	if len(out) > maxChanges {
		out = out[len(out)-maxChanges:]
	}
	return out
}

// latestChangesAll are every agent's calls that changed their work trees,
// oldest first.
func latestChangesAll(agents []Agent) []SummaryChange {
	out := []SummaryChange{}
	for i := range agents {
		for _, c := range agents[i].Changes {
			out = append(out, SummaryChange{Agent: agents[i].Name, CallChange: c})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
