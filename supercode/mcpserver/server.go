package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/method"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/gate"
)

// Name is the server's name: Claude Code calls its tools mcp__laserbrain__*.
const Name = "laserbrain"

// Version is reported in the server's implementation info: the binary's
// own version (laserbrain version), so a client sees which build answers.
func Version() string { return version.Get(Name).Version }

// Server holds one agent's connection: its Tracker and, once a tool
// needed it, the caller's run. It answers one message at a time (Serve).
type Server struct {
	sup   *agentrun.Tracker
	opts  Options
	shelf method.Shelf
	run   string // the run opened for this connection, when the caller names none
	tools []toolDef
	tree  *subTasks // the current task's sub-task tree, once a tree tool asked for it
}

// New builds the server on sup; the caller's run is found (sup.Caller:
// LASERBRAIN_RUN, else the session the client process is bound to, else
// CLAUDE_CODE_SESSION_ID or QWEN_CODE_SESSION_ID) by each tool that needs
// it, and registered when there is none.
func New(sup *agentrun.Tracker) *Server { return newServer(sup, Options{}) }

func newServer(sup *agentrun.Tracker, opts Options) *Server {
	s := &Server{sup: sup, opts: opts}
	s.shelf.Local = opts.Workflows
	if s.shelf.Local == "" {
		if home := s.home(); home != "" {
			s.shelf.Local = method.LocalDir(home)
		}
	}
	s.tools = append(append(s.instrumentTools(), s.treeTools()...), s.loopTools()...)
	return s
}

// home is the caller's home directory, fixed when the server starts (the
// user's methods live under it).
func (s *Server) home() string {
	if s.sup != nil && s.sup.Getenv != nil {
		return s.sup.Getenv("HOME")
	}
	h, _ := os.UserHomeDir()
	return h
}

func (s *Server) instructions() string {
	text := "Call check_state at every step with your goal, progress (advancing, stuck or circling) and distance (0-10, 0 = done). " +
		"The first call freezes your ground; later calls are measured against it. Irreversible or outward commands are refused while your run drifts."
	if s.opts.Loop != nil {
		text += " You are a session of a laserbrain loop: call escalate (with the reason) when a person is needed."
		if s.opts.Loop.Role == RoleJudge {
			text += " End every turn by calling verdict exactly once."
		}
	}
	return text
}

// toolDef is one tool: what tools/list shows and the function answering a
// call. A function's error is the call's error result (isError, with the
// reason); a refusal the reference answers as a result (an "error" key and
// the valid names) is a result.
type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	fn          func(ctx context.Context, a args) (any, error)
}

func (s *Server) tool(name string) *toolDef {
	for i := range s.tools {
		if s.tools[i].Name == name {
			return &s.tools[i]
		}
	}
	return nil
}

// listed is tools/list's answer: the reference's tools in its order, then
// ours.
func (s *Server) listed() []toolDef { return s.tools }

// callResult is an MCP tool result: one text block, the answer as JSON.
type callResult struct {
	Content []textBlock `json:"content"`
	IsError bool        `json:"isError,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// badArgs is a call the caller can fix: an error result with the reason.
type badArgs struct{ msg string }

func (e *badArgs) Error() string { return e.msg }

func badf(format string, a ...any) error { return &badArgs{fmt.Sprintf(format, a...)} }

// run calls a tool: errors and panics become error results with a reason,
// answers are JSON text.
func (s *Server) call(ctx context.Context, t *toolDef, a args) (res callResult) {
	defer func() {
		if p := recover(); p != nil {
			res = errorResult(fmt.Sprintf("internal error: %v", p))
		}
	}()
	out, err := t.fn(ctx, a)
	if err != nil {
		return errorResult(err.Error())
	}
	text, err := marshalIndent(out)
	if err != nil {
		return errorResult(err.Error())
	}
	return callResult{Content: []textBlock{{"text", text}}}
}

func errorResult(msg string) callResult {
	text, _ := marshalIndent(map[string]string{"error": msg})
	return callResult{IsError: true, Content: []textBlock{{"text", text}}}
}

func marshalIndent(v any) (string, error) {
	b, err := marshal(v)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return "", err
	}
	return out.String(), nil
}

// args are a call's arguments, read member by member. The reference's
// tools read theirs with Python's coercions (str(), int(), truth), and
// those tools here read them the same way, so a call answers alike; ours
// read theirs strictly, with a reason for each mistake. Arguments that were
// not an object fail every read (a tool that reads none still answers).
type args struct {
	v   grammar.Value // an object
	err error
}

// get returns the member k, ok false when absent.
func (a args) get(k string) (grammar.Value, bool, error) {
	if a.err != nil {
		return grammar.Value{}, false, a.err
	}
	v, ok := a.v.Get(k)
	if !ok {
		return grammar.Value{}, false, nil
	}
	return *v, true, nil
}

// pystr is str(arguments.get(k, def)): null reads "None", 5 reads "5".
func (a args) pystr(k, def string) (string, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok {
		return def, err
	}
	return laserbrain.PyStr(v), nil
}

// pyint is int(arguments.get(k, def)); what int() refuses is an error
// naming the argument.
func (a args) pyint(k string, def int) (int, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok {
		return def, err
	}
	n, err := laserbrain.PyInt(v)
	if err != nil {
		return 0, badf("%s must be a whole number: %v", k, err)
	}
	return n, nil
}

// raw is the member as JSON, nil when absent.
func (a args) raw(k string) (json.RawMessage, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok {
		return nil, err
	}
	return valueJSON(v), nil
}

func (a args) has(k string) bool {
	v, ok, err := a.get(k)
	return err == nil && ok && v.Kind != grammar.Null
}

// str reads a string member strictly ("" when absent or null).
func (a args) str(k string) (string, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok || v.Kind == grammar.Null {
		return "", err
	}
	if v.Kind != grammar.String {
		return "", badf("%s must be a string", k)
	}
	return v.Str, nil
}

// text is str for a member that must say something: absent, null or
// blank is the error need.
func (a args) text(k, need string) (string, error) {
	v, err := a.str(k)
	if err == nil && strings.TrimSpace(v) == "" {
		err = badf("%s", need)
	}
	return v, err
}

func (a args) boolean(k string) (bool, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok || v.Kind == grammar.Null {
		return false, err
	}
	if v.Kind != grammar.Bool {
		return false, badf("%s must be true or false", k)
	}
	return v.Bool, nil
}

// integer reads a whole number in [lo, hi] strictly, def when absent.
func (a args) integer(k string, def, lo, hi int) (int, error) {
	v, ok, err := a.get(k)
	if err != nil || !ok || v.Kind == grammar.Null {
		return def, err
	}
	f, ferr := strconv.ParseFloat(v.Num, 64)
	if v.Kind != grammar.Number || ferr != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, badf("%s must be a whole number from %d to %d", k, lo, hi)
	}
	return int(f), nil
}

// object returns the arguments as JSON (a tool taking a whole document).
func (a args) object() (json.RawMessage, error) {
	if a.err != nil {
		return nil, a.err
	}
	return valueJSON(a.v), nil
}

// callerRun opens the caller's run: the one LASERBRAIN_RUN names, or the
// session's — the session its client process is bound to is read afresh
// on every call, for the client may have moved on to a new one — else a
// run opened once for this connection.
func (s *Server) callerRun(ctx context.Context) (fleet.Run, error) {
	st, err := s.sup.Fleet()
	if err != nil {
		return fleet.Run{}, err
	}
	c := s.sup.Caller("", "")
	if c.Session != "" || c.Run != "" {
		return s.sup.Open(ctx, c)
	}
	if s.run != "" {
		return st.Run(ctx, s.run)
	}
	if c.Agent == "" {
		c.Agent = "mcp"
	}
	r, err := s.sup.Open(ctx, c)
	if err != nil {
		return fleet.Run{}, err
	}
	s.run = r.ID
	return r, nil
}

// readingArgs reads goal, progress and distance as the reference's tools
// do: str(goal) (absent: ""), str(progress) (absent: advancing), distance
// as given (absent or null: unknown).
func readingArgs(a args) (goal, progress string, d laserbrain.Distance, err error) {
	if goal, err = a.pystr("goal", ""); err != nil {
		return
	}
	if progress, err = a.pystr("progress", laserbrain.ProgressAdvancing); err != nil {
		return
	}
	raw, err := a.raw("distance")
	return goal, progress, laserbrain.DistanceFromJSON(raw), err
}

// groundedStateArgs is stateArgs for a tool that records a check: a state
// with no goal is answered (not an error) with what the tool needs.
func groundedStateArgs(tool string, a args) (in agentrun.CheckInput, refusal any, err error) {
	in, err = stateArgs(a)
	if err == nil && in.Goal == "" {
		refusal = map[string]any{"error": tool + " needs a goal — the ground is set from it and frozen"}
	}
	return in, refusal, err
}

// stateArgs reads check_state's (and modulate's) state as the reference
// does: goal is str(goal).strip() (absent: ""), progress str(progress)
// (absent: advancing), distance as given (absent or null: unknown). Other
// arguments are not read — the reference reads none, and a parent_goal or
// user_turn passed to it changes nothing — except doing, next and blocked
// when they are text: they are reported as claims, never folded into Φ.
func stateArgs(a args) (agentrun.CheckInput, error) {
	var in agentrun.CheckInput
	goal, progress, d, err := readingArgs(a)
	if err != nil {
		return in, err
	}
	in.Goal, in.Progress, in.Distance = laserbrain.PyStrip(goal), progress, d
	for _, f := range []struct {
		key string
		dst *string
	}{{"doing", &in.Doing}, {"next", &in.Next}, {"blocked", &in.Blocked}} {
		if v, ok, _ := a.get(f.key); ok && v.Kind == grammar.String {
			*f.dst = v.Str
		}
	}
	return in, nil
}

// verdictOut is check_state's answer: the reference's fields (phi and
// anchored to 4 places, ground_score) and the run's (why, ground, run,
// task, step).
func verdictOut(o agentrun.CheckOutcome, run string) map[string]any {
	out := map[string]any{
		"drifting":     o.Drifting,
		"reason":       o.Reason,
		"phi":          round4(o.Phi),
		"anchored":     round4(o.Anchored),
		"laserscore":   o.Laserscore,
		"advice":       o.Advice,
		"ground_score": round4(o.GroundScore),
		"why":          o.Why,
		"ground":       o.Ground,
		"run":          run,
		"task":         o.Task,
		"step":         o.Step,
	}
	if o.Resumed != "" {
		out["resumed_ground"] = o.Resumed
	}
	if o.UserTurn {
		out["user_turn"] = true
	}
	if o.Claims != nil {
		out["claims"] = o.Claims
	}
	return out
}

func round4(x float64) float64 { return laserbrain.PyRound(x, 4) }

func (s *Server) checkState(ctx context.Context, a args) (any, error) {
	in, refusal, err := groundedStateArgs("check_state", a)
	if err != nil || refusal != nil {
		return refusal, err
	}
	o, run, err := s.check(ctx, in)
	if err != nil {
		return nil, err
	}
	return verdictOut(o, run), nil
}

// check checks one state on the caller's run: the one way every checking
// tool records a check.
func (s *Server) check(ctx context.Context, in agentrun.CheckInput) (agentrun.CheckOutcome, string, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return agentrun.CheckOutcome{}, "", err
	}
	// Its post-tool-use hook counts it for coverage, whatever the client.
	in.Via = agentrun.ViaTool
	o, err := s.sup.Check(ctx, r.ID, in)
	if err == nil {
		s.rootCheck(r.ID, o.Task, in.StepInput)
	}
	return o, r.ID, err
}

// modulate is check_state — recorded first, on the live ground (only
// check_state resumes a set-aside one) — plus what the role does about the
// verdict. An unknown team or role is answered after the check is recorded,
// as the reference answers it: the error and the names there are.
func (s *Server) modulate(ctx context.Context, a args) (any, error) {
	in, refusal, err := groundedStateArgs("modulate", a)
	if err != nil || refusal != nil {
		return refusal, err
	}
	team, _, err := a.get("team")
	if err != nil {
		return nil, err
	}
	role, _, err := a.get("role")
	if err != nil {
		return nil, err
	}
	in.KeepTask = true
	o, run, err := s.check(ctx, in)
	if err != nil {
		return nil, err
	}
	teamName, roleName := "", ""
	if laserbrain.PyTruthy(team) {
		if team.Kind == grammar.Array || team.Kind == grammar.Object {
			return nil, badf("team must be a preset name, not %s (the check was recorded)", describe(team))
		}
		p, verr := laserbrain.VendTeam(team.Str)
		if team.Kind != grammar.String || verr != nil {
			names := laserbrain.Presets()
			sort.Strings(names)
			return map[string]any{"error": "no preset named " + laserbrain.PyRepr(team), "presets": names}, nil
		}
		teamName = p.Name
		if laserbrain.PyTruthy(role) {
			var roles []string
			for _, r := range p.Roles {
				roles = append(roles, r.Role)
				if role.Kind == grammar.String && r.Role == role.Str {
					roleName = r.Role
				}
			}
			if roleName == "" {
				return map[string]any{"error": fmt.Sprintf("%s has no role %s", teamName, laserbrain.PyRepr(role)), "roles": roles}, nil
			}
		}
	}
	m, err := laserbrain.Modulate(o.CheckResult, teamName, roleName)
	if err != nil {
		return nil, err
	}
	if m.Advice == "" {
		m.Advice = o.Advice
	}
	out := verdictOut(o, run)
	out["modulation"] = m
	return out, nil
}

func (s *Server) resetTask(ctx context.Context, _ args) (any, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.sup.ResetTask(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	s.tree = nil // a new task, a new tree
	return map[string]any{"ok": true, "note": "ground set aside — your next check_state sets a new ground (a later goal closer to the old one resumes it)", "suspended": n}, nil
}

// getHistory is the live task's checks, the last int(limit) of them as a
// Python slice reads [-limit:] (0: all; negative: all but the first).
func (s *Server) getHistory(ctx context.Context, a args) (any, error) {
	limit, err := a.pyint("limit", 20)
	if err != nil {
		return nil, err
	}
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	lr, err := s.sup.Task(ctx, r)
	if err != nil {
		return nil, err
	}
	checks := []map[string]any{}
	drifting := 0
	if lr != nil {
		for _, st := range lr.Steps() {
			if st.Drifting {
				drifting++
			}
			row := map[string]any{"goal": st.Goal, "drifting": st.Drifting, "reason": st.Reason,
				"phi": round4(st.Phi), "anchored": round4(st.Anchored), "laserscore": st.Laserscore,
				"advice": st.Advice, "ground_score": round4(st.GroundScore()), "step": st.N}
			if st.Resumed != "" {
				row["resumed_ground"] = st.Resumed
			}
			checks = append(checks, row)
		}
	}
	total := len(checks)
	return map[string]any{"checks": checks[pySliceStart(-limit, total):], "total": total, "drifting": drifting, "run": r.ID, "task": r.Task}, nil
}

// pySliceStart is where Python's xs[i:] starts for a list of n.
func pySliceStart(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

func (s *Server) judgeRun(ctx context.Context, _ args) (any, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	return s.sup.Judge(ctx, r.ID)
}

func (s *Server) similarity(ctx context.Context, a args) (any, error) {
	x, err := a.pystr("a", "")
	if err != nil {
		return nil, err
	}
	y, err := a.pystr("b", "")
	if err != nil {
		return nil, err
	}
	na, nb := laserbrain.Norm(x), laserbrain.Norm(y)
	shared := []string{}
	for _, t := range na {
		if slices.Contains(nb, t) {
			shared = append(shared, t)
		}
	}
	return map[string]any{"a_tokens": nonNilStrings(na), "b_tokens": nonNilStrings(nb),
		"overlap": round4(laserbrain.Overlap(na, nb)), "shared": shared}, nil
}

func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// laserscore is the reading of goal, progress and distance, read as
// check_state reads them; a parent_goal is not read (the reference's tool
// reads none).
func (s *Server) laserscore(ctx context.Context, a args) (any, error) {
	goal, progress, d, err := readingArgs(a)
	if err != nil {
		return nil, err
	}
	ls, ok := laserbrain.Laserscore(goal, progress, d, "")
	if !ok {
		return map[string]any{"laserscore": nil}, nil
	}
	return map[string]any{"laserscore": ls}, nil
}

func (s *Server) classify(ctx context.Context, a args) (any, error) {
	command, err := a.text("command", "classify needs a command")
	if err != nil {
		return nil, err
	}
	irreversible, err := a.boolean("irreversible")
	if err != nil {
		return nil, err
	}
	outward, err := a.boolean("outward")
	if err != nil {
		return nil, err
	}
	// Read in the directory the server runs in (the agent's project).
	dir, _ := os.Getwd()
	return Classify(s.sup.Caller("", dir), command, dir, irreversible, outward)
}

// ClassifyResult is the classify tool's answer: the classification with
// the caller's declaration, the findings and writes, and the gate's own
// decision for the caller's presence.
type ClassifyResult struct {
	Command            string `json:"command"`
	NeedsAuthorization bool   `json:"needs_authorization"`
	shell.Classification
	Findings []shell.Finding   `json:"findings"`
	Writes   []shell.Write     `json:"writes,omitempty"`
	Complete bool              `json:"complete"`
	Decision operator.Answer   `json:"decision"`
	Rule     string            `json:"rule"`
	Reason   string            `json:"reason,omitempty"`
	Presence operator.Presence `json:"presence"`
}

// Classify is the classify tool: the gate's answer (gate.Decide) for a
// command run in dir by caller c (its presence), before the run's state
// is read.
func Classify(c agentrun.Caller, command, dir string, irreversible, outward bool) (ClassifyResult, error) {
	an := shell.Analyze(command, dir)
	pol, err := agentrun.LoadPolicy(dir, policyschema.Validate)
	if err != nil {
		return ClassifyResult{}, err
	}
	d := gate.Decide(gate.Input{Caller: c, Analysis: an, Policy: pol})
	v := an.Escalate(!irreversible, outward)
	return ClassifyResult{command, v.NeedsAuthorization(), v, an.Findings, an.Writes, an.Complete, d.Action, d.Rule, d.Reason, d.Presence}, nil
}

func (s *Server) lint(ctx context.Context, a args) (any, error) {
	if name, err := a.str("name"); err != nil {
		return nil, err
	} else if name != "" {
		methods, names := method.Shipped()
		m, ok := methods[name]
		if !ok {
			return nil, badf("no shipped method %q (have %s)", name, strings.Join(names, ", "))
		}
		return map[string]any{"name": name, "findings": nonNil(method.Lint(m))}, nil
	}
	if !a.has("method") {
		return nil, badf("lint needs a method (a spec object) or the name of a shipped one")
	}
	raw, err := a.raw("method")
	if err != nil {
		return nil, err
	}
	m, err := method.Parse(raw)
	if err != nil {
		return nil, badf("method: %v", err)
	}
	return map[string]any{"findings": nonNil(method.Lint(m))}, nil
}

func nonNil(f []method.Finding) []method.Finding {
	if f == nil {
		return []method.Finding{}
	}
	return f
}
