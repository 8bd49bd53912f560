package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// ingestStartDeadline bounds the wait for the receiver to say its address.
const ingestStartDeadline = 5 * time.Second

// ingestCatchUp bounds how long a tool call's question waits, under
// --max-cost, for the client's report of the model requests its
// transcript already holds (the client sends what it recorded every
// telemetry.IngestInterval).
const ingestCatchUp = time.Second

// ingest is the receiver of one run's client telemetry (laserbrain-otel
// receive, outside the boundary) and the model requests it reported. Each
// is recorded on the run as a fleet.KindModel event as it arrives.
type ingest struct {
	url     string
	client  client.Name
	forward telemetry.Forward
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ended   chan struct{} // closed when the receiver's output has ended

	stopOnce sync.Once
	stopErr  error

	mu       sync.Mutex
	usage    fleet.Usage
	arrived  chan struct{} // closed and replaced at each request
	record   func(fleet.RunEvent)
	pending  []fleet.RunEvent // arrived before the run was known
	lastWord telemetry.Received
}

// startIngest starts the receiver for an agent command whose client
// reports its model requests over OTLP (Claude Code, Codex, Gemini CLI),
// with laserbrain-otel beside self and telemetry not switched off; nil
// when not.
func startIngest(self string, program string, getenv func(string) string) (*ingest, error) {
	prog, ok := ingestProgram(self, program, getenv)
	if !ok {
		return nil, nil
	}
	c, _ := client.Detect(program)
	in := &ingest{client: c, forward: telemetry.ClientForward(string(c), getenv), ended: make(chan struct{}), arrived: make(chan struct{})}
	args := append([]string{"receive"}, in.forward.Args()...)
	in.cmd = exec.Command(prog, args...)
	// Its own process group: a terminal's ^C goes to the agent, and the
	// receiver takes what the agent sends as it ends.
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in.cmd.Stderr = os.Stderr
	var err error
	if in.stdin, err = in.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := in.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := reap.Start(in.cmd); err != nil {
		return nil, fmt.Errorf("%s receive: %w", otelName, err)
	}
	listening := make(chan string, 1)
	go in.read(out, listening)
	select {
	case in.url = <-listening:
	case <-time.After(ingestStartDeadline):
	}
	if in.url == "" {
		_ = in.stop()
		return nil, fmt.Errorf("%s receive said no address within %s", otelName, ingestStartDeadline)
	}
	return in, nil
}

// ingestProgram is the receiver's program, when an agent command's client
// reports its model requests over OTLP (Claude Code, Codex, Gemini CLI),
// laserbrain-otel is beside self and telemetry is not switched off.
func ingestProgram(self, program string, getenv func(string) string) (string, bool) {
	if c, ok := client.Detect(program); !ok || (c != client.Claude && c != client.Codex && c != client.Gemini) {
		return "", false
	}
	if v := strings.ToLower(strings.TrimSpace(getenv(telemetry.EnvSwitch))); v == "off" {
		return "", false
	}
	prog := filepath.Join(filepath.Dir(self), otelName)
	if _, err := os.Stat(prog); err != nil {
		return "", false
	}
	return prog, true
}

// policyBudget holds the agent to the project policy's budget for it
// (budgets: its name's, else "*"'s) where the command line sets none, and
// where laserbrain can measure it for the agent's client; a budget it
// cannot hold is said on standard error, and the run goes on without it.
func policyBudget(opts *runOptions, self string) {
	cwd, _ := os.Getwd()
	pol, err := agentrun.LoadPolicy(cwd, policyschema.Validate)
	if err != nil || pol.Err != "" {
		return
	}
	program := opts.command[0]
	name := opts.agent
	if name == "" {
		name = filepath.Base(program)
	}
	b, ok := pol.BudgetOf(name)
	if !ok {
		return
	}
	if b.MaxTokens > 0 && !slices.Contains(opts.budgetSet, "max-tokens") {
		if _, received := ingestProgram(self, program, os.Getenv); agentUsage(program) == nil && !received {
			fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: the project policy's max_tokens for %s is not held: laserbrain reads the tokens of Claude Code's, Codex's and Gemini CLI's runs only\n", name)
		} else {
			opts.limits.MaxTokens = b.MaxTokens
		}
	}
	if b.MaxCostUSD > 0 && !slices.Contains(opts.budgetSet, "max-cost") {
		if _, ok := ingestProgram(self, program, os.Getenv); !ok {
			fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: the project policy's max_cost_usd for %s is not held: laserbrain knows the cost of Claude Code's runs only, as its own telemetry reports it (%s beside laserbrain, %s not off)\n", name, otelName, telemetry.EnvSwitch)
		} else {
			opts.limits.MaxCostUSD = b.MaxCostUSD
		}
	}
}

// read takes the receiver's lines until its output ends.
func (in *ingest) read(out io.Reader, listening chan<- string) {
	defer close(in.ended)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r telemetry.Received
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch {
		case r.Listen != "":
			listening <- r.Listen
		case r.Request != nil:
			in.add(fleet.ModelEvent(r.At, *r.Request))
			in.mu.Lock()
			in.usage.Add(r.Request.Usage)
			close(in.arrived)
			in.arrived = make(chan struct{})
			in.mu.Unlock()
		default:
			in.mu.Lock()
			in.lastWord = r
			in.mu.Unlock()
		}
	}
}

// add records e on the run, or keeps it until the run is known.
func (in *ingest) add(e fleet.RunEvent) {
	in.mu.Lock()
	rec := in.record
	if rec == nil {
		in.pending = append(in.pending, e)
	}
	in.mu.Unlock()
	if rec != nil {
		rec(e)
	}
}

// runIngest starts the receiver of the agent's client telemetry for
// laserbrain run and points the agent at it; nil when its client sends
// none we read. --max-cost needs it.
func runIngest(opts *runOptions, self string, so *agentrun.SpawnOptions) (*ingest, error) {
	in, err := startIngest(self, so.Command[0], os.Getenv)
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: the client's own telemetry is not received: %v\n", err)
	}
	if opts.limits.MaxCostUSD > 0 && in == nil {
		return nil, cli.Usagef("--max-cost: laserbrain knows what a run costs only as Claude Code's own telemetry reports it (received by %s beside laserbrain, unless %s=off), not for %s; nothing was started",
			otelName, telemetry.EnvSwitch, so.Command[0])
	}
	if in == nil {
		return nil, nil
	}
	if opts.limits.MaxCostUSD > 0 && in.client != client.Claude {
		_ = in.stop()
		return nil, cli.Usagef("--max-cost: %s reports no cost of its requests (laserkit never estimates one); nothing was started", so.Command[0])
	}
	base := so.Env
	if base == nil {
		base = os.Environ()
	}
	so.Env = in.env(base)
	if so.Usage == nil {
		so.Usage = in.reported // no records of its own: what it reported
	} else {
		so.Usage = in.readUsage(so.Usage, opts.limits.MaxCostUSD > 0)
	}
	return in, nil
}

// endpoint is the receiver's URL, "" without one.
func (in *ingest) endpoint() string {
	if in == nil {
		return ""
	}
	return in.url
}

// recordOn starts recording on run id (the requests that came before
// first).
func (in *ingest) recordOn(sup *agentrun.Tracker, id string) {
	if in == nil {
		return
	}
	st, err := sup.Fleet()
	if err != nil {
		return
	}
	record := func(e fleet.RunEvent) { _, _ = st.AppendEvent(context.Background(), id, e) }
	in.mu.Lock()
	pending := in.pending
	in.pending, in.record = nil, record
	in.mu.Unlock()
	for _, e := range pending {
		record(e)
	}
}

// env is the agent's environment with its client's telemetry pointed at
// the receiver.
func (in *ingest) env(environ []string) []string {
	return telemetry.ClientEnv(string(in.client), environ, in.url)
}

// prepare adds, for a client whose telemetry is set on its command line
// (Codex), the settings that point it at the receiver to the per-run
// configuration so.Prepare adds ahead of the person's arguments.
func (in *ingest) prepare(so *agentrun.SpawnOptions) {
	if in == nil || in.client != client.Codex || so.Prepare == nil {
		return
	}
	prep, extra := so.Prepare, telemetry.CodexArgs(in.url, !in.forward.Empty())
	so.Prepare = func(tmp string) ([]string, []string, error) {
		args, env, err := prep(tmp)
		return append(args, extra...), env, err
	}
}

// caughtUp is the usage reported so far, once it counts at least n
// requests or ingestCatchUp has passed.
func (in *ingest) caughtUp(n int) fleet.Usage {
	deadline := time.NewTimer(ingestCatchUp)
	defer deadline.Stop()
	for {
		in.mu.Lock()
		u, arrived := in.usage, in.arrived
		in.mu.Unlock()
		if u.Requests >= n {
			return u
		}
		select {
		case <-arrived:
		case <-deadline.C:
			return u
		}
	}
}

// reported is the usage the client reported so far; ok once it reported
// a model request.
func (in *ingest) reported(fleet.Run) (fleet.Usage, bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.usage, in.usage.Requests > 0, nil
}

// readUsage is how the limits read the agent's spending: the transcript's
// tokens (exact as the agent's turn stands), and, once the receiver has
// as many model requests (waited for under --max-cost), the client's own
// report of them with their cost.
func (in *ingest) readUsage(transcript func(fleet.Run) (fleet.Usage, bool, error), waitCost bool) func(fleet.Run) (fleet.Usage, bool, error) {
	return func(r fleet.Run) (fleet.Usage, bool, error) {
		t, ok, err := transcript(r)
		if err != nil {
			return t, ok, err
		}
		var u fleet.Usage
		if waitCost {
			u = in.caughtUp(t.Requests)
		} else {
			in.mu.Lock()
			u = in.usage
			in.mu.Unlock()
		}
		if u.Requests >= t.Requests && u.Requests > 0 {
			return u, true, nil
		}
		if u.CostUSD != nil {
			t.CostUSD = u.CostUSD // what was reported so far: a lower bound
		}
		return t, ok, nil
	}
}

// stop ends the receiver once the agent has exited (it answers what the
// client still sends first) and says what it could not forward. Once.
func (in *ingest) stop() error {
	if in == nil {
		return nil
	}
	in.stopOnce.Do(func() { in.stopErr = in.halt() })
	return in.stopErr
}

func (in *ingest) halt() error {
	_ = in.stdin.Close()
	<-in.ended
	err := reap.Wait(in.cmd)
	in.mu.Lock()
	last := in.lastWord
	in.mu.Unlock()
	if last.NotForwarded > 0 {
		return fmt.Errorf("%d OTLP requests of the agent's client were not forwarded to %s: %s", last.NotForwarded, in.forward, last.ForwardError)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s receive: %v", otelName, err)
	}
	return nil
}

// modelUsage is what a run's client reported through its telemetry, from
// the run's model events (read here when the caller has not read them:
// nil); ok is false when it reported nothing.
func modelUsage(ctx context.Context, st fleet.Store, id string, events []fleet.RunEvent) (fleet.Usage, bool) {
	if events == nil {
		var err error
		if events, err = st.Events(ctx, id); err != nil {
			return fleet.Usage{}, false
		}
	}
	return fleet.ModelUsage(events)
}
