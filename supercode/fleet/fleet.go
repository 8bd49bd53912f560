package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// Errors the stores return (wrapped, with what was looked for).
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrSpent: the authorization is expired, revoked or used up.
	ErrSpent = errors.New("authorization spent")
)

// Run is one agent run under supervision.
type Run struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	Fleet string `json:"fleet"`
	// Dir is the working directory the run started in.
	Dir string `json:"dir,omitempty"`
	// Command is what `laserbrain run` started ("" for a run a Claude Code
	// session opened by itself).
	Command []string `json:"command,omitempty"`
	// Client is the agent client whose hooks opened the run (claude,
	// gemini, …; "" when `laserbrain run` made it, or before it was kept).
	Client string `json:"client,omitempty"`
	// Goal is the goal declared at the start (laserbrain run --goal).
	Goal string `json:"goal,omitempty"`
	// Ponder is the ponder session the agent works on (laserbrain run
	// --ponder, or PONDER_SLUG in run's own environment): the run and the
	// session ponder:<Ponder> are one worker, seen twice.
	Ponder string `json:"ponder,omitempty"`
	// Sessions are the Claude Code session ids seen on this run.
	Sessions []string `json:"sessions,omitempty"`
	// Attended says whether a person was there to answer: "attended",
	// "unattended" or "" (not known). Read from the agent's environment.
	Attended string    `json:"attended,omitempty"`
	Created  time.Time `json:"created"`
	Ended    time.Time `json:"ended,omitzero"`
	// ExitCode is the agent's exit status when `laserbrain run` saw it end.
	ExitCode *int `json:"exit_code,omitempty"`

	// Task is the laserbrain run the agent's checks go to; reset_task
	// suspends it and the next check opens a new one (Tasks counts them).
	Task      string      `json:"task"`
	Tasks     int         `json:"tasks"`
	Suspended []Suspended `json:"suspended,omitempty"`
	// UserTurn is set when a person spoke since the last check: the next
	// check is a user turn.
	UserTurn bool `json:"user_turn,omitempty"`
	// Checks counts the checks on the run, across tasks.
	Checks int `json:"checks"`
	// Last is the latest check's verdict.
	Last *LastCheck `json:"last,omitempty"`
	// Judgment is the whole-run verdict as last computed (on stop and at
	// the end of `laserbrain run`).
	Judgment string `json:"judgment,omitempty"`
	// StopsBlocked counts Stop events held back because the run drifted.
	StopsBlocked int `json:"stops_blocked,omitempty"`
	// SelfReground are the checks by which the agent regrounded its own
	// run — a user turn it claimed when no person spoke (check
	// --user-turn), the first check after its own reset_task (MCP, or
	// check --reset-task) — as SelfRegroundKey(task, step): the supervisor reads them
	// as the agent's, not a person's, so they do not clear its drift
	// streak.
	SelfReground []string `json:"self_reground,omitempty"`
	// ResetBySelf: the agent set its task aside (reset_task); the next
	// check is a self-reground.
	ResetBySelf bool `json:"reset_by_self,omitempty"`
	// Coverage is what the hooks keep to hold the run to being measured
	// (supercode/coverage's Record, as JSON: the steps since the last
	// check, the checks, the ground): it lives with the run, written by
	// UpdateRun like everything else on it. Empty until the first step.
	Coverage json.RawMessage `json:"coverage,omitempty"`

	// OffGround counts the checks in a row that drifted (0 after one that
	// did not).
	OffGround int `json:"off_ground,omitempty"`

	// Limits are the runaway limits laserbrain run holds the agent to;
	// ToolCallsAsked is how many tool calls its hooks asked it about
	// (refused ones included: what the limit counts), and Stopped which
	// limit stopped the agent, and why ("" when none did).
	Limits         *Limits `json:"limits,omitempty"`
	ToolCallsAsked int     `json:"tool_calls_asked,omitempty"`
	Stopped        string  `json:"stopped,omitempty"`
}

// AddSession records that session belongs to r (once).
func (r *Run) AddSession(session string) {
	if !slices.Contains(r.Sessions, session) {
		r.Sessions = append(r.Sessions, session)
	}
}

// Limits are a run's runaway limits (0: none).
type Limits struct {
	Timeout      time.Duration `json:"timeout,omitempty"`
	MaxToolCalls int           `json:"max_tool_calls,omitempty"`
	// MaxOffGround stops the agent after this many drifting checks in a row.
	MaxOffGround int `json:"max_checks_off_ground,omitempty"`
	// HaltOnLoss stops the agent at a call that deleted or overwrote more
	// than the project policy's undo threshold.
	HaltOnLoss bool `json:"halt_on_loss,omitempty"`
	// MaxTokens stops the agent at its first tool call once its client's
	// recorded model tokens (Usage.Total) are past it.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCostUSD stops the agent at its first tool call once the cost its
	// client reported (Usage.CostUSD) is past it.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// SelfRegroundKey names a run's check: its task's number (1, 2, …) and
// the step's number in that task (1, 2, …, as the run's history counts).
func SelfRegroundKey(task, step int) string { return fmt.Sprintf("%d:%d", task, step) }

// TaskNumber is the number of a run's task id (TaskID's inverse): 1 for
// the run's own id.
func TaskNumber(run, task string) int {
	if rest, ok := strings.CutPrefix(task, run+"."); ok {
		var n int
		if _, err := fmt.Sscanf(rest, "%d", &n); err == nil && n > 1 {
			return n
		}
	}
	return 1
}

// Suspended is a task set aside by reset_task, resumable by its ground goal.
type Suspended struct {
	Goal string `json:"goal"`
	Task string `json:"task"`
}

// LastCheck is the part of a check the run keeps for its hooks and lists.
type LastCheck struct {
	Step     int       `json:"step"`
	Reason   string    `json:"reason"`
	Drifting bool      `json:"drifting"`
	Phi      float64   `json:"phi"`
	Advice   string    `json:"advice"`
	Ground   string    `json:"ground"`
	At       time.Time `json:"at"`
}

// Ended reports whether the run is over.
func (r *Run) IsEnded() bool { return !r.Ended.IsZero() }

// RunEvent is one thing observed on a run: a tool call and its outcome, a
// check, a gate decision, a session or prompt. Its fields follow the
// reference's observed event (kind, name, tri-state ok, result, text).
type RunEvent struct {
	// ID makes recording idempotent: an event whose ID the run already has
	// is not recorded again. Empty: a fresh id.
	ID   string    `json:"id"`
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	Name string    `json:"name,omitempty"`
	// OK: true, false, or unknown (null).
	OK      laserbrain.OK   `json:"ok"`
	Result  json.RawMessage `json:"result,omitempty"`
	Text    string          `json:"text,omitempty"`
	Session string          `json:"session,omitempty"`
	// Subagent is the subagent of the session that made the call (its
	// type, as Claude Code's agent_type names it), "" for the session's
	// own agent.
	Subagent string `json:"subagent,omitempty"`
}

// RunEvent kinds.
const (
	KindTool     = "tool"    // a completed tool call (post-tool-use, post-tool-use-failure)
	KindCheck    = "check"   // a drift check
	KindGate     = "gate"    // a pre-tool-use decision on an action needing authorization
	KindSession  = "session" // session start / end, run start / end
	KindPrompt   = "prompt"  // a person spoke (user-prompt-submit)
	KindStop     = "stop"    // a Stop event and what the hook answered
	KindTask     = "task"    // reset_task set the run's task aside (the next check grounds a new one)
	KindOwn      = "own"     // a call of laserbrain's own tools (check_state, …), as the hooks saw it: reporting, not work
	KindAuthUsed = "authorized"
	// KindWaiting: the client told its user the agent waits for them (a
	// permission prompt, an idle prompt); Name is the client's kind for
	// it, Text its message. The run waits until its next event.
	KindWaiting = "waiting"
	// KindNetwork: a connection the agent's tree tried through laserbrain
	// run's boundary; Name is the answer (allowed, refused, asked), Text
	// says where, by which rule, with what bytes, Result holds the attempt.
	KindNetwork = "network"
	// KindAct: a command laserbrain act carried out, or refused, for the
	// agent outside its boundary; Name is the answer (done, refused).
	KindAct = "act"
	// KindLoss: a call deleted or overwrote more of the work tree than the
	// project policy lets go unreported, read off its undo checkpoint and
	// the next (Result is a LossResult).
	KindLoss = "loss"
	// KindModel: a model request the agent's client reported through its
	// own telemetry, received by laserbrain run; Name is the model, Result
	// a ModelRequest (its tokens and the cost the client reported).
	KindModel = "model"
	// KindCallTokens: what a tool call cost, read from the client's own
	// records once the agent ended; Name is the call's id, Result a
	// CallUsage.
	KindCallTokens = "tokens"
)

// LossResult is the Result of a KindLoss event: what the call changed and
// the command that takes it back.
type LossResult struct {
	// Call is the call's id (its checkpoint's #N when it has none), Tool
	// its tool and What its command lines or files.
	Call string `json:"call"`
	Tool string `json:"tool,omitempty"`
	What string `json:"what,omitempty"`
	// Summary is the change in words; Added, Modified, Deleted and
	// LostBytes its figures, Refs the refs that moved.
	Summary   string   `json:"summary"`
	Added     int      `json:"added,omitempty"`
	Modified  int      `json:"modified,omitempty"`
	Deleted   int      `json:"deleted,omitempty"`
	LostBytes int64    `json:"lost_bytes,omitempty"`
	Refs      []string `json:"refs,omitempty"`
	// Loss says what it lost past the policy's threshold.
	Loss string `json:"loss"`
	// Undo is the command that goes back to before the call.
	Undo string `json:"undo"`
}

// Waiting is the event a run waits on a person for: its latest event,
// when that is a waiting notification (KindWaiting). Any later event —
// the call the person allowed, their next prompt, a check — means
// someone answered. ok is false when the run waits for nobody.
func Waiting(events []RunEvent) (RunEvent, bool) {
	if len(events) == 0 || events[len(events)-1].Kind != KindWaiting {
		return RunEvent{}, false
	}
	return events[len(events)-1], true
}

// Wait is what a run waits on a person for, read off its waiting event:
// its client's kind of notification (permission_prompt, idle_prompt, …),
// its message, and since when.
type Wait struct {
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}

// WaitOf is waiting event e (what Waiting found) as a Wait.
func WaitOf(e RunEvent) *Wait { return &Wait{Kind: e.Name, Message: e.Text, Since: e.At} }

// GateResult is the Result of a KindGate event: what the gate decided,
// in fields rather than in the reason's words, so a reader (the fleet
// report) never parses the text written for the model.
type GateResult struct {
	// Decision is deny, ask or allow (stored as that word).
	Decision operator.Answer `json:"decision"`
	// Labels are the operator's labels for the action (its classification
	// of a command; "protected file: …" for a write the gate guards;
	// "halted by the supervisor" for an agent that was halted).
	Labels []string `json:"labels"`
	// Role is where the deciding match stood in the command (operator's
	// roles: executed, inline code, data, unknown, dry run); empty when no
	// command was classified.
	Role string `json:"role,omitempty"`
	// Presence is who could answer: attended, unattended or unknown.
	Presence string `json:"presence"`
	// Findings are the operator's findings behind the decision, when it
	// went ahead with a note (or the project policy let them through).
	Findings any `json:"findings,omitempty"`
	// Rule is the operator's rule that decided (operator.Rule…); Policy
	// the project policy's rules that let findings through, "id: reason".
	Rule   string   `json:"rule,omitempty"`
	Policy []string `json:"policy,omitempty"`
	// Action is the action's text as an authorization must name it (the
	// shell command, or "write <path>"), for a decision on an action a
	// person may authorize; "" otherwise.
	Action string `json:"action,omitempty"`
}

// ReadGateResult reads the Result of a KindGate event; ok is false when
// it holds no decision (none, unreadable, or recorded before results held
// one), so a reader falls back on the event's OK rather than taking an
// absent decision for an allow.
func ReadGateResult(raw json.RawMessage) (res GateResult, ok bool) {
	var probe struct {
		Decision *operator.Answer `json:"decision"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &probe) != nil || probe.Decision == nil || json.Unmarshal(raw, &res) != nil {
		return GateResult{}, false
	}
	return res, true
}

// Authorization is a person's permission for one kind of action, held as
// data: scoped to a fleet and optionally to one run or one agent, dated,
// expiring, and good for a number of uses (one by default).
type Authorization struct {
	ID    string `json:"id"`
	Fleet string `json:"fleet"`
	Run   string `json:"run,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Action is the action's text: a shell command (whitespace collapsed)
	// or "write <path>".
	Action  string    `json:"action"`
	Reason  string    `json:"reason,omitempty"`
	By      string    `json:"by,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	Uses    int       `json:"uses"`
	Used    []Use     `json:"used,omitempty"`
	Revoked time.Time `json:"revoked,omitzero"`
}

// Use is one action an authorization let through.
type Use struct {
	At  time.Time `json:"at"`
	Run string    `json:"run"`
}

// Live reports whether a can still allow an action at t.
func (a *Authorization) Live(t time.Time) bool {
	return a.Revoked.IsZero() && t.Before(a.Expires) && len(a.Used) < a.Uses
}

// Covers reports whether a applies to action by this run and agent in
// fleet. This is the one place an authorization is matched to an action:
// both are read as the operator keys an action (operator.ActionKey), so
// a command matches however it was quoted or spaced, and nothing else.
func (a *Authorization) Covers(fleet, run, agent, action string) bool {
	return a.Fleet == fleet && (a.Run == "" || a.Run == run) && (a.Agent == "" || a.Agent == agent) &&
		operator.ActionKey(a.Action) == operator.ActionKey(action)
}

// RunFilter selects runs to list.
type RunFilter struct {
	Fleet string // "" = every fleet
}

// Runs is the run registry.
type Runs interface {
	// CreateRun registers a new run; ErrExists when the id is taken.
	CreateRun(ctx context.Context, r Run) error
	// Run reads one run; ErrNotFound when there is none.
	Run(ctx context.Context, id string) (Run, error)
	// UpdateRun reads run id, applies f and writes the result, holding the
	// run against every other writer meanwhile. f's error aborts the write.
	UpdateRun(ctx context.Context, id string, f func(*Run) error) (Run, error)
	// AttachSession records that a Claude Code session belongs to run id
	// (idempotent).
	AttachSession(ctx context.Context, id, session string) error
	// RunForSession finds the run a session belongs to; ErrNotFound.
	RunForSession(ctx context.Context, session string) (Run, error)
	// ListRuns lists runs, oldest first.
	ListRuns(ctx context.Context, f RunFilter) ([]Run, error)
}

// Events keeps what was observed on each run.
type Events interface {
	// AppendEvent records e on run id; added is false when the run already
	// had an event with e's ID.
	AppendEvent(ctx context.Context, run string, e RunEvent) (added bool, err error)
	// AppendEvents records es on run id, in order, as one durable write
	// (a batch of checks records its events at once); an event whose ID
	// the run already has, or an earlier one of es has, is left out.
	// added counts the events recorded.
	AppendEvents(ctx context.Context, run string, es []RunEvent) (added int, err error)
	// Events lists run id's events, oldest first.
	Events(ctx context.Context, run string) ([]RunEvent, error)
}

// Authorizations keeps the permissions people gave.
type Authorizations interface {
	// AddAuthorization stores a; ErrExists when the id is taken.
	AddAuthorization(ctx context.Context, a Authorization) error
	// ListAuthorizations lists a fleet's authorizations ("" = all).
	ListAuthorizations(ctx context.Context, fleet string) ([]Authorization, error)
	// UseAuthorization spends one use of authorization id, atomically;
	// ErrSpent when it is expired, revoked or used up at u.At.
	UseAuthorization(ctx context.Context, id string, u Use) error
	// RevokeAuthorization ends authorization id at t.
	RevokeAuthorization(ctx context.Context, id string, t time.Time) error
}

// Versioner is an optional method of a fleet store: a value that changes
// whenever anything of a fleet does — its runs, their events, its halts,
// its journal, what the supervisor says — read in one cheap step, so a
// live view reads the fleet again only when it moved.
type Versioner interface {
	Version(ctx context.Context, fleet string) (string, error)
}

// Store is the fleet store.
type Store interface {
	Runs
	Events
	Authorizations
	Halts
	Journal
	Messages
	Close() error
}

// Authorize finds a live authorization covering the action (Grants) and
// spends one use of it (Spend). ok is false when none covers it.
func Authorize(ctx context.Context, s Authorizations, fleet, run, agent, action string, now time.Time) (a Authorization, ok bool, err error) {
	grants, err := Grants(ctx, s, fleet, run, agent, action, now)
	if err != nil || len(grants) == 0 {
		return Authorization{}, false, err
	}
	return Spend(ctx, s, grants, run, now)
}

// Grants are the live authorizations that cover the action for this run
// and agent in fleet (Covers), witnessed by the fleet's journal (s must
// keep one: Witness), the one closest to expiry first. Each call looks
// afresh: nothing is cached between actions but what the journal was read
// up to.
func Grants(ctx context.Context, s Authorizations, fleet, run, agent, action string, now time.Time) ([]Authorization, error) {
	all, err := s.ListAuthorizations(ctx, fleet)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Expires.Before(all[j].Expires) })
	var out []Authorization
	var w *Witness
	for _, cand := range all {
		if !cand.Live(now) || !cand.Covers(fleet, run, agent, action) {
			continue
		}
		// Only what laserbrain authorize journaled is honoured: a file
		// written any other way is ignored (Unwitnessed names it).
		if w == nil {
			j, ok := s.(Journal)
			if !ok {
				return nil, errors.New("the fleet store keeps no journal to witness authorizations")
			}
			m := ReadMachine()
			wit, err := ReadWitness(ctx, j, fleet, m.Verified(j, fleet))
			if err != nil {
				return nil, err
			}
			w = &wit
		}
		if w.Witnesses(cand) {
			out = append(out, cand)
		}
	}
	return out, nil
}

// Spend spends one use of the first of grants that has one left at now,
// for run: the authorization spent, with that use; ok is false when other
// processes spent them all first.
func Spend(ctx context.Context, s Authorizations, grants []Authorization, run string, now time.Time) (Authorization, bool, error) {
	for _, cand := range grants {
		err := s.UseAuthorization(ctx, cand.ID, Use{At: now, Run: run})
		if errors.Is(err, ErrSpent) {
			continue // another process spent it first
		}
		if err != nil {
			return Authorization{}, false, err
		}
		cand.Used = append(cand.Used, Use{At: now, Run: run})
		return cand, true, nil
	}
	return Authorization{}, false, nil
}

// ValidateRunID is laserbrain's rule for run ids, with room for the task
// suffix (".N") the run's later tasks take.
func ValidateRunID(id string) error {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return err
	}
	if len(id) > 56 {
		return fmt.Errorf("run id %q: at most 56 characters", id)
	}
	return nil
}

// TaskID names a run's n-th task in the laserbrain store: the run id for
// the first, then id.2, id.3, ...
func TaskID(run string, n int) string {
	if n <= 1 {
		return run
	}
	return fmt.Sprintf("%s.%d", run, n)
}

// ID resolves the fleet of the repository containing dir: $LASERBRAIN_FLEET
// when set, else the repository's root commit (the smallest, when it has
// several), else "dir:" and dir's absolute path for a directory outside any
// repository or one without commits.
func ID(ctx context.Context, dir string) (string, error) {
	return IDEnv(ctx, dir, os.Getenv)
}

// IDEnv is ID for a caller whose environment getenv reads.
func IDEnv(ctx context.Context, dir string, getenv func(string) string) (string, error) {
	if f := strings.TrimSpace(getenv("LASERBRAIN_FLEET")); f != "" {
		return f, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "git", "-C", abs, "rev-list", "--max-parents=0", "HEAD")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err = reap.Run(cmd)
	out := stdout.Bytes()
	if err == nil {
		roots := strings.Fields(string(out))
		if len(roots) > 0 {
			sort.Strings(roots)
			return roots[0], nil
		}
	}
	return "dir:" + abs, nil
}

// NewID returns a fresh random id (12 hex digits), like laserbrain's runs.
func NewID() string { return laserbrain.NewRunID() }
