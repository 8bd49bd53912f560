package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/method"
)

// schema builds an object schema from property definitions.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

func prop(typ, desc string) map[string]any {
	p := map[string]any{"type": typ}
	if desc != "" {
		p["description"] = desc
	}
	return p
}

var progressProp = map[string]any{"type": "string", "enum": []string{"advancing", "stuck", "circling"},
	"description": `Honestly. A false "advancing" wastes the reading.`}

// stateProps are check_state's arguments: the reference's (goal, progress,
// distance) and the instrument's optional ones.
func stateProps() map[string]any {
	return map[string]any{
		"goal":        prop("string", "What you are working on, in your own words."),
		"progress":    progressProp,
		"distance":    prop("number", "How far from done, 0-10. 0 means finished."),
		"parent_goal": prop("string", "The goal this one serves, when you are on a sub-task."),
		"user_turn":   prop("boolean", "The user spoke since your last check (a new goal is then a new instruction)."),
		"reset_task":  prop("boolean", "Set the current task aside before this check: this goal starts a new ground."),
		"doing":       prop("string", "What this step does."),
		"next":        prop("string", "The single next action."),
		"blocked":     prop("string", "What blocks you."),
	}
}

// allTools are the tools this server offers (capabilities lists them): the
// instrument's, and a loop session's when it serves one.
func (s *Server) allTools() []toolDef { return append(s.tools(), s.loopTools()...) }

// tools are the instrument's tools.
func (s *Server) tools() []toolDef {
	modulateProps := stateProps()
	modulateProps["team"] = prop("string", "A recursion-team preset name.")
	modulateProps["role"] = prop("string", "Which role this agent is playing.")
	kindProp := map[string]any{"type": "string", "enum": []string{"workflow", "team"}, "description": "Default workflow."}
	return []toolDef{
		{&mcp.Tool{Name: "check_state", Description: "Spell where you are. The FIRST call freezes the ground — every later reading is measured against it. " +
			"Call it each step. Returns one of nine verdicts, Φ, and what to do. While the run drifts, irreversible or outward commands are refused.",
			InputSchema: schema(stateProps(), "goal")}, s.checkState},
		{&mcp.Tool{Name: "modulate", Description: "check_state, plus whether THIS role returns on THIS drift and the wording to return with. " +
			"Pass team + role for a recursion-team preset; without them every drift returns, unstyled.",
			InputSchema: schema(modulateProps, "goal")}, s.modulate},
		{&mcp.Tool{Name: "reset_task", Description: "Start a genuinely new task: the current ground is set aside and your next check_state sets a fresh one. " +
			"Use when the user redirects you — NOT to escape a drift verdict.",
			InputSchema: schema(map[string]any{})}, s.resetTask},
		{&mcp.Tool{Name: "get_history", Description: "The checks spelled so far on this task, and how many were drifting.",
			InputSchema: schema(map[string]any{"limit": prop("number", "Default 20.")})}, s.getHistory},
		{&mcp.Tool{Name: "similarity", Description: "Token overlap between two statements under the normaliser the instrument uses: are two goals the same goal?",
			InputSchema: schema(map[string]any{"a": prop("string", ""), "b": prop("string", "")}, "a", "b")}, s.similarity},
		{&mcp.Tool{Name: "laserscore", Description: "The compact one-line reading of a state, without setting or touching a ground.",
			InputSchema: schema(map[string]any{"goal": prop("string", ""), "progress": prop("string", ""), "distance": prop("number", ""),
				"parent_goal": prop("string", "")}, "goal")}, s.laserscore},
		{&mcp.Tool{Name: "capabilities", Description: "What this server can do; everything here runs locally, offline.",
			InputSchema: schema(map[string]any{})}, s.capabilities},
		{&mcp.Tool{Name: "read_text", Description: "Read the shape of a text — circling, connected, loose, or too short to say — from its lexical variety. Offline.",
			InputSchema: schema(map[string]any{"text": prop("string", "The text to read."),
				"connectivity": prop("number", "Spectral connectivity 0-1, if you have it. Optional.")}, "text")}, s.readText},
		{&mcp.Tool{Name: "store_list", Description: "Every method on the shelf (the task workflows laserbrain ships) or the recursion-team presets. Names only.",
			InputSchema: schema(map[string]any{"kind": kindProp})}, s.storeList},
		{&mcp.Tool{Name: "store_find", Description: "Which stored method is FOR a task, in your own words — ranked by what it does, not by name.",
			InputSchema: schema(map[string]any{"task": prop("string", "What you need done, in words."), "kind": kindProp,
				"top": prop("number", "Default 3.")}, "task")}, s.storeFind},
		{&mcp.Tool{Name: "store_vend", Description: "The raw spec of one stored method or team preset: data only, nothing here can execute.",
			InputSchema: schema(map[string]any{"name": prop("string", ""), "kind": kindProp}, "name")}, s.storeVend},
		{&mcp.Tool{Name: "judge_run", Description: "The whole-run judgment (phronesis) of your run: continue, finish, narrow, abandon, wrong-problem, repeating, ... with why and what to do.",
			InputSchema: schema(map[string]any{})}, s.judgeRun},
		{&mcp.Tool{Name: "classify", Description: "Would the operator gate let this shell command through? Reversibility, reach, the findings and the hook's decision.",
			InputSchema: schema(map[string]any{"command": prop("string", "The shell command."),
				"irreversible": prop("boolean", "Declare it irreversible."), "outward": prop("boolean", "Declare it outward.")}, "command")}, s.classify},
		{&mcp.Tool{Name: "link_read", Description: "Read the shared link: what the agents on this machine (and the supervisor) wrote, newest last. Filter by agent or kind.",
			InputSchema: schema(map[string]any{"limit": prop("number", "Default 20."), "agent": prop("string", "Only this agent's records."),
				"kind": prop("string", "Only records of this kind (supercode writes \"supervision\").")})}, s.linkRead},
		{&mcp.Tool{Name: "link_write", Description: "Write one record to the shared link, as you (LASERBRAIN_AGENT, or your run's agent): a handoff, a note, a claim on a piece of work.",
			InputSchema: schema(map[string]any{"text": prop("string", "What the other agents should read."), "kind": prop("string", "Default \"note\"."),
				"goal": prop("string", "The goal you are working on."), "payload": map[string]any{"description": "Any JSON value to carry with it."}}, "text")}, s.linkWrite},
		{&mcp.Tool{Name: "supervision", Description: "The supervisor's reading of your repository, now: every agent and ponder session, who shares a ground with whom (with the files both touched), who should yield, the halts in force, and your own row — your verdict, your advice, your halt. Read-only.",
			InputSchema: schema(map[string]any{})}, s.supervision},
		{&mcp.Tool{Name: "lint", Description: "Lint a workflow method (spec_version 1: goal and steps) against the grammar's dictionary and shape rules, or a shipped one by name.",
			InputSchema: schema(map[string]any{"method": prop("object", "A method spec."), "name": prop("string", "A shipped method's name.")})}, s.lint},
	}
}

func (s *Server) capabilities(ctx context.Context, a args) (any, error) {
	var names []string
	for _, t := range s.allTools() {
		names = append(names, t.tool.Name)
	}
	sort.Strings(names)
	return map[string]any{
		"server":           Name + " (laserkit " + Version() + ")",
		"grammar":          grammarVersion(),
		"transport":        "stdio (MCP, newline-delimited JSON-RPC)",
		"offline":          true,
		"account_required": false,
		"local_tools":      names,
		"note":             "Every tool is a local computation over your run's stored state; nothing here calls a network.",
	}, nil
}

func grammarVersion() string { return laserbrain.GrammarVersion }

// Reading the shape of a text (the reference's reading.py, from its stated
// rules): content words are [a-z']+ runs of the lowercased text, less a
// stopword list and words of three letters or fewer; variety is distinct
// over all content words (1.0 for none). Under 12 words is short; variety
// under 0.55 is circling; else connectivity over 0.7 is connected; else loose.
var (
	readingWord      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-z']+`) })
	readingStopwords = map[string]bool{}
)

const (
	circlingVariety = 0.55
	shortWords      = 12
)

func init() {
	for _, w := range strings.Fields(`the a an and or but in on at to of is are it i my me that this so for be was were has have had not
		no do does did if then than they them their you your we our he she his her as with by from about into more most
		some any all can will would should could been being which when where what how why there here`) {
		readingStopwords[w] = true
	}
}

// pyLowerForReading lowercases as Python's str.lower does where it matters
// to an ASCII word pattern: U+0130 becomes "i" plus a combining dot.
func pyLowerForReading(s string) string {
	if !strings.ContainsRune(s, '\u0130') {
		return strings.ToLower(s)
	}
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

func (s *Server) readText(ctx context.Context, a args) (any, error) {
	text, err := a.str("text")
	if err != nil {
		return nil, err
	}
	conn := 0.0
	if a.has("connectivity") {
		if json.Unmarshal(a["connectivity"], &conn) != nil {
			return nil, badf("connectivity must be a number from 0 to 1")
		}
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	words := readingWord().FindAllString(pyLowerForReading(text), -1)
	var content []string
	distinct := map[string]bool{}
	for _, w := range words {
		if !readingStopwords[w] && len(w) > 2 {
			content = append(content, w)
			distinct[w] = true
		}
	}
	variety := 1.0
	if len(content) > 0 {
		variety = float64(len(distinct)) / float64(len(content))
	}
	shape := "loose"
	switch {
	case len(words) < shortWords:
		shape = "short"
	case variety < circlingVariety:
		shape = "circling"
	case conn > 0.7:
		shape = "connected"
	}
	return map[string]any{"words": len(words), "variety": round4(variety), "connectivity": conn, "shape": shape,
		"circling": variety < circlingVariety && len(words) >= shortWords}, nil
}

// The shelf: the methods laserbrain ships and the grammar's team presets.

func shelfKind(a args) (string, error) {
	k, err := a.str("kind")
	if err != nil {
		return "", err
	}
	switch k {
	case "", "workflow":
		return "workflow", nil
	case "team":
		return "team", nil
	}
	return "", badf("kind must be workflow or team, not %q", k)
}

func (s *Server) storeList(ctx context.Context, a args) (any, error) {
	kind, err := shelfKind(a)
	if err != nil {
		return nil, err
	}
	if kind == "team" {
		return map[string]any{"kind": kind, "names": sortedCopy(laserbrain.Presets())}, nil
	}
	_, names := method.Shipped()
	return map[string]any{"kind": kind, "names": names}, nil
}

// union is the sorted, duplicate-free union of token sets.
func union(sets ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, set := range sets {
		for _, t := range set {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}

// storeFind ranks the shelf against a task: 0.7 × overlap with a method's
// goal (a team's task) + 0.3 × overlap with its step goals and names (a
// team's role names), best first, zero scores left out.
func (s *Server) storeFind(ctx context.Context, a args) (any, error) {
	task, err := a.str("task")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(task) == "" {
		return nil, badf("store_find needs a task, in words, to match against")
	}
	kind, err := shelfKind(a)
	if err != nil {
		return nil, err
	}
	top, err := a.integer("top", 3, 1, 1000)
	if err != nil {
		return nil, err
	}
	want := laserbrain.Norm(task)
	type row struct {
		score float64
		m     map[string]any
	}
	var rows []row
	if kind == "team" {
		for _, p := range laserbrain.TeamPresets() {
			var roleWords [][]string
			var roles []string
			for _, r := range p.Roles {
				roleWords = append(roleWords, laserbrain.Norm(r.Role))
				roles = append(roles, r.Role)
			}
			sc := 0.7*laserbrain.Overlap(want, laserbrain.Norm(p.Task)) + 0.3*laserbrain.Overlap(want, union(roleWords...))
			if sc > 0 {
				rows = append(rows, row{sc, map[string]any{"name": p.Name, "score": roundN(sc, 3), "task": p.Task, "roles": roles}})
			}
		}
	} else {
		methods, names := method.Shipped()
		for _, n := range names {
			m := methods[n]
			var stepWords [][]string
			gated := []string{}
			for _, st := range m.Steps {
				stepWords = append(stepWords, laserbrain.Norm(st.Goal), laserbrain.Norm(st.Name))
				if st.Irreversible || st.Outward {
					gated = append(gated, st.Name)
				}
			}
			sc := 0.7*laserbrain.Overlap(want, laserbrain.Norm(m.Goal)) + 0.3*laserbrain.Overlap(want, union(stepWords...))
			if sc > 0 {
				rows = append(rows, row{sc, map[string]any{"name": n, "score": roundN(sc, 3), "goal": m.Goal, "steps": len(m.Steps), "gated": gated, "shipped": true}})
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].score > rows[j].score })
	matches := []map[string]any{}
	for i := 0; i < len(rows) && i < top; i++ {
		matches = append(matches, rows[i].m)
	}
	return map[string]any{"kind": kind, "matches": matches}, nil
}

func (s *Server) storeVend(ctx context.Context, a args) (any, error) {
	name, err := a.str("name")
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, badf("store_vend needs a name — see store_list or store_find")
	}
	kind, err := shelfKind(a)
	if err != nil {
		return nil, err
	}
	if kind == "team" {
		for _, p := range laserbrain.TeamPresets() {
			if p.Name == name {
				return map[string]any{"kind": kind, "spec": p}, nil
			}
		}
		return nil, badf("no team preset %q — have %s", name, strings.Join(sortedCopy(laserbrain.Presets()), ", "))
	}
	methods, names := method.Shipped()
	m, ok := methods[name]
	if !ok {
		return nil, badf("no workflow %q — have %s", name, strings.Join(names, ", "))
	}
	return map[string]any{"kind": kind, "spec": m}, nil
}
