package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sort"

	"github.com/laserkit/laserkit/grammar"
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
// distance) and the free text the claims marker reads.
func stateProps() map[string]any {
	return map[string]any{
		"goal":     prop("string", "What you are working on, in your own words."),
		"progress": progressProp,
		"distance": prop("number", "How far from done, 0-10. 0 means finished."),
		"doing":    prop("string", "What this step does (read for claims, never measured)."),
		"next":     prop("string", "The single next action."),
		"blocked":  prop("string", "What blocks you."),
	}
}

func def(name, desc string, input json.RawMessage, fn func(context.Context, args) (any, error)) toolDef {
	return toolDef{Name: name, Description: desc, InputSchema: input, fn: fn}
}

// instrumentTools are the reference's eleven tools, in its order, then
// ours.
func (s *Server) instrumentTools() []toolDef {
	modulateProps := stateProps()
	modulateProps["team"] = prop("string", "A recursion-team preset name.")
	modulateProps["role"] = prop("string", "Which role this agent is playing.")
	kindProp := map[string]any{"type": "string", "enum": []string{"workflow", "team"}, "description": "Default workflow."}
	return []toolDef{
		def("check_state", "Spell where you are. The FIRST call freezes the ground — every later reading is measured against it. "+
			"Call it each step. Returns one of nine verdicts, Φ, and what to do. While the run drifts, irreversible or outward commands are refused.",
			schema(stateProps(), "goal"), s.checkState),
		def("modulate", "check_state, plus whether THIS role returns on THIS drift and the wording to return with. "+
			"Pass team + role for a recursion-team preset; without them every drift returns, unstyled.",
			schema(modulateProps, "goal"), s.modulate),
		def("reset_task", "Start a genuinely new task: the current ground is set aside and your next check_state sets a fresh one. "+
			"Use when the user redirects you — NOT to escape a drift verdict.",
			schema(map[string]any{}), s.resetTask),
		def("get_history", "The checks spelled so far on this task, and how many were drifting.",
			schema(map[string]any{"limit": prop("number", "Default 20.")}), s.getHistory),
		def("similarity", "Token overlap between two statements under the normaliser the instrument uses: are two goals the same goal?",
			schema(map[string]any{"a": prop("string", ""), "b": prop("string", "")}, "a", "b"), s.similarity),
		def("laserscore", "The compact one-line reading of a state, without setting or touching a ground.",
			schema(map[string]any{"goal": prop("string", ""), "progress": prop("string", ""), "distance": prop("number", "")}, "goal"), s.laserscore),
		def("capabilities", "What this server can do; everything here runs locally, offline.",
			schema(map[string]any{}), s.capabilities),
		def("store_list", "Every method on the shelf (the task workflows laserbrain ships, and yours in ~/.laserbrain/workflows) or the recursion-team presets. Names only.",
			schema(map[string]any{"kind": kindProp}), s.storeList),
		def("store_find", "Which stored method is FOR a task, in your own words — ranked by what it does, not by name.",
			schema(map[string]any{"task": prop("string", "What you need done, in words."), "kind": kindProp,
				"top": prop("number", "Default 3.")}, "task"), s.storeFind),
		def("store_vend", "The raw spec of one stored method or team preset: data only, nothing here can execute.",
			schema(map[string]any{"name": prop("string", ""), "kind": kindProp}, "name"), s.storeVend),
		def("read_text", "Read the shape of a text — circling, connected, loose, or too short to say — from its lexical variety. Offline.",
			schema(map[string]any{"text": prop("string", "The text to read."),
				"connectivity": prop("number", "Spectral connectivity 0-1, if you have it. Optional.")}, "text"), s.readText),
		def("judge_run", "The whole-run judgment (phronesis) of your run: continue, finish, narrow, abandon, wrong-problem, repeating, ... with why and what to do.",
			schema(map[string]any{}), s.judgeRun),
		def("classify", "Would the operator gate let this shell command through? Reversibility, reach, the findings and the hook's decision.",
			schema(map[string]any{"command": prop("string", "The shell command."),
				"irreversible": prop("boolean", "Declare it irreversible."), "outward": prop("boolean", "Declare it outward.")}, "command"), s.classify),
		def("link_read", "Read the shared link: what the agents on this machine (and the supervisor) wrote, newest last. Filter by agent or kind.",
			schema(map[string]any{"limit": prop("number", "Default 20."), "agent": prop("string", "Only this agent's records."),
				"kind": prop("string", "Only records of this kind (supercode writes \"supervision\").")}), s.linkRead),
		def("link_write", "Write one record to the shared link, as you (LASERBRAIN_AGENT, or your run's agent): a handoff, a note, a claim on a piece of work.",
			schema(map[string]any{"text": prop("string", "What the other agents should read."), "kind": prop("string", "Default \"note\"."),
				"goal": prop("string", "The goal you are working on."), "payload": map[string]any{"description": "Any JSON value to carry with it."}}, "text"), s.linkWrite),
		def("supervision", "The supervisor's reading of your repository, now: every agent and ponder session, who shares a ground with whom (with the files both touched), who should yield, the halts in force, and your own row — your verdict, your advice, your halt. Read-only.",
			schema(map[string]any{}), s.supervision),
		def("lint", "Lint a workflow method (spec_version 1: goal and steps) against the grammar's dictionary and shape rules, or a shipped one by name.",
			schema(map[string]any{"method": prop("object", "A method spec."), "name": prop("string", "A shipped method's name.")}), s.lint),
	}
}

func (s *Server) capabilities(ctx context.Context, _ args) (any, error) {
	var names []string
	for _, t := range s.tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return map[string]any{
		"version":          Version(),
		"server":           Name + " (laserkit " + Version() + ")",
		"grammar":          laserbrain.GrammarVersion,
		"transport":        "stdio (JSON-RPC, newline-delimited)",
		"offline":          true,
		"account_required": false,
		"local_tools":      names,
		"note":             "Every tool is a local computation over your run's stored state; nothing here calls a network.",
	}, nil
}

// readText reads the shape of a text as the reference's read_text does:
// text is the argument or "" when it is missing or falsy (a value that is
// neither text nor falsy is refused), connectivity float() of the argument,
// 0 when it is missing, falsy or not a number.
func (s *Server) readText(ctx context.Context, a args) (any, error) {
	tv, _, err := a.get("text")
	if err != nil {
		return nil, err
	}
	text := ""
	if laserbrain.PyTruthy(tv) {
		if tv.Kind != grammar.String {
			return nil, badf("text must be a string, not %s", describe(tv))
		}
		text = tv.Str
	}
	conn := 0.0
	if cv, ok, _ := a.get("connectivity"); ok && laserbrain.PyTruthy(cv) {
		if f, ok := laserbrain.PyFloatValue(cv); ok {
			conn = f
		}
	}
	if math.IsInf(conn, 0) || math.IsNaN(conn) {
		return nil, badf("connectivity must be a finite number from 0 to 1")
	}
	return laserbrain.ReadText(text, conn), nil
}

// The shelf: the methods laserbrain ships and the user's own
// (method.Shelf), and the recursion-team presets. The three tools read
// their arguments as the reference's do: kind is "team" or else the
// methods, a blank task or name is answered with an "error" (not an error
// result), an unknown name with the reference's message.

func (s *Server) storeList(ctx context.Context, a args) (any, error) {
	kind, err := a.pystr("kind", "workflow")
	if err != nil {
		return nil, err
	}
	if kind == "team" {
		names := laserbrain.Presets()
		sort.Strings(names)
		return map[string]any{"kind": "team", "names": names}, nil
	}
	names, err := s.shelf.Names()
	if err != nil {
		return nil, err
	}
	return map[string]any{"kind": "workflow", "names": names}, nil
}

// storeFind ranks the shelf (or the presets) for a task; top is int(top),
// the rows a Python slice [:top] keeps (0: none; negative: all but the
// last).
func (s *Server) storeFind(ctx context.Context, a args) (any, error) {
	task, err := a.pystr("task", "")
	if err != nil {
		return nil, err
	}
	if laserbrain.PyStrip(task) == "" {
		return map[string]any{"error": "store_find needs a task, in words, to match against"}, nil
	}
	task = laserbrain.PyStrip(task)
	kind, err := a.pystr("kind", "workflow")
	if err != nil {
		return nil, err
	}
	top, err := a.pyint("top", 3)
	if err != nil {
		return nil, err
	}
	if kind == "team" {
		rows := laserbrain.FindTeams(task)
		return map[string]any{"kind": "team", "matches": rows[:pySliceEnd(top, len(rows))]}, nil
	}
	rows, err := s.shelf.Find(task)
	if err != nil {
		return nil, err
	}
	return map[string]any{"kind": "workflow", "matches": rows[:pySliceEnd(top, len(rows))]}, nil
}

// pySliceEnd is where Python's xs[:i] ends for a list of n.
func pySliceEnd(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

func (s *Server) storeVend(ctx context.Context, a args) (any, error) {
	name, err := a.pystr("name", "")
	if err != nil {
		return nil, err
	}
	name = laserbrain.PyStrip(name)
	if name == "" {
		return map[string]any{"error": "store_vend needs a name — see store_list or store_find"}, nil
	}
	kind, err := a.pystr("kind", "workflow")
	if err != nil {
		return nil, err
	}
	// The reference answers an unknown name with str() of its KeyError,
	// which quotes the message: the error text is a Python repr.
	if kind == "team" {
		p, err := laserbrain.VendTeam(name)
		if err != nil {
			return map[string]any{"error": laserbrain.PyRepr(err.Error())}, nil
		}
		return map[string]any{"kind": "team", "spec": p}, nil
	}
	spec, err := s.shelf.Vend(name)
	var ns *method.NotShelvedError
	if errors.As(err, &ns) {
		return map[string]any{"error": laserbrain.PyRepr(ns.Error())}, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"kind": "workflow", "spec": spec}, nil
}
