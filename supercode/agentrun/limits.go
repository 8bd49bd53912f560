package agentrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Runaway limits of `laserbrain run`: a wall-clock --timeout, a number of
// tool calls (--max-tool-calls) and a number of drifting checks in a row
// (--max-checks-off-ground). The agent's tool calls and checks happen in
// other processes — its hooks and laserbrain's MCP server — so the parent
// is told of them on a unix socket it owns, named to the agent's
// processes by LASERBRAIN_RUN_CONTROL:
//
//   - pre-tool-use asks before every tool call ("tool"); the parent counts
//     it and answers, and past a limit the call is refused with the reason
//     for the model. A hook that cannot get an answer within
//     ControlDeadline, or finds the socket held by a process that is not
//     its ancestor, refuses the call: the limits never fail open.
//   - a check (check_state, laserbrain check) reports itself ("check") once
//     the run has counted it; the parent then reads the run from the store,
//     whose OffGround count the agent cannot write.
//
// A message only adds a tool call or asks for a re-read, so a process that
// forges one can only bring its own stop closer. Runs nest: a laserbrain
// run started under another passes the questions it lets through on to the
// outer one (and one with no limits of its own leaves the outer socket in
// the agent's environment), so a nested run never escapes the outer limits. When a limit is reached the
// parent journals it on the run (an event and Run.Stopped), refuses every
// later tool call, gives the agent StopGrace to end its turn (none for the
// timeout), then sends it SIGTERM and, KillGrace later, SIGKILL — to the
// agent process, as it forwards signals. laserbrain run then exits
// the exit-code table's "exhausted", whatever the agent's own status.

// EnvControl names the socket laserbrain run listens on for its limits.
const EnvControl = "LASERBRAIN_RUN_CONTROL"

// Defaults of laserbrain run's limits (0 turns a limit off).
const (
	DefaultRunTimeout   = 6 * time.Hour
	DefaultMaxToolCalls = 1000
	DefaultMaxOffGround = 5
	// DefaultStopGrace is how long an agent past --max-tool-calls or
	// --max-checks-off-ground has to end its turn (every tool call refused)
	// before it is sent SIGTERM.
	DefaultStopGrace = 10 * time.Second
	// KillGrace is how long after SIGTERM the agent is killed.
	KillGrace = 5 * time.Second
	// ControlDeadline bounds one question of a hook to laserbrain run.
	ControlDeadline = 2 * time.Second
)

// The limits' names, as their flags spell them.
const (
	LimitTimeout   = "--timeout"
	LimitToolCalls = "--max-tool-calls"
	LimitOffGround = "--max-checks-off-ground"
	LimitLoss      = "--halt-on-loss"
	LimitTokens    = "--max-tokens"
	LimitCost      = "--max-cost"
)

// LimitStop is how a limit stopped the agent.
type LimitStop struct {
	Limit  string `json:"limit"`  // LimitTimeout, LimitToolCalls, LimitOffGround, LimitLoss, LimitTokens or LimitCost
	Reason string `json:"reason"` // what was reached, in words
	// Signal is what the agent was sent: "" when it ended on its own within
	// the grace, "SIGTERM", or "SIGKILL".
	Signal string `json:"signal,omitempty"`
	// AgentExit is the agent's own status.
	AgentExit int `json:"agent_exit"`
}

// Text is the stop as the run's summary says it.
func (s LimitStop) Text() string {
	t := s.Reason
	switch s.Signal {
	case "":
		t += fmt.Sprintf("; the agent ended its turn (its own exit %d)", s.AgentExit)
	default:
		t += fmt.Sprintf("; the agent was stopped with %s (exit %d)", s.Signal, s.AgentExit)
	}
	return t
}

type controlRequest struct {
	Op     string `json:"op"` // "tool", "check" or "loss"
	Tool   string `json:"tool,omitempty"`
	CallID string `json:"call,omitempty"`
	Reason string `json:"reason,omitempty"` // a loss: what was lost
}

type controlAnswer struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// LimitToolCall is pre-tool-use's question to laserbrain run before a tool
// call, when the run holds the agent to limits (LASERBRAIN_RUN_CONTROL is
// set): "" lets the call go on, anything else is the reason to refuse it.
// Without the variable it answers "" at once.
func (s *Tracker) LimitToolCall(tool, callID string) string {
	path := s.getenv(EnvControl)
	if path == "" {
		return ""
	}
	ans, err := askControl(path, controlRequest{Op: "tool", Tool: tool, CallID: callID}, s.InSupervisor)
	if err != nil {
		return fmt.Sprintf("laserbrain: refused: this run's runaway limits cannot be checked (%v), so no tool call goes ahead. End your turn and say what is done and what is left.", err)
	}
	if !ans.OK {
		return ans.Reason
	}
	return ""
}

// ReportLoss tells laserbrain run, when it holds the agent to limits,
// that a call deleted or overwrote more than the project policy's undo
// threshold (why says what): under --halt-on-loss the run stops the agent
// there, and the reason to refuse the next call comes back; "" otherwise.
// A forged report can only stop the agent that sent it.
func (s *Tracker) ReportLoss(why, callID string) string {
	path := s.getenv(EnvControl)
	if path == "" {
		return ""
	}
	ans, err := askControl(path, controlRequest{Op: "loss", CallID: callID, Reason: why}, s.InSupervisor)
	if err != nil || ans.OK {
		return ""
	}
	return ans.Reason
}

// checked tells laserbrain run, when it holds the agent to limits, that the
// run counted a check. Best effort: the check stands either way.
func (s *Tracker) checked() {
	if path := s.getenv(EnvControl); path != "" {
		_, _ = askControl(path, controlRequest{Op: "check"}, s.InSupervisor)
	}
}

// askControl asks laserbrain run one question on its socket, within
// ControlDeadline, after checking that the socket's owner is an ancestor
// of this process (the laserbrain run that started the agent), or this
// process when self (the run's own broker asking for its agent).
func askControl(path string, req controlRequest, self bool) (controlAnswer, error) {
	deadline := time.Now().Add(ControlDeadline)
	d := net.Dialer{Deadline: deadline}
	conn, err := d.Dial("unix", path)
	if err != nil {
		return controlAnswer{}, fmt.Errorf("laserbrain run does not answer at %s: %w", path, err)
	}
	defer conn.Close()
	if err := checkOwner(conn.(*net.UnixConn), self); err != nil {
		return controlAnswer{}, err
	}
	_ = conn.SetDeadline(deadline)
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return controlAnswer{}, fmt.Errorf("laserbrain run at %s: %w", path, err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return controlAnswer{}, fmt.Errorf("laserbrain run at %s gave no answer: %w", path, err)
	}
	var ans controlAnswer
	if err := json.Unmarshal(line, &ans); err != nil {
		return controlAnswer{}, fmt.Errorf("laserbrain run at %s answered %q", path, line)
	}
	return ans, nil
}

// limiter holds one run's agent to its limits: the control socket's
// server, the counts, and the stop.
type limiter struct {
	limits fleet.Limits
	grace  time.Duration
	runID  string
	// usage reads the tokens the agent has spent (nil: its client's are
	// not read, and --max-tokens holds nothing).
	usage func(fleet.Run) (fleet.Usage, bool, error)
	// recorded: SpawnOptions.Recorded.
	recorded func(fleet.Run, string) bool
	sup      *Tracker
	ln       *net.UnixListener
	path     string
	// outer is the control socket of a laserbrain run this one runs
	// under: its limits hold this agent too, so what this limiter lets
	// through is asked there as well.
	outer string

	storeMu sync.Mutex // the store is read and written from the handlers

	mu    sync.Mutex
	calls int
	// seen are the tool call ids counted: a call asked about twice (two
	// hook layers, or laserbrain-gate handing the event to laserbrain)
	// counts once.
	seen map[string]bool
	hit  *LimitStop
	proc *os.Process

	exited  chan struct{} // closed when the agent has exited
	conns   sync.WaitGroup
	stopper sync.WaitGroup
	timer   *time.Timer
}

// anyLimit reports whether l sets any limit.
func anyLimit(l fleet.Limits) bool {
	return l.Timeout > 0 || l.MaxToolCalls > 0 || l.MaxOffGround > 0 || l.HaltOnLoss || l.MaxTokens > 0 || l.MaxCostUSD > 0
}

// newLimiter listens on a socket in dir (or, when that path is too long
// for a unix socket, in a directory of its own under /tmp).
func (s *Tracker) newLimiter(dir, runID string, limits fleet.Limits, grace time.Duration) (*limiter, func(), error) {
	cleanup := func() {}
	path := filepath.Join(dir, "control.sock")
	if len(path) > 100 {
		d, err := os.MkdirTemp("/tmp", "lb-run-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(d) }
		path = filepath.Join(d, "control.sock")
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("the limits' control socket: %w", err)
	}
	_ = os.Chmod(path, 0o600)
	l := &limiter{limits: limits, grace: grace, runID: runID, sup: s, ln: ln, path: path, exited: make(chan struct{}),
		seen: map[string]bool{}, outer: s.getenv(EnvControl)}
	go l.serve()
	return l, cleanup, nil
}

// started arms the limiter on the agent's process: the timeout starts now.
func (l *limiter) started(p *os.Process) {
	l.mu.Lock()
	l.proc = p
	l.mu.Unlock()
	if l.limits.Timeout > 0 {
		l.timer = time.AfterFunc(l.limits.Timeout, func() {
			l.reach(LimitTimeout, fmt.Sprintf("--timeout %s reached", l.limits.Timeout), 0)
		})
	}
}

// done is called once the agent has exited: nothing more is served, every
// handler and the stop have finished, and it returns the stop, if any.
func (l *limiter) done(agentExit int) *LimitStop {
	close(l.exited)
	if l.timer != nil {
		l.timer.Stop()
	}
	_ = l.ln.Close()
	l.conns.Wait()
	l.stopper.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hit == nil {
		return nil
	}
	h := *l.hit
	h.AgentExit = agentExit
	return &h
}

// holdBudget stops the agent at tool call n when what its client
// recorded is past --max-tokens or --max-cost, naming the figures.
func (l *limiter) holdBudget(n int, tool, call string) {
	if (l.limits.MaxTokens <= 0 && l.limits.MaxCostUSD <= 0) || l.usage == nil {
		return
	}
	l.storeMu.Lock()
	r, err := l.run()
	l.storeMu.Unlock()
	if err != nil {
		return
	}
	if l.recorded != nil && call != "" {
		for deadline := time.Now().Add(UsageWait); !l.recorded(r, call) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	u, ok, err := l.usage(r)
	if err != nil || !ok {
		return
	}
	switch {
	case l.limits.MaxTokens > 0 && u.Total() > l.limits.MaxTokens:
		l.reach(LimitTokens, fmt.Sprintf("--max-tokens %d reached: %s spent; tool call %d (%s) was refused", l.limits.MaxTokens, u.Text(), n, tool), l.grace)
	case l.limits.MaxCostUSD > 0 && u.Cost() > l.limits.MaxCostUSD:
		l.reach(LimitCost, fmt.Sprintf("--max-cost %s reached: %s spent; tool call %d (%s) was refused", fleet.USD(l.limits.MaxCostUSD), u.Text(), n, tool), l.grace)
	}
}

// UsageWait is how long a tool call's question waits for the client to
// record the response that asked for it before the budget is read from
// what is recorded so far.
const UsageWait = time.Second

func (l *limiter) toolCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

func (l *limiter) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.conns.Add(1)
		go func() {
			defer l.conns.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(ControlDeadline))
			line, err := bufio.NewReader(c).ReadBytes('\n')
			if err != nil {
				return
			}
			var req controlRequest
			ans := controlAnswer{Reason: "laserbrain: refused: the question to laserbrain run was not understood"}
			if json.Unmarshal(line, &req) == nil {
				ans = l.answer(req)
			}
			b, _ := json.Marshal(ans)
			_, _ = c.Write(append(b, '\n'))
		}()
	}
}

func (l *limiter) answer(req controlRequest) controlAnswer {
	switch req.Op {
	case "tool":
		l.mu.Lock()
		if req.CallID == "" || !l.seen[req.CallID] {
			l.calls++
			if req.CallID != "" {
				l.seen[req.CallID] = true
			}
		}
		n, hit := l.calls, l.hit
		l.mu.Unlock()
		if hit == nil && l.limits.MaxToolCalls > 0 && n > l.limits.MaxToolCalls {
			l.reach(LimitToolCalls, fmt.Sprintf("--max-tool-calls %d reached: tool call %d (%s) was refused", l.limits.MaxToolCalls, n, req.Tool), l.grace)
		}
		if hit == nil {
			l.holdBudget(n, req.Tool, req.CallID)
		}
		l.mu.Lock()
		hit = l.hit
		l.mu.Unlock()
		if hit == nil && l.outer != "" {
			ans, err := askControl(l.outer, req, false)
			if err != nil {
				return controlAnswer{Reason: fmt.Sprintf("laserbrain: refused: the runaway limits of the laserbrain run this one runs under cannot be checked (%v), so no tool call goes ahead. End your turn and say what is done and what is left.", err)}
			}
			return ans
		}
		if hit == nil {
			return controlAnswer{OK: true}
		}
		reason := "laserbrain: refused: " + hit.Reason + ". laserbrain run is stopping you: run no more tools; end your turn now, saying what is done and what is left."
		l.record(fleet.RunEvent{ID: limitEventID(req.CallID), At: l.sup.now(), Kind: fleet.KindGate, Name: req.Tool, OK: laserbrain.OKFalse, Text: reason})
		return controlAnswer{Reason: reason}
	case "check":
		if l.limits.MaxOffGround > 0 {
			l.storeMu.Lock()
			r, err := l.run()
			l.storeMu.Unlock()
			if err == nil && r.OffGround >= l.limits.MaxOffGround {
				last := ""
				if r.Last != nil {
					last = " (the last: " + r.Last.Reason + ")"
				}
				l.reach(LimitOffGround, fmt.Sprintf("--max-checks-off-ground %d reached: %d checks in a row drifted%s", l.limits.MaxOffGround, r.OffGround, last), l.grace)
			}
		}
		if l.outer != "" {
			_, _ = askControl(l.outer, req, false)
		}
		return controlAnswer{OK: true}
	case "loss":
		return l.loss(req)
	}
	return controlAnswer{Reason: fmt.Sprintf("laserbrain: refused: unknown question %q to laserbrain run", req.Op)}
}

// loss stops the agent under --halt-on-loss (the outer run's limits too
// are asked); without it the loss was only reported.
func (l *limiter) loss(req controlRequest) controlAnswer {
	if l.limits.HaltOnLoss {
		l.reach(LimitLoss, fmt.Sprintf("--halt-on-loss: %s", req.Reason), l.grace)
		l.mu.Lock()
		hit := l.hit
		l.mu.Unlock()
		return controlAnswer{Reason: "laserbrain: refused: " + hit.Reason + ". laserbrain run is stopping you: run no more tools; end your turn now, saying what is done and what is left (laserbrain undo takes the loss back)."}
	}
	if l.outer != "" {
		if ans, err := askControl(l.outer, req, false); err == nil {
			return ans
		}
	}
	return controlAnswer{OK: true}
}

func limitEventID(call string) string {
	if call == "" {
		return ""
	}
	return "limit:" + call
}

func (l *limiter) run() (fleet.Run, error) {
	st, err := l.sup.Fleet()
	if err != nil {
		return fleet.Run{}, err
	}
	return st.Run(context.Background(), l.runID)
}

// record appends an event on the run, best effort.
func (l *limiter) record(ev fleet.RunEvent) {
	l.storeMu.Lock()
	defer l.storeMu.Unlock()
	if st, err := l.sup.Fleet(); err == nil {
		_, _ = st.AppendEvent(context.Background(), l.runID, ev)
	}
}

// reach stops the agent at a limit, once: the stop is journaled on the run
// (Run.Stopped and a "limit" event), and after grace (0: at once) the agent
// is sent SIGTERM, then SIGKILL, unless it has exited.
func (l *limiter) reach(limit, reason string, grace time.Duration) {
	l.mu.Lock()
	if l.hit != nil {
		l.mu.Unlock()
		return
	}
	l.hit = &LimitStop{Limit: limit, Reason: reason}
	proc := l.proc
	l.stopper.Add(1)
	l.mu.Unlock()
	l.storeMu.Lock()
	if st, err := l.sup.Fleet(); err == nil {
		ctx := context.Background()
		_, _ = st.UpdateRun(ctx, l.runID, func(r *fleet.Run) error { r.Stopped = reason; return nil })
		_, _ = st.AppendEvent(ctx, l.runID, fleet.RunEvent{At: l.sup.now(), Kind: fleet.KindSession, Name: "limit", OK: laserbrain.OKFalse, Text: reason})
	}
	l.storeMu.Unlock()
	go func() {
		defer l.stopper.Done()
		for _, step := range []struct {
			wait time.Duration
			sig  syscall.Signal
			name string
		}{{grace, syscall.SIGTERM, "SIGTERM"}, {KillGrace, syscall.SIGKILL, "SIGKILL"}} {
			t := time.NewTimer(step.wait)
			select {
			case <-l.exited:
				t.Stop()
				return
			case <-t.C:
			}
			if proc == nil || errors.Is(proc.Signal(step.sig), os.ErrProcessDone) {
				return
			}
			l.mu.Lock()
			l.hit.Signal = step.name
			l.mu.Unlock()
		}
	}()
}
