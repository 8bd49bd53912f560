package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode"
)

// The supercode kind runs a supervisor per case, on a fresh context store.
//
//	watch:  in {sub: "watch", goal?, ops: [op]}; out {results: [one per op]}
//	        op {op: "observe", agent, goal, progress, distance, parent_goal?, user_turn?} → verdict
//	        op {op: "saw", agent, event: {kind, name, ok?, result?, text?, sites?}}      → null
//	        op {op: "read"} → {findings, collisions, fleet_catches, route, self, report}
//	        (in that order; self and report each take a self-check)
//	manage: in {sub: "manage", goal?, scripts: {agent: [step]}, max_steps, escalate_after?, decisions?}
//	        out {contexts: {agent: context}, escalations: [{who, verdict, collision, decision}], report}
//	        An agent's step n is script[min(n, len-1)]; step {goal, progress, distance, done?}.
//	        With decisions, each escalation takes the next one (null when they run out).
//
// A verdict is {drifting, reason, phi, laserscore}. report is null where
// the reference's report() raises: a finding for an agent seen only
// through events (no Φ) — which ours renders as "Φ=-".
type scIn struct {
	Sub           string         `json:"sub"`
	Goal          *string        `json:"goal"`
	Ops           []scOp         `json:"ops"`
	Scripts       orderedScripts `json:"scripts"`
	MaxSteps      int            `json:"max_steps"`
	EscalateAfter int            `json:"escalate_after"`
	Decisions     []*string      `json:"decisions"`
}

type scOp struct {
	Op         string            `json:"op"`
	Agent      string            `json:"agent"`
	Goal       *string           `json:"goal"`
	Progress   *string           `json:"progress"`
	Distance   json.RawMessage   `json:"distance"`
	ParentGoal *string           `json:"parent_goal"`
	UserTurn   bool              `json:"user_turn"`
	Event      *laserbrain.Event `json:"event"`
}

type scStep struct {
	Goal     *string         `json:"goal"`
	Progress *string         `json:"progress"`
	Distance json.RawMessage `json:"distance"`
	Done     bool            `json:"done"`
}

// orderedScripts keeps the agents in the order the file lists them: the
// reference's manage steps agents in its dict's insertion order.
type orderedScripts []namedScript

type namedScript struct {
	Name  string
	Steps []scStep
}

func (o *orderedScripts) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New(`"scripts" must be an object of agent: [steps]`)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var steps []scStep
		if err := dec.Decode(&steps); err != nil {
			return fmt.Errorf("script %v: %w", t, err)
		}
		if len(steps) == 0 {
			return fmt.Errorf("script %v has no steps", t)
		}
		*o = append(*o, namedScript{Name: t.(string), Steps: steps})
	}
	_, err := dec.Token()
	return err
}

type scVerdict struct {
	Drifting   bool    `json:"drifting"`
	Reason     string  `json:"reason"`
	Phi        float64 `json:"phi"`
	Laserscore *string `json:"laserscore"`
}

func verdictOut(v laserbrain.CheckResult) scVerdict {
	return scVerdict{v.Drifting, v.Reason, v.Phi, v.Laserscore}
}

type scCollision struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	Grounds [2]string `json:"grounds"`
}

type scRoute struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	Ground  string    `json:"ground"`
	Keep    *string   `json:"keep"`
	Yield   *string   `json:"yield"`
	Why     string    `json:"why"`
}

type scRead struct {
	Findings     []supercode.Finding    `json:"findings"`
	Collisions   []scCollision          `json:"collisions"`
	FleetCatches []supercode.FleetCatch `json:"fleet_catches"`
	Route        []scRoute              `json:"route"`
	Report       *string                `json:"report"`
	Self         scVerdict              `json:"self"`
}

type scContext struct {
	Returns             int                    `json:"returns"`
	Streak              int                    `json:"streak"`
	Steps               int                    `json:"steps"`
	Return              *string                `json:"return,omitempty"`
	Escalated           *bool                  `json:"escalated,omitempty"`
	Decision            *string                `json:"decision,omitempty"`
	Finished            *bool                  `json:"finished,omitempty"`
	CollisionUnresolved []supercode.Unresolved `json:"collision_unresolved,omitempty"`
	CollisionEscalated  *bool                  `json:"collision_escalated,omitempty"`
	Halted              *bool                  `json:"halted,omitempty"`
	HaltedWhy           *string                `json:"halted_why,omitempty"`
	Verdict             *scVerdict             `json:"verdict,omitempty"`
}

type scEscalation struct {
	Who       string  `json:"who"`
	Verdict   *string `json:"verdict"`
	Collision bool    `json:"collision"`
	Decision  *string `json:"decision"`
}

type scManageOut struct {
	Contexts    orderedContexts `json:"contexts"`
	Escalations []scEscalation  `json:"escalations"`
	Report      *string         `json:"report"`
}

type orderedContexts struct {
	names []string
	ctxs  []scContext
}

func (o orderedContexts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range o.names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		v, err := json.Marshal(o.ctxs[i])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTrue(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

func runSupercode(raw json.RawMessage) (any, error) {
	var in scIn
	if err := strictUnmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	opts := supercode.Options{}
	if in.Goal != nil {
		opts.Goal = *in.Goal
	}
	sc, err := supercode.New(opts)
	if err != nil {
		return nil, err
	}
	switch in.Sub {
	case "watch":
		return watch(sc, in.Ops)
	case "manage":
		return manage(sc, in)
	}
	return nil, fmt.Errorf(`bad input: sub must be "watch" or "manage", not %q`, in.Sub)
}

func watch(sc *supercode.Supercode, ops []scOp) (any, error) {
	results := make([]any, 0, len(ops))
	for i, op := range ops {
		switch op.Op {
		case "observe":
			in := StepIn{Goal: op.Goal, Progress: op.Progress, Distance: op.Distance, ParentGoal: op.ParentGoal, UserTurn: op.UserTurn}.Input()
			v, err := sc.Observe(op.Agent, in)
			if err != nil {
				return nil, fmt.Errorf("op %d: %w", i, err)
			}
			results = append(results, verdictOut(v))
		case "saw":
			if op.Event == nil {
				return nil, fmt.Errorf("bad input: op %d: saw needs an event", i)
			}
			sc.Saw(op.Agent, *op.Event)
			results = append(results, nil)
		case "read":
			r, err := read(sc)
			if err != nil {
				return nil, fmt.Errorf("op %d: %w", i, err)
			}
			results = append(results, r)
		default:
			return nil, fmt.Errorf("bad input: op %d: unknown op %q", i, op.Op)
		}
	}
	return map[string]any{"results": results}, nil
}

func read(sc *supercode.Supercode) (scRead, error) {
	r := scRead{Findings: sc.Findings(), Collisions: []scCollision{}, FleetCatches: sc.FleetCatches(), Route: []scRoute{}}
	for _, c := range sc.Collisions() {
		r.Collisions = append(r.Collisions, scCollision(c))
	}
	for _, rt := range sc.Route() {
		r.Route = append(r.Route, scRoute{rt.Agents, rt.Overlap, rt.Ground, optStr(rt.Keep), optStr(rt.Yield), rt.Why})
	}
	self, err := sc.SelfCheck()
	if err != nil {
		return r, err
	}
	r.Self = verdictOut(self)
	report, err := sc.Report()
	if err != nil {
		return r, err
	}
	if !referenceReportRaises(r.Findings) {
		r.Report = &report
	}
	return r, nil
}

// referenceReportRaises: the reference formats each finding's Φ with
// "%.2f", which raises for an agent with no verdict yet.
func referenceReportRaises(fs []supercode.Finding) bool {
	for _, f := range fs {
		if f.Phi == nil {
			return true
		}
	}
	return false
}

func manage(sc *supercode.Supercode, in scIn) (any, error) {
	agents := make([]supercode.ManagedAgent, len(in.Scripts))
	for i, s := range in.Scripts {
		steps := s.Steps
		agents[i] = supercode.ManagedAgent{Name: s.Name, Agent: supercode.AgentFunc(func(c *supercode.Context) supercode.Spelled {
			st := steps[min(c.Steps, len(steps)-1)]
			out := supercode.Spelled{Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.DistanceFromJSON(st.Distance), Done: st.Done}
			if st.Goal != nil {
				out.Goal = *st.Goal
			}
			if st.Progress != nil {
				out.Progress = *st.Progress
			}
			return out
		})}
	}
	out := scManageOut{Escalations: []scEscalation{}}
	opts := supercode.ManageOptions{MaxSteps: in.MaxSteps, EscalateAfter: in.EscalateAfter}
	if in.Decisions != nil {
		next := 0
		opts.OnEscalate = func(e supercode.Escalation) string {
			var d *string
			if next < len(in.Decisions) {
				d = in.Decisions[next]
			}
			next++
			row := scEscalation{Who: e.Who, Collision: e.Collision != nil, Decision: d}
			if e.Verdict != nil {
				row.Verdict = &e.Verdict.Reason
			}
			out.Escalations = append(out.Escalations, row)
			if d == nil {
				return ""
			}
			return *d
		}
	}
	ctxs, err := sc.Manage(context.Background(), agents, opts)
	if err != nil {
		return nil, err
	}
	for _, c := range ctxs {
		o := scContext{Returns: c.Returns, Streak: c.Streak, Steps: c.Steps, Return: optStr(c.Return), Escalated: optTrue(c.Escalated),
			Decision: optStr(c.Decision), Finished: optTrue(c.Finished), CollisionUnresolved: c.CollisionUnresolved,
			CollisionEscalated: optTrue(c.CollisionEscalated), Halted: optTrue(c.Halted), HaltedWhy: optStr(c.HaltedWhy)}
		if c.Verdict != nil {
			v := verdictOut(*c.Verdict)
			o.Verdict = &v
		}
		out.Contexts.names = append(out.Contexts.names, c.Name)
		out.Contexts.ctxs = append(out.Contexts.ctxs, o)
	}
	findings := sc.Findings()
	report, err := sc.Report()
	if err != nil {
		return nil, err
	}
	if !referenceReportRaises(findings) {
		out.Report = &report
	}
	return out, nil
}

func supercodeKind() *Kind {
	return seqKind("supercode", `a fresh supervisor per case; in: {sub: "watch", ops: [observe | saw | read]} or {sub: "manage", scripts: {agent: [steps]}, max_steps, escalate_after?, decisions?}; out: {results: one per op} or {contexts, escalations, report}`, runSupercode)
}
