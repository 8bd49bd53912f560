package report

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// FromFleet is the adapter from the fleet store (supercode/fleet) to the
// report: every run of the fleet is an agent, named as the supervisor names
// it (fleet.RunAgent), its tasks' checks read from laserbrain's run store,
// its coverage from its events (an unmeasured run is judged unmeasured);
// its footprint is what the supervisor counts (supervise.EventFiles: the
// files its file tools wrote, and those its shell commands wrote or
// named), relative to repo; the gate's recorded decisions are listed with
// their labels.
func FromFleet(ctx context.Context, st fleet.Store, runs laserbrain.Store, fleetID, repo string) ([]Agent, []GateDecision, error) {
	list, err := st.ListRuns(ctx, fleet.RunFilter{Fleet: fleetID})
	if err != nil {
		return nil, nil, err
	}
	agents := make([]Agent, len(list))
	gates := make([][]GateDecision, len(list))
	err = eachRun(len(list), func(i int) (err error) {
		agents[i], gates[i], err = fromRun(ctx, st, runs, list[i], repo)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	gate := []GateDecision{}
	for _, g := range gates {
		gate = append(gate, g...)
	}
	sort.SliceStable(gate, func(i, j int) bool { return gate[i].At.Before(gate[j].At) })
	return agents, gate, nil
}

// eachRun calls read(i) for each of n runs, as many at once as there are
// cores (each run's files are its own, and a fleet's are read whole), and
// returns the error of the first run in order that failed.
func eachRun(n int, read func(i int) error) error {
	errs := make([]error, n)
	var failed atomic.Bool
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if failed.Load() {
					continue // an earlier run failed: the rest are not needed
				}
				if errs[i] = read(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fromRun reads one run of the fleet as an agent, with the gate's
// decisions on it.
func fromRun(ctx context.Context, st fleet.Store, runs laserbrain.Store, r fleet.Run, repo string) (Agent, []GateDecision, error) {
	var tasks []*laserbrain.Run
	for n := 1; n <= max(r.Tasks, 1); n++ {
		lr, err := runs.ReadRun(ctx, fleet.TaskID(r.ID, n))
		if errors.Is(err, laserbrain.ErrNoRun) {
			continue // a task opened but never checked
		}
		if err != nil {
			return Agent{}, nil, err
		}
		tasks = append(tasks, lr)
	}
	name := fleet.RunAgent(r)
	a := AgentFromRuns(name, r.ID, tasks)
	if a.Ground == "" {
		a.Ground = r.Goal
	}
	a.Created, a.Ended = r.Created, r.Ended
	if r.Judgment != "" {
		a.Judgment = r.Judgment
	}
	if r.Ponder != "" {
		a.SameAs = fleet.PonderAgent(r.Ponder)
	}
	a.Finished = supervise.Finished(r.IsEnded(), lastDistance(a))
	events, err := st.Events(ctx, r.ID)
	if err != nil {
		return Agent{}, nil, err
	}
	a.Footprint = footprint(events, repo, r.Dir)
	a.Client = ClientOf(r)
	live(&a, events)
	if a.LastTool != nil && repo != "" {
		// Paths in the repository, as the person names them.
		a.LastTool.Text = strings.ReplaceAll(a.LastTool.Text, repo+string(filepath.Separator), "")
	}
	figs := coverage.Measure(events)
	a.Coverage = &figs
	a.Network = NetworkOf(events)
	if u, ok := fleet.ModelUsage(events); ok {
		a.Tokens = &u // what the client reported of each model request
	}
	a.Spending = spending(events)
	a.CallTokens = CallTokensOf(events)
	a.Judgment = coverage.Judge(laserbrain.Judgment{Verdict: a.Judgment}, figs).Verdict
	var gate []GateDecision
	for _, e := range events {
		if e.Kind == fleet.KindGate {
			gate = append(gate, gateDecision(name, r.ID, e))
		}
	}
	return a, gate, nil
}

// ClientOf names the agent client of a run: the one whose hooks opened
// it, else the one `laserbrain run` started (by its program's name), else
// that program's name; "" when nothing says.
func ClientOf(r fleet.Run) string {
	if r.Client != "" {
		return client.Name(r.Client).Title()
	}
	if len(r.Command) > 0 {
		if n, ok := client.Detect(r.Command[0]); ok {
			return n.Title()
		}
		return filepath.Base(r.Command[0])
	}
	return ""
}

// live fills what an agent is doing now from its events: what it waits on
// a person for (fleet.Waiting), its latest tool call and when anything
// was last seen of it.
func live(a *Agent, events []fleet.RunEvent) {
	if w, ok := fleet.Waiting(events); ok {
		a.Waiting = fleet.WaitOf(w)
	}
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.Kind == fleet.KindTool {
			a.LastTool = &ToolCall{At: e.At, Tool: e.Name, Text: e.Text, OK: e.OK}
			break
		}
	}
	for _, e := range events {
		if e.At.After(a.LastEvent) {
			a.LastEvent = e.At
		}
		if e.Kind == fleet.KindLoss {
			noteLoss(a, e)
		}
	}
	if l := a.Last(); l != nil && l.At.After(a.LastEvent) {
		a.LastEvent = l.At
	}
}

// settle gives each agent its status, once its halt is known: finished as
// the supervisor reads it (supervise.Finished: ended, closed, or at its
// ground), else halted, waiting, unmeasured or working.
func settle(agents []Agent) {
	for i := range agents {
		a := &agents[i]
		switch {
		case a.Finished || !a.Ended.IsZero():
			a.Status, a.Waiting = StatusFinished, nil
		case a.Halt != nil && a.Halt.Released.IsZero():
			a.Status = StatusHalted
		case a.Waiting != nil:
			a.Status = StatusWaiting
		case a.Unmeasured():
			a.Status = StatusUnmeasured
		default:
			a.Status = StatusWorking
		}
	}
}

// footprint is the files an agent's events touched, sorted (an event
// that repeats one already read is not read again: supervise.FileReader).
func footprint(events []fleet.RunEvent, repo, dir string) []string {
	seen := map[string]bool{}
	var fr supervise.FileReader
	for _, e := range events {
		for _, p := range fr.EventFiles(repo, dir, e) {
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// gateDecision reads one recorded gate event: its result holds the
// decision, the operator's labels, the deciding role and who was there
// (fleet.GateResult). An event without one (none is recorded so now) is a
// refusal when not ok, an allow when ok, with no label recorded.
func gateDecision(agent, run string, e fleet.RunEvent) GateDecision {
	d := GateDecision{ID: e.ID, At: e.At, Agent: agent, Run: run, Tool: e.Name, Decision: operator.Deny, Reason: e.Text, Labels: []string{}}
	if e.OK == laserbrain.OKTrue {
		d.Decision = operator.Allow
	}
	if res, ok := fleet.ReadGateResult(e.Result); ok {
		d.Decision, d.Role, d.Presence, d.Action = res.Decision, res.Role, res.Presence, res.Action
		d.Labels = append(d.Labels, res.Labels...)
	}
	return d
}

// NetworkOf is what a run's agent tried on the network through laserbrain
// run's boundary, as its events recorded (nil when nothing).
func NetworkOf(events []fleet.RunEvent) *confine.NetSummary {
	var as []confine.Attempt
	for _, e := range events {
		if e.Kind != fleet.KindNetwork {
			continue
		}
		var a confine.Attempt
		if json.Unmarshal(e.Result, &a) == nil && a.Endpoint != "" {
			as = append(as, a)
		}
	}
	return confine.SummarizeNet(as)
}
