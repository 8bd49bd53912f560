package coverage

import (
	"encoding/json"
	"strings"

	"github.com/laserkit/laserkit/grammar"
)

// Outcome is what an observed event did: the record after it, and what
// the model is to be told.
type Outcome struct {
	// Record is the record after the event (nil while the session has
	// none); Changed says it must be saved.
	Record  *Record
	Changed bool
	// Context is additional context for the model ("" for none): a
	// reminder, the reference's extras.
	Context string
	// Block holds a Stop back once with this reason (our mode; the
	// reference says its Stop warning as Context).
	Block string
	// UserTurn: a person spoke (a prompt), so the next check is a user turn.
	UserTurn bool
}

// Observe takes in an event other than pre-tool-use: a tool call's
// outcome counts a step (a check_state call a check, a reset_task closes
// the task), a prompt may ground the record, a Stop may be warned or held.
func (c Config) Observe(in Input) Outcome {
	switch c.Mode {
	case Reference:
		return c.refObserve(in)
	case On:
		return c.onObserve(in)
	}
	return Outcome{Record: in.Record}
}

// NeedsTokens reports whether Observe keeps the session's token count for
// this event (HookEvent.Tokens, read from the transcript): only a check does.
func (c Config) NeedsTokens(ev HookEvent) bool {
	switch c.Mode {
	case Reference:
		return !isStop(ev.Name) && normalise(&ev).kind == refCheck
	case On:
		return ev.Own == CheckState
	}
	return false
}

// CheckInput is a check as the agent spelled it, arriving by a route that
// is not a tool call the hooks see: `laserbrain check` (keyed by
// LASERBRAIN_RUN, once or --stream) or a loop step.
type CheckInput struct {
	Goal, Progress string
	Distance       json.RawMessage
	// Reason is the verdict's reason.
	Reason string
	Tokens *int
}

// Checked counts a check that came by another route than a check_state
// tool call (whose post-tool-use Observe counts). The record is created
// when the session has none, and stamped with the agent while it is not
// known.
func (c Config) Checked(rec *Record, agent string, in CheckInput) *Record {
	if c.Mode == Off {
		return rec
	}
	return c.count(loaded(rec, agent), in)
}

// Count is Checked on a record the caller owns and keeps counting on (a
// batch of checks): rec itself is changed and returned, a new one when
// nil, so a batch does not copy the record (every check since its task
// began) once per check.
func (c Config) Count(rec *Record, agent string, in CheckInput) *Record {
	if c.Mode == Off {
		return rec
	}
	return c.count(stamped(rec, agent), in)
}

func (c Config) count(r *Record, in CheckInput) *Record {
	reason := in.Reason
	if reason == "" {
		reason = "no-reading"
	}
	dist := in.Distance
	if len(dist) == 0 {
		dist = json.RawMessage("null")
	}
	r.check(Check{Goal: cut(in.Goal, 400), Progress: in.Progress, Distance: dist, Reason: reason, Tokens: in.Tokens}, in.Goal)
	return r
}

// check appends a check row as the next step; a record without a ground
// takes the check's goal (and is no longer waiting on a reset's ground).
func (r *Record) check(row Check, goal string) {
	r.Steps++
	row.Step = r.Steps
	r.Checks = append(r.Checks, row)
	if r.Goal == "" && pyStrip(goal) != "" {
		r.Goal = cut(goal, 400)
		no := false
		r.WasReset = &no
	}
}

// reset closes the task: its steps, checks and catches become a segment
// (when it had steps) and the record starts over, waiting for the next
// check's goal as its ground.
func (r *Record) reset() {
	if r.Steps > 0 {
		r.Segments = append(r.Segments, Segment{Goal: r.Goal, Steps: r.Steps, Checks: r.Checks, Catches: r.Catches,
			EarlierChecks: r.EarlierChecks, EarlierCatches: r.EarlierCatches})
	}
	r.Steps, r.Checks, r.Catches, r.Inferred, r.Goal = 0, nil, nil, 0, ""
	r.EarlierChecks, r.EarlierCatches = 0, 0
	yes := true
	r.WasReset = &yes
}

// tool counts one tool call; a failed one (not the gate's own refusal) is
// a catch joined to the live reading.
func (r *Record) tool(name string, ok bool) {
	r.Steps++
	r.Inferred = min(r.Inferred+1, maxInferred)
	if ok {
		return
	}
	ct := Catch{Step: r.Steps, What: "failed call: " + name}
	if n := len(r.Checks); n > 0 {
		last := r.Checks[n-1]
		ct.Run, ct.RunStep = last.Run, last.RunStep
		since := r.Steps - last.Step
		ct.Since = &since
	}
	r.Catches = append(r.Catches, ct)
}

// maxInferred is how many inferred rows the reference keeps.
const maxInferred = 200

// prompt grounds a record that has no ground yet (and is not waiting on a
// reset's next check) on a groundable prompt; ok reports a change.
func (r *Record) prompt(text string) bool {
	t := cleanPrompt(text)
	if t == "" || r.Goal != "" || (r.WasReset != nil && *r.WasReset) || !groundable(t) {
		return false
	}
	r.Goal = cut(t, 400)
	return true
}

// loaded is the record as a hook holds it: the saved one, or a fresh one
// for a session without; either stamped with the agent while it is not
// known.
func loaded(rec *Record, agent string) *Record { return stamped(rec.clone(), agent) }

// stamped is r (a new record when nil) with the agent, while it is not
// known; r itself is changed.
func stamped(r *Record, agent string) *Record {
	if r == nil {
		r = &Record{}
	}
	if r.Agent == "" || r.Agent == "unknown" {
		r.Agent = agentOf(agent)
	}
	return r
}

func (c Config) refObserve(in Input) Outcome {
	ev := &in.Event
	if isStop(ev.Name) {
		if ev.Reason != "" && ev.Reason != "end_turn" {
			return Outcome{Record: in.Record}
		}
		out := Outcome{Record: in.Record}
		if since := in.Record.Since(); since >= refNudgeAfter {
			out.Context = refNudge(since, in.Record.Steps, in.Record.Coverage())
		}
		return out
	}
	r := loaded(in.Record, ev.Agent)
	out := Outcome{Record: in.Record}
	nudge := ""
	n := normalise(ev)
	switch n.kind {
	case refPrompt:
		out.Changed = r.prompt(n.text)
	case refReset:
		r.reset()
		out.Changed = true
	case refCheck:
		r.check(refCheckRow(n, ev), str(argOr(n.args, "goal", "")))
		out.Changed = true
	case refTool:
		r.tool(n.tool, n.ok || selfRefusal(n.text))
		out.Changed = true
		if since := r.Since(); since >= refNudgeAfter && since%refNudgeAfter == 0 {
			nudge = refNudge(since, r.Steps, r.Coverage())
			if readsAsReport(r.Goal) {
				nudge += "\n" + refGoalShape(r.Goal)
			}
		}
	}
	if out.Changed {
		out.Record = r
	}
	var extras []string
	name := strings.ToLower(ev.Name)
	if ev.Prompt != nil || strings.Contains(name, "prompt") || strings.Contains(strings.ReplaceAll(name, "_", ""), "userprompt") {
		out.UserTurn = true
		extras = append(extras, refLinkExtra)
	}
	if t := strings.ToLower(ev.Tool); anyIn(t, []string{"spawn_subagent", "task", "agent", "subagent"}) && !strings.Contains(t, "check_state") {
		extras = append(extras, refSubagentExtra)
	}
	if saved := out.Record; saved != nil && len(saved.Checks) >= 2 {
		a, b := value(saved.Checks[len(saved.Checks)-2].Distance), value(saved.Checks[len(saved.Checks)-1].Distance)
		if a.Kind != grammar.Null && pyEqual(a, b) && !zeroish(a) {
			extras = append(extras, refHonestyExtra)
		}
	}
	switch {
	case len(extras) > 0:
		out.Context = strings.Join(extras, "\n")
		if nudge != "" {
			out.Context += "\n" + nudge
		}
	default:
		out.Context = nudge
	}
	return out
}

// zeroish: the value is one of the reference's "done" distances (0, "0",
// 0.0 — and false, which Python counts equal to 0).
func zeroish(v grammar.Value) bool {
	if v.Kind == grammar.String {
		return v.Str == "0"
	}
	f, ok := num(v)
	return ok && f.Sign() == 0
}

// argOr is args.get(key, def).
func argOr(args grammar.Value, key, def string) grammar.Value {
	if m, ok := args.Get(key); ok {
		return *m
	}
	return grammar.Value{Kind: grammar.String, Str: def}
}

// refCheckRow is the row the reference records for a check_state call:
// what was spelled (each argument's str(); distance as given) and, when
// the response (its first 600 characters of JSON) carries a reading, the
// verdict's reason, Φ, run, step, anchoring, goal score and judgment.
func refCheckRow(n refEvent, ev *HookEvent) Check {
	dist := get(n.args, "distance")
	row := Check{
		Goal:     cut(str(argOr(n.args, "goal", "")), 400),
		Progress: str(argOr(n.args, "progress", "")),
		Distance: raw(dist),
		Reason:   "no-reading",
		Tokens:   ev.Tokens,
	}
	found, ok := reading(grammar.Value{Kind: grammar.String, Str: n.text}, 0)
	if !ok {
		return row
	}
	row.Drifting = truthy(get(found, "drifting"))
	if r := get(found, "reason"); truthy(r) {
		row.Reason = str(r)
	}
	row.Phi = rawIf(get(found, "phi"))
	if run := get(found, "run"); run.Kind != grammar.Null {
		s := str(run)
		row.Run = &s
	}
	row.RunStep = rawIf(get(found, "step"))
	row.Anchored = rawIf(get(found, "anchored"))
	row.GoalScore = rawIf(get(found, "goal_score"))
	if j := firstTruthy(get(found, "judgment"), grammar.Value{Kind: grammar.Object}); j.Kind == grammar.Object {
		if v := get(j, "verdict"); truthy(v) {
			row.Judgment = raw(v)
		}
	}
	return row
}

// raw renders a value back to JSON; rawIf leaves out a null.
func raw(v grammar.Value) json.RawMessage { return json.RawMessage(grammar.RenderLine(v)) }

func rawIf(v grammar.Value) json.RawMessage {
	if v.Kind == grammar.Null {
		return nil
	}
	return raw(v)
}

func (c Config) onObserve(in Input) Outcome {
	ev := &in.Event
	out := Outcome{Record: in.Record}
	switch {
	case isStop(ev.Name):
		if since := in.Record.Since(); c.StopAfter > 0 && since >= c.StopAfter && !ev.StopHookActive {
			out.Block = stopText(since, goalOf(in.Record), ev.checkTool())
		}
		return out
	case ev.Prompt != nil && ev.Tool == "":
		out.UserTurn = true
		r := loaded(in.Record, ev.Agent)
		if r.prompt(*ev.Prompt) {
			out.Record, out.Changed = r, true
		}
		return out
	case ev.Tool == "" || (ev.Name != PostToolUse && ev.Name != PostToolUseFailure):
		return out
	}
	r := loaded(in.Record, ev.Agent)
	switch {
	case ev.Own == CheckState:
		args := coerce(value(ev.Input))
		r.check(Check{Goal: cut(str(argOr(args, "goal", "")), 400), Progress: str(argOr(args, "progress", "")),
			Distance: raw(get(args, "distance")), Reason: "no-reading", Tokens: ev.Tokens}, str(argOr(args, "goal", "")))
	case ev.Own == ResetTask:
		r.reset()
	case ev.Kind == Own || ev.Own != "":
		// laserbrain's own tools are reporting, not work; a `laserbrain
		// check` command counts where it runs (Checked).
		return out
	default:
		ok := ev.Name != PostToolUseFailure && (!ev.OK.Failed())
		r.tool(ev.Tool, ok)
		if since := r.Since(); c.NudgeEvery > 0 && since >= c.NudgeEvery && since%c.NudgeEvery == 0 {
			out.Context = nudgeText(since, c, r.Goal, ev.checkTool())
		}
	}
	out.Record, out.Changed = r, true
	return out
}

func goalOf(r *Record) string {
	if r == nil {
		return ""
	}
	return r.Goal
}
