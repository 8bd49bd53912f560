package vectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/coverage"
)

// The coverage kind replays the reference's coverage hooks (its gate on
// pre-tool-use, its coverage hook on every other event) through the
// coverage engine in Reference mode, one case at a time, and compares
// every step's answer and what the case left behind.
//
//	{kind: "coverage", source, cases: [{in, steps, state}]}
//	in    {wiring: "install"|"full", env, sessions: {name: {sid, cwd, env, env_only?}}, link_log?}
//	steps [{op: "hook", event, session, payload, script, out?, decision?, transcript_before?}
//	       | {op: "transcript", session, append} | {op: "gate_off", on}]
//
// A hook step answers {out: {exit, stdout, stderr}, decision}, as the
// reference's process did (stdout parsed when it is JSON; a step whose
// script is null ran nothing). The state compared is the engine's: per
// session its record (goal, agent, steps, checks, catches, inferred
// progress, segments, was_reset), the probe arms logged and the coverage
// refusals logged. Left out, because no hook answer depends on them: the
// evidence counter (the MCP server's corroboration input; laserbrain keeps
// its own), the user-turn flag (the MCP server's input; our hooks mark
// the run's user turn themselves) and the blind-probe log (bookkeeping of
// an arm that is off by default and changes nothing the hooks say).
var coverageKind = &Kind{
	Name:   "coverage",
	Doc:    "the reference's coverage hooks over whole sessions: every answer, the records and logs they leave",
	Strict: true,
	Run:    runCoverage,
	Emit:   emitCoverage,
}

type covFile struct {
	Cases []covCase `json:"cases"`
}

type covCase struct {
	In    covIn           `json:"in"`
	Steps []covStep       `json:"steps"`
	State json.RawMessage `json:"state"`
	// rawIn is "in" as the file has it, for a failure's report.
	rawIn json.RawMessage
}

type covIn struct {
	Wiring   string                `json:"wiring"`
	Env      map[string]string     `json:"env"`
	Sessions map[string]covSession `json:"sessions"`
	LinkLog  []json.RawMessage     `json:"link_log"`
}

type covSession struct {
	SID     string                       `json:"sid"`
	Cwd     string                       `json:"cwd"`
	Env     map[string]string            `json:"env"`
	EnvOnly map[string]map[string]string `json:"env_only"`
}

type covStep struct {
	Op               string            `json:"op"`
	Event            string            `json:"event"`
	Session          string            `json:"session"`
	Payload          json.RawMessage   `json:"payload"`
	Script           *string           `json:"script"`
	Out              json.RawMessage   `json:"out"`
	Decision         *string           `json:"decision"`
	TranscriptBefore []json.RawMessage `json:"transcript_before"`
	Append           []json.RawMessage `json:"append"`
	On               bool              `json:"on"`
}

// covAnswer is one hook step's answer.
type covAnswer struct {
	Out      *covOut `json:"out"`
	Decision *string `json:"decision"`
}

type covOut struct {
	Exit   int    `json:"exit"`
	Stdout any    `json:"stdout"`
	Stderr string `json:"stderr"`
}

func runCoverage(f *File) ([]Outcome, error) {
	var cf covFile
	if err := json.Unmarshal(f.Raw, &cf); err != nil {
		return nil, fmt.Errorf(`"cases": %w`, err)
	}
	var raws struct {
		Cases []struct {
			In json.RawMessage `json:"in"`
		} `json:"cases"`
	}
	_ = json.Unmarshal(f.Raw, &raws)
	var out []Outcome
	for i, c := range cf.Cases {
		if i < len(raws.Cases) {
			c.rawIn = raws.Cases[i].In
		}
		out = append(out, replayCoverage(i, c)...)
	}
	return out, nil
}

// emitCoverage writes the file back with our answers: every hook step's
// out and decision, and each case's state (the parts compared).
func emitCoverage(f *File) (any, error) {
	var doc struct {
		Kind  string            `json:"kind"`
		Cases []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(f.Raw, &doc); err != nil {
		return nil, fmt.Errorf(`"cases": %w`, err)
	}
	var cf covFile
	if err := json.Unmarshal(f.Raw, &cf); err != nil {
		return nil, fmt.Errorf(`"cases": %w`, err)
	}
	cases := make([]map[string]any, len(cf.Cases))
	for i, c := range cf.Cases {
		outs := replayCoverage(i, c)
		var m map[string]any
		if err := json.Unmarshal(doc.Cases[i], &m); err != nil {
			return nil, fmt.Errorf("case %d: %w", i, err)
		}
		steps, _ := m["steps"].([]any)
		k := 0
		for j, st := range c.Steps {
			if st.Op != "hook" {
				continue
			}
			o := outs[k]
			k++
			if o.Err != nil {
				return nil, fmt.Errorf("%s: %v", o.Label, o.Err)
			}
			step := steps[j].(map[string]any)
			a := o.Got.(covAnswer)
			delete(step, "out")
			delete(step, "decision")
			if st.Script != nil {
				step["out"], step["decision"] = a.Out, a.Decision
			}
		}
		m["state"] = outs[len(outs)-1].Got
		cases[i] = m
	}
	return map[string]any{"kind": "coverage", "source": EmitSource, "cases": cases}, nil
}

// covReplay is one case's world: the sessions' records, the logs, the
// transcripts, the gate-off file.
type covReplay struct {
	in          covIn
	records     map[string]*coverage.Record
	names       map[string]string // session id → name
	transcripts map[string][]json.RawMessage
	gateOff     bool
	arms        []map[string]any
	refusals    []map[string]any
	// kept: each record is stored as a run keeps it between hook calls
	// (coverage.Record.Kept, through its JSON), not whole.
	kept bool
}

func replayCoverage(n int, c covCase) []Outcome {
	outs, _ := replayCoverageAs(n, c, false)
	return outs
}

// replayCoverageAs replays case c, keeping each record whole or as a run
// keeps it, and returns the outcomes and the replay's end.
func replayCoverageAs(n int, c covCase, kept bool) ([]Outcome, *covReplay) {
	w := &covReplay{in: c.In, records: map[string]*coverage.Record{}, names: map[string]string{}, transcripts: map[string][]json.RawMessage{}, kept: kept}
	for name, s := range c.In.Sessions {
		w.names[s.SID] = name
	}
	var outs []Outcome
	for i, st := range c.Steps {
		label := fmt.Sprintf("case %d step %d", n, i)
		switch st.Op {
		case "gate_off":
			w.gateOff = st.On
		case "transcript":
			if p := w.lastTranscript(c.Steps[:i], st.Session); p != "" {
				w.transcripts[p] = append(w.transcripts[p], st.Append...)
			}
		case "hook":
			var want json.RawMessage
			switch {
			case st.Script == nil:
				want, _ = json.Marshal(covAnswer{})
			case st.Out != nil:
				want, _ = json.Marshal(struct {
					Out      json.RawMessage `json:"out"`
					Decision *string         `json:"decision"`
				}{st.Out, st.Decision})
			}
			// A step that ran with no recorded answer has nothing to
			// agree with: reported as such, never passed.
			got, err := w.hook(st)
			outs = append(outs, Outcome{Label: label + " " + st.Event, In: st.Payload, Want: want, Got: got, Err: err})
		default:
			outs = append(outs, Outcome{Label: label, In: mustJSON(st), Want: json.RawMessage(`{}`), Err: fmt.Errorf("unknown op %q", st.Op)})
		}
	}
	var want json.RawMessage
	if c.State != nil {
		want = comparedState(c.State)
	}
	in := c.rawIn
	if in == nil {
		in = mustJSON(c.In)
	}
	outs = append(outs, Outcome{Label: fmt.Sprintf("case %d state", n), In: in, Want: want, Got: w.state()})
	return outs, w
}

// store keeps session sid's record as the engine handed it back.
func (w *covReplay) store(sid string, r *coverage.Record) {
	if w.kept && r != nil {
		b, err := json.Marshal(r.Kept())
		r = &coverage.Record{}
		if err == nil {
			err = json.Unmarshal(b, r)
		}
		if err != nil {
			panic(err) // a record of plain fields always encodes
		}
	}
	w.records[sid] = r
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// lastTranscript is the transcript path the session's payloads last named.
func (w *covReplay) lastTranscript(before []covStep, session string) string {
	for i := len(before) - 1; i >= 0; i-- {
		if before[i].Op == "hook" && before[i].Session == session {
			var p struct {
				TranscriptPath string `json:"transcript_path"`
			}
			if json.Unmarshal(before[i].Payload, &p) == nil && p.TranscriptPath != "" {
				return p.TranscriptPath
			}
		}
	}
	return ""
}

// env is the environment a script's process ran with: the session's, the
// case's, and what the session sets for that script alone.
func (w *covReplay) env(session, script string) map[string]string {
	s := w.in.Sessions[session]
	e := map[string]string{}
	for k, v := range s.Env {
		e[k] = v
	}
	for k, v := range w.in.Env {
		e[k] = v
	}
	for k, v := range s.EnvOnly[script] {
		e[k] = v
	}
	return e
}

// covPayload is the part of a Claude Code payload the hooks read.
type covPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Prompt         *string         `json:"prompt"`
	Reason         json.RawMessage `json:"reason"`
}

func (w *covReplay) hook(st covStep) (covAnswer, error) {
	if p := w.lastTranscript([]covStep{st}, st.Session); p != "" {
		w.transcripts[p] = append(w.transcripts[p], st.TranscriptBefore...)
	}
	if st.Script == nil {
		return covAnswer{}, nil
	}
	var p covPayload
	if err := json.Unmarshal(st.Payload, &p); err != nil {
		return covAnswer{}, fmt.Errorf("payload: %w", err)
	}
	env := w.env(st.Session, *st.Script)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := coverage.ReferenceConfig(lookup)
	cfg.GateOff = w.gateOff
	ev := coverage.HookEvent{
		Name:     p.HookEventName,
		Session:  p.SessionID,
		Agent:    env["LASERBRAIN_AGENT"],
		Tool:     p.ToolName,
		Input:    p.ToolInput,
		Response: p.ToolResponse,
		Prompt:   p.Prompt,
		Reason:   pyStrOf(p.Reason),
	}
	if ev.Name == "" {
		ev.Name = st.Event
	}
	in := coverage.Input{Event: ev, Record: w.records[p.SessionID]}
	switch *st.Script {
	case "lb_gate":
		if cfg.NeedsLink(ev) {
			in.Link = w.in.LinkLog
		}
		d := cfg.Gate(in)
		if d.Arm != nil {
			w.store(p.SessionID, d.Record)
			w.arms = append(w.arms, map[string]any{"session": w.name(d.Arm.Session), "arm": d.Arm.Arm, "share": d.Arm.Share, "block_after": d.Arm.BlockAfter})
		}
		if d.Rule == coverage.RuleCoverage {
			w.refusals = append(w.refusals, map[string]any{"session": w.name(p.SessionID), "stage": d.Stage, "tool": d.Facts.Tool,
				"arm": d.Facts.Arm, "since": d.Facts.Since, "coverage": laserbrain.PyRound(d.Facts.Coverage, 3),
				"floor": d.Facts.Floor, "block_after": d.Facts.BlockAfter})
		}
		return gateAnswer(d), nil
	case "lb_coverage":
		if tp := p.TranscriptPath; tp != "" && cfg.NeedsTokens(ev) {
			if rows := w.transcripts[tp]; len(rows) > 0 {
				var buf bytes.Buffer
				for _, r := range rows {
					_ = json.Compact(&buf, r)
					buf.WriteByte('\n')
				}
				if n, ok := coverage.TranscriptTokens(&buf); ok {
					ev.Tokens = &n
					in.Event = ev
				}
			}
		}
		o := cfg.Observe(in)
		if o.Changed {
			w.store(p.SessionID, o.Record)
		}
		return observeAnswer(ev, o), nil
	}
	return covAnswer{}, fmt.Errorf("unknown script %q", *st.Script)
}

// pyStrOf is str() of a payload field, "" for a missing or falsy one.
func pyStrOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	v, err := grammar.Parse(raw)
	if err != nil || v.Kind == grammar.Null || (v.Kind == grammar.String && v.Str == "") || (v.Kind == grammar.Bool && !v.Bool) {
		return ""
	}
	return laserbrain.PyStr(v)
}

func (w *covReplay) name(sid string) string {
	if n, ok := w.names[sid]; ok {
		return n
	}
	return sid
}

func decision(s string) *string { return &s }

// gateAnswer is the reference gate's process answer for a decision.
func gateAnswer(d coverage.Decision) covAnswer {
	switch {
	case d.Warns():
		return covAnswer{Out: &covOut{Stderr: d.Reason + "\n"}, Decision: decision("warn")}
	case d.Answer == operator.Deny:
		return covAnswer{Out: &covOut{Exit: 2, Stderr: d.Reason + "\n", Stdout: map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": d.Reason}}}, Decision: decision("deny")}
	}
	return covAnswer{Out: &covOut{}, Decision: decision("allow")}
}

// observeAnswer is the reference coverage hook's process answer: its
// context as PostToolUse additionalContext on every event but a Stop's.
func observeAnswer(ev coverage.HookEvent, o coverage.Outcome) covAnswer {
	if o.Context == "" {
		return covAnswer{Out: &covOut{}, Decision: decision("silent")}
	}
	name := "PostToolUse"
	if n := strings.ToLower(ev.Name); strings.Contains(n, "stop") && !strings.Contains(n, "failure") {
		name = "Stop"
	}
	return covAnswer{Out: &covOut{Stdout: map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": name, "additionalContext": o.Context}}}, Decision: decision("context")}
}

// comparedState is the part of a case's state the engine models.
func comparedState(raw json.RawMessage) json.RawMessage {
	var s struct {
		Sessions  json.RawMessage `json:"sessions"`
		ProbeArms json.RawMessage `json:"probe_arms"`
		Refusals  json.RawMessage `json:"refusals"`
	}
	_ = json.Unmarshal(raw, &s)
	if s.Sessions == nil {
		s.Sessions = json.RawMessage(`{}`)
	}
	if s.ProbeArms == nil {
		s.ProbeArms = json.RawMessage(`[]`)
	}
	if s.Refusals == nil {
		s.Refusals = json.RawMessage(`[]`)
	}
	b, _ := json.Marshal(s)
	return b
}

func (w *covReplay) state() any {
	sessions := map[string]any{}
	for sid, r := range w.records {
		if r == nil {
			continue
		}
		sessions[w.name(sid)] = summary(r)
	}
	arms, refusals := w.arms, w.refusals
	if arms == nil {
		arms = []map[string]any{}
	}
	if refusals == nil {
		refusals = []map[string]any{}
	}
	return map[string]any{"sessions": sessions, "probe_arms": arms, "refusals": refusals}
}

// summary is a record as the vectors summarise it.
func summary(r *coverage.Record) map[string]any {
	s := map[string]any{"agent": r.Agent, "steps": r.Steps, "goal": nullIfEmpty(r.Goal)}
	checks := []any{}
	for _, c := range r.Checks {
		checks = append(checks, c)
	}
	s["checks"] = checks
	s["catches"] = catchSummary(r.Catches)
	inferred := make([]string, r.Inferred)
	for i := range inferred {
		inferred[i] = "advancing"
	}
	s["inferred"] = inferred
	if len(r.Segments) > 0 {
		var segs []any
		for _, g := range r.Segments {
			steps := []int{}
			for _, c := range g.Checks {
				steps = append(steps, c.Step)
			}
			cs := []int{}
			for _, c := range g.Catches {
				cs = append(cs, c.Step)
			}
			segs = append(segs, map[string]any{"goal": nullIfEmpty(g.Goal), "steps": g.Steps, "checks": steps, "catches": cs})
		}
		s["segments"] = segs
	}
	if r.WasReset != nil {
		s["was_reset"] = *r.WasReset
	}
	return s
}

func catchSummary(cs []coverage.Catch) []any {
	out := []any{}
	for _, c := range cs {
		out = append(out, map[string]any{"step": c.Step, "what": c.What, "since": c.Since})
	}
	return out
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
