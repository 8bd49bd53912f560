package report

import (
	"sort"
	"strconv"
	"strings"
	"time"

	hr "github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// CallTokens is what one tool call cost: the tokens of the model
// response that asked for it (shared with the other calls it asked for at
// once), made at At, the call's tool named.
type CallTokens struct {
	At   time.Time `json:"at"`
	Tool string    `json:"tool,omitempty"`
	fleet.CallUsage
}

// CallTokensOf reads what each tool call of a run cost from its events,
// in the order the responses were made.
func CallTokensOf(events []fleet.RunEvent) []CallTokens {
	var out []CallTokens
	tools := map[string]string{}
	for _, e := range events {
		switch e.Kind {
		case fleet.KindTool, fleet.KindOwn, fleet.KindGate:
			if _, id, ok := strings.Cut(e.ID, ":"); ok && id != "" && e.Name != "" {
				tools[id] = e.Name
			}
		}
	}
	for _, e := range events {
		if e.Kind != fleet.KindCallTokens {
			continue
		}
		for _, cu := range fleet.CallTokens([]fleet.RunEvent{e}) {
			out = append(out, CallTokens{At: e.At, Tool: tools[cu.Call], CallUsage: cu})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// CallTokensTable is the table of what the agents' tool calls cost,
// oldest first within each agent; named, each row names its agent.
func CallTokensTable(agents []*Agent, named bool) hr.Table {
	cols := []hr.Column{{Title: "when"}}
	if named {
		cols = append(cols, hr.Column{Title: "agent"})
	}
	t := hr.Table{Caption: "Every call whose response's tokens are known, oldest first", Columns: append(cols, hr.Column{Title: "call"},
		hr.Column{Title: "tool"}, hr.Column{Title: "tokens", Numeric: true}, hr.Column{Title: "input", Numeric: true},
		hr.Column{Title: "output", Numeric: true}, hr.Column{Title: "cache read", Numeric: true}, hr.Column{Title: "cache write", Numeric: true},
		hr.Column{Title: "asked with", Numeric: true})}
	for _, a := range agents {
		for _, c := range a.CallTokens {
			row := []string{when(c.At)}
			if named {
				row = append(row, a.Name)
			}
			t.Rows = append(t.Rows, append(row, c.Call, c.Tool, strconv.FormatInt(c.Total(), 10), strconv.FormatInt(c.Input, 10),
				strconv.FormatInt(c.Output, 10), strconv.FormatInt(c.CacheRead, 10), strconv.FormatInt(c.CacheWrite, 10), strconv.Itoa(c.Shared-1)))
		}
	}
	t.Collapsed, t.Summary = len(t.Rows) > 20, "Every call ("+strconv.Itoa(len(t.Rows))+")"
	return t
}

// callTokensSection is what each agent's tool calls cost, where the
// agent's client recorded which response asked for which call.
func callTokensSection(f *Fleet) (hr.Section, bool) {
	var agents []*Agent
	for _, a := range agentOrder(f.Agents) {
		if len(a.CallTokens) > 0 {
			agents = append(agents, a)
		}
	}
	if len(agents) == 0 {
		return hr.Section{}, false
	}
	t := CallTokensTable(agents, true)
	return hr.Section{ID: "call-tokens", Title: "Tokens per tool call",
		Intro:  "What each tool call cost: the tokens of the model response that asked for it, as the agent's client recorded it (Claude Code's transcript, Codex's rollout). A response that asked for several calls at once is shared by them: 'asked with' counts the others, and each row shows the whole response.",
		Blocks: []hr.Block{t}}, true
}
