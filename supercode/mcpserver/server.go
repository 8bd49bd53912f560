package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/method"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Name is the server's name: Claude Code calls its tools mcp__laserbrain__*.
const Name = "laserbrain"

// Version is reported in the server's implementation info: the binary's
// own version (laserbrain version), so a client sees which build answers.
func Version() string { return version.Get(Name).Version }

// Server holds one agent's connection: its supervisor and, once a tool
// needed it, the caller's run.
type Server struct {
	sup  *agentrun.Supervisor
	opts Options
	mu   sync.Mutex // tool calls of one connection run one at a time
	run  string     // the run opened for this connection, when the caller names none
}

// New builds the MCP server on sup; the caller's run is found (sup.Caller:
// LASERBRAIN_RUN, else the session the client process is bound to, else
// CLAUDE_CODE_SESSION_ID or QWEN_CODE_SESSION_ID) by each tool that needs
// it, and registered when there is none.
func New(sup *agentrun.Supervisor) *mcp.Server { return newServer(sup, Options{}) }

func newServer(sup *agentrun.Supervisor, opts Options) *mcp.Server {
	s := &Server{sup: sup, opts: opts}
	instructions := "Call check_state at every step with your goal, progress (advancing, stuck or circling) and distance (0-10, 0 = done). " +
		"The first call freezes your ground; later calls are measured against it. Irreversible or outward commands are refused while your run drifts."
	if opts.Loop != nil {
		instructions += " You are a session of a laserbrain loop: call escalate (with the reason) when a person is needed."
		if opts.Loop.Role == RoleJudge {
			instructions += " End every turn by calling verdict exactly once."
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "laserbrain drift instrument", Version: Version()}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	for _, t := range s.allTools() {
		srv.AddTool(t.tool, s.wrap(t.run))
	}
	return srv
}

type toolDef struct {
	tool *mcp.Tool
	run  func(ctx context.Context, args args) (any, error)
}

// badArgs is a tool error the caller can fix: it is answered as an MCP tool
// error ({"error": reason}), never as a crash.
type badArgs struct{ msg string }

func (e *badArgs) Error() string { return e.msg }

func badf(format string, a ...any) error { return &badArgs{fmt.Sprintf(format, a...)} }

// wrap turns a tool function into a handler: arguments are decoded here,
// errors and panics become tool errors with a reason, results are JSON text.
func (s *Server) wrap(run func(context.Context, args) (any, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = errorResult(fmt.Sprintf("internal error: %v", p)), nil
			}
		}()
		a, perr := parseArgs(req.Params.Arguments)
		if perr != nil {
			return errorResult(perr.Error()), nil
		}
		s.mu.Lock()
		out, rerr := run(ctx, a)
		s.mu.Unlock()
		if rerr != nil {
			return errorResult(rerr.Error()), nil
		}
		text, merr := marshalIndent(out)
		if merr != nil {
			return errorResult(merr.Error()), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	text, _ := marshalIndent(map[string]string{"error": msg})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func marshalIndent(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// args are a call's arguments, read field by field with a reason for each
// mistake.
type args map[string]json.RawMessage

func parseArgs(raw json.RawMessage) (args, error) {
	a := args{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	return a, nil
}

func (a args) has(k string) bool {
	v, ok := a[k]
	return ok && string(v) != "null"
}

func (a args) str(k string) (string, error) {
	if !a.has(k) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(a[k], &s); err != nil {
		return "", badf("%s must be a string", k)
	}
	return s, nil
}

func (a args) boolean(k string) (bool, error) {
	if !a.has(k) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(a[k], &b); err != nil {
		return false, badf("%s must be true or false", k)
	}
	return b, nil
}

// integer reads a whole number in [lo, hi], def when absent.
func (a args) integer(k string, def, lo, hi int) (int, error) {
	if !a.has(k) {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(a[k], &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, badf("%s must be a whole number from %d to %d", k, lo, hi)
	}
	return int(f), nil
}

// distance reads distance as the reference does: a number (clamped to
// 0-10), a numeric string, or null/absent for unknown; anything else is
// refused rather than silently read as unknown.
func (a args) distance() (laserbrain.Distance, error) {
	if !a.has("distance") {
		return laserbrain.Distance{}, nil
	}
	raw := a["distance"]
	var f float64
	var s string
	switch {
	case json.Unmarshal(raw, &f) == nil:
	case json.Unmarshal(raw, &s) == nil:
		if _, ok := laserbrain.DistanceFromString(s); !ok {
			return laserbrain.Distance{}, badf("distance %q is not a number (0 to 10)", s)
		}
	default:
		return laserbrain.Distance{}, badf("distance must be a number from 0 to 10")
	}
	return laserbrain.DistanceFromJSON(raw), nil
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

// checkArgs reads check_state's (and modulate's) state.
func checkArgs(a args, tool string) (agentrun.CheckInput, error) {
	var in agentrun.CheckInput
	goal, err := a.str("goal")
	if err != nil {
		return in, err
	}
	if strings.TrimSpace(goal) == "" {
		return in, badf("%s needs a goal — the ground is set from it and frozen", tool)
	}
	progress, err := a.str("progress")
	if err != nil {
		return in, err
	}
	if progress == "" {
		progress = laserbrain.ProgressAdvancing
	}
	d, err := a.distance()
	if err != nil {
		return in, err
	}
	in.Goal, in.Progress, in.Distance = goal, progress, d
	for _, f := range []struct {
		key string
		dst *string
	}{{"parent_goal", &in.ParentGoal}, {"doing", &in.Doing}, {"next", &in.Next}, {"blocked", &in.Blocked}} {
		if *f.dst, err = a.str(f.key); err != nil {
			return in, err
		}
	}
	if in.UserTurn, err = a.boolean("user_turn"); err != nil {
		return in, err
	}
	if in.ResetTask, err = a.boolean("reset_task"); err != nil {
		return in, err
	}
	return in, nil
}

// verdictOut is check_state's answer: the reference's fields (phi and
// anchored to 4 places, ground_score) and the run's.
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
	if o.ParentOverlap != nil {
		out["parent_overlap"] = *o.ParentOverlap
	}
	if o.Claims != nil {
		out["claims"] = o.Claims
	}
	return out
}

// roundN rounds as Python's round(x, n) does: to the nearest n-place
// decimal of the exact binary value.
func roundN(x float64, n int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	return f
}

func round4(x float64) float64 { return roundN(x, 4) }

func (s *Server) checkState(ctx context.Context, a args) (any, error) {
	in, err := checkArgs(a, "check_state")
	if err != nil {
		return nil, err
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
	o, err := s.sup.Check(ctx, r.ID, in)
	return o, r.ID, err
}

func (s *Server) modulate(ctx context.Context, a args) (any, error) {
	in, err := checkArgs(a, "modulate")
	if err != nil {
		return nil, err
	}
	team, err := a.str("team")
	if err != nil {
		return nil, err
	}
	role, err := a.str("role")
	if err != nil {
		return nil, err
	}
	// An unknown team or role is refused before the check is recorded.
	if team != "" && !slices.Contains(laserbrain.Presets(), team) {
		return nil, badf("no preset named %q (valid: %s)", team, strings.Join(laserbrain.Presets(), ", "))
	}
	// A role without a team is unstyled, as laserbrain.Modulate and the
	// reference read it: every drift returns.
	if role != "" && team != "" {
		if _, err := laserbrain.Modulate(laserbrain.CheckResult{Reason: laserbrain.VerdictGoalDrift.String()}, team, role); err != nil {
			return nil, badf("%v", err)
		}
	}
	o, run, err := s.check(ctx, in)
	if err != nil {
		return nil, err
	}
	m, err := laserbrain.Modulate(o.CheckResult, team, role)
	if err != nil {
		return nil, badf("%v", err)
	}
	if m.Advice == "" {
		m.Advice = o.Advice
	}
	out := verdictOut(o, run)
	out["modulation"] = m
	return out, nil
}

func (s *Server) resetTask(ctx context.Context, a args) (any, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.sup.ResetTask(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "note": "ground set aside — your next check_state sets a new ground (a later goal closer to the old one resumes it)", "suspended": n}, nil
}

func (s *Server) getHistory(ctx context.Context, a args) (any, error) {
	limit, err := a.integer("limit", 20, 1, 10000)
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
			checks = append(checks, map[string]any{"goal": st.Goal, "drifting": st.Drifting, "reason": st.Reason,
				"phi": round4(st.Phi), "anchored": round4(st.Anchored), "laserscore": st.Laserscore, "step": st.N})
		}
	}
	total := len(checks)
	if len(checks) > limit {
		checks = checks[len(checks)-limit:]
	}
	return map[string]any{"checks": checks, "total": total, "drifting": drifting, "run": r.ID, "task": r.Task}, nil
}

func (s *Server) judgeRun(ctx context.Context, a args) (any, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.sup.Judge(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return j, nil
}

func sortedCopy(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
}

func (s *Server) similarity(ctx context.Context, a args) (any, error) {
	x, err := a.str("a")
	if err != nil {
		return nil, err
	}
	y, err := a.str("b")
	if err != nil {
		return nil, err
	}
	na, nb := laserbrain.Norm(x), laserbrain.Norm(y)
	var shared []string
	for _, t := range na {
		if slices.Contains(nb, t) {
			shared = append(shared, t)
		}
	}
	return map[string]any{"a_tokens": sortedCopy(na), "b_tokens": sortedCopy(nb),
		"overlap": round4(laserbrain.Overlap(na, nb)), "shared": sortedCopy(shared)}, nil
}

func (s *Server) laserscore(ctx context.Context, a args) (any, error) {
	goal, err := a.str("goal")
	if err != nil {
		return nil, err
	}
	progress, err := a.str("progress")
	if err != nil {
		return nil, err
	}
	if !a.has("progress") {
		progress = laserbrain.ProgressAdvancing
	}
	d, err := a.distance()
	if err != nil {
		return nil, err
	}
	parent, err := a.str("parent_goal")
	if err != nil {
		return nil, err
	}
	ls, ok := laserbrain.Laserscore(goal, progress, d, parent)
	if !ok {
		return map[string]any{"laserscore": nil}, nil
	}
	return map[string]any{"laserscore": ls}, nil
}

func (s *Server) classify(ctx context.Context, a args) (any, error) {
	command, err := a.str("command")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(command) == "" {
		return nil, badf("classify needs a command")
	}
	irreversible, err := a.boolean("irreversible")
	if err != nil {
		return nil, err
	}
	outward, err := a.boolean("outward")
	if err != nil {
		return nil, err
	}
	r := operator.Classify(command, !irreversible, outward)
	return struct {
		Command            string `json:"command"`
		NeedsAuthorization bool   `json:"needs_authorization"`
		operator.Result
	}{command, r.NeedsAuthorization(), r}, nil
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
	m, err := method.Parse(a["method"])
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
