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

// callTokensSection is what each agent's tool calls cost, where the
// agent's client recorded which response asked for which call.
func callTokensSection(f *Fleet) (hr.Section, bool) {
	t := hr.Table{Caption: "Every call whose response's tokens are known, oldest first", Columns: []hr.Column{{Title: "when"},
		{Title: "agent"}, {Title: "call"}, {Title: "tool"}, {Title: "tokens", Numeric: true}, {Title: "input", Numeric: true},
		{Title: "output", Numeric: true}, {Title: "cache read", Numeric: true}, {Title: "cache write", Numeric: true}, {Title: "asked with", Numeric: true}}}
	for _, a := range agentOrder(f.Agents) {
		for _, c := range a.CallTokens {
			t.Rows = append(t.Rows, []string{when(c.At), a.Name, c.Call, c.Tool, strconv.FormatInt(c.Total(), 10), strconv.FormatInt(c.Input, 10),
				strconv.FormatInt(c.Output, 10), strconv.FormatInt(c.CacheRead, 10), strconv.FormatInt(c.CacheWrite, 10), strconv.Itoa(c.Shared - 1)})
		}
	}
	if len(t.Rows) == 0 {
		return hr.Section{}, false
	}
	t.Collapsed, t.Summary = len(t.Rows) > 20, "Every call ("+strconv.Itoa(len(t.Rows))+")"
	return hr.Section{ID: "call-tokens", Title: "Tokens per tool call",
		Intro:  "What each tool call cost: the tokens of the model response that asked for it, as the agent's client recorded it (Claude Code's transcript, Codex's rollout). A response that asked for several calls at once is shared by them: 'asked with' counts the others, and each row shows the whole response.",
		Blocks: []hr.Block{t}}, true
}
