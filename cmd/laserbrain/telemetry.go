package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// otelName is the program that sends a run's spans, installed beside
// laserbrain (laserbrain links no OpenTelemetry code: it starts on every
// hook).
const otelName = "laserbrain-otel"

// runTelemetry is where the spans of work in dir go (the environment's
// endpoint, else the project policy's), read before anything starts: a
// setting that cannot be used is refused then, naming the variable. Off
// (nil, nil) when no endpoint is configured.
func runTelemetry(getenv func(string) string, dir string) (*telemetry.Settings, error) {
	s, err := telemetry.Configure(getenv, policyEndpoint(dir))
	if err != nil {
		return nil, cli.Usagef("telemetry: %v; nothing was started", err)
	}
	if !s.On {
		return nil, nil
	}
	return &s, nil
}

// policyEndpoint is the OTLP endpoint the project policy of dir names,
// "" when it names none or is not valid (the gate then refuses; nothing
// is sent on its word).
func policyEndpoint(dir string) string {
	pol, err := agentrun.LoadPolicy(dir, policyschema.Validate)
	if err != nil || pol.Err != "" {
		return ""
	}
	return pol.Telemetry.Endpoint
}

// exportRun sends the ended run to the configured collector: its record,
// read back from the stores after the agent ended (no hook ever waits on
// it), goes to laserbrain-otel beside this binary, which is given
// telemetry.CloseDeadline and a second more. What could not be delivered
// is said on w and changes nothing else about the run.
func exportRun(ctx context.Context, w io.Writer, self string, s *telemetry.Settings, sup *agentrun.Tracker, res agentrun.SpawnResult, end telemetry.Ending) {
	if s == nil {
		return
	}
	if err := sendRun(ctx, self, *s, sup, res, end); err != nil {
		fmt.Fprintf(w, "laserbrain run: telemetry (%s): %v\n", s.Why, err)
	}
}

func sendRun(ctx context.Context, self string, s telemetry.Settings, sup *agentrun.Tracker, res agentrun.SpawnResult, end telemetry.Ending) error {
	rec, err := runRecord(ctx, sup, res.Run)
	if err != nil {
		return fmt.Errorf("the run's record: %w; nothing was sent", err)
	}
	if end.At = rec.Agent.Run.Ended; end.At.IsZero() {
		end.At = time.Now()
	}
	rec.Ending = end
	return handOtel(ctx, self, s, "export", rec)
}

// handOtel hands doc, as JSON, to laserbrain-otel's sub command beside
// self, waiting telemetry.CloseDeadline and a second more at most; its
// complaint, if any, is the error.
func handOtel(ctx context.Context, self string, s telemetry.Settings, sub string, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	prog := filepath.Join(filepath.Dir(self), otelName)
	if _, err := os.Stat(prog); err != nil {
		return fmt.Errorf("%s is not beside %s (make install puts it there); nothing was sent", otelName, self)
	}
	ctx, cancel := context.WithTimeout(ctx, telemetry.CloseDeadline+time.Second)
	defer cancel()
	args := []string{sub}
	if s.Endpoint != "" {
		args = append(args, "--endpoint", s.Endpoint)
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(b), &stderr
	if err := reap.Run(cmd); err != nil {
		if msg := strings.TrimSpace(strings.TrimPrefix(stderr.String(), otelName+": ")); msg != "" {
			return errors.New(msg)
		}
		return fmt.Errorf("%s: %w", otelName, err)
	}
	return nil
}

// runRecord is the run as the stores hold it once its agent ended: the
// run, its events, its checks across its tasks, its client and model.
func runRecord(ctx context.Context, sup *agentrun.Tracker, r fleet.Run) (telemetry.Record, error) {
	st, err := sup.Fleet()
	if err != nil {
		return telemetry.Record{}, err
	}
	if stored, err := st.Run(ctx, r.ID); err == nil {
		r = stored // its sessions and end, as recorded
	}
	events, err := st.Events(ctx, r.ID)
	if err != nil {
		return telemetry.Record{}, err
	}
	checks, err := runChecks(ctx, sup, r)
	if err != nil {
		return telemetry.Record{}, err
	}
	rec := telemetry.Record{Agent: telemetry.Agent{Run: r}, Events: events, Checks: checks}
	if u, ok := runUsage(ctx, sup, r, events); ok {
		rec.Usage = &u
	}
	if len(r.Command) > 0 {
		if c, ok := client.Detect(r.Command[0]); ok {
			rec.Agent.Client, rec.Agent.Model = string(c), modelFlag(r.Command[1:])
		}
	}
	return rec, nil
}

// runChecks are the run's checks across its tasks, in order.
func runChecks(ctx context.Context, sup *agentrun.Tracker, r fleet.Run) ([]laserbrain.StepRecord, error) {
	runs, err := sup.Runs()
	if err != nil {
		return nil, err
	}
	var steps []laserbrain.StepRecord
	for n := 1; n <= max(r.Tasks, 1); n++ {
		lr, err := runs.ReadRun(ctx, fleet.TaskID(r.ID, n))
		if errors.Is(err, laserbrain.ErrNoRun) {
			continue // a task opened but never checked
		}
		if err != nil {
			return nil, err
		}
		steps = append(steps, lr.Steps()...)
	}
	return steps, nil
}

// modelFlag is the model an agent client's arguments ask for (--model M,
// --model=M, -m M: the spelling of Claude Code, Codex and Gemini CLI), ""
// when they name none.
func modelFlag(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--model="); ok {
			return v
		}
		if (a == "--model" || a == "-m") && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// agentUsage is how the tokens an agent command spends are read from its
// client's own records while it runs: Claude Code's from its sessions'
// transcripts, Codex's from its sessions' rollouts; nil for every other
// command.
func agentUsage(program string) func(fleet.Run) (fleet.Usage, bool, error) {
	switch c, _ := client.Detect(program); c {
	case client.Claude:
		return func(r fleet.Run) (fleet.Usage, bool, error) {
			return client.ClaudeSessionsUsage(os.Getenv, r.Sessions)
		}
	case client.Codex:
		return func(r fleet.Run) (fleet.Usage, bool, error) {
			return client.CodexSessionsUsage(os.Getenv, r.Sessions)
		}
	}
	return nil
}

// recordedUsage is how the tokens a run's agent spent are read from its
// client's own records once it ran: agentUsage's, and Gemini CLI's chats
// (not read for its budgets: those hold what it reports to the run's
// receiver).
func recordedUsage(program string) func(fleet.Run) (fleet.Usage, bool, error) {
	if c, _ := client.Detect(program); c == client.Gemini {
		return func(r fleet.Run) (fleet.Usage, bool, error) {
			return client.GeminiSessionsUsage(os.Getenv, r.Sessions)
		}
	}
	return agentUsage(program)
}

// recordCallTokens records, once the agent has ended, what each of its
// tool calls cost as its client's own records hold it (Claude Code's
// transcript, Codex's rollout: which response asked for which call): one
// event per call, at the response's time.
func recordCallTokens(ctx context.Context, sup *agentrun.Tracker, r fleet.Run) {
	st, err := sup.Fleet()
	if err != nil {
		return
	}
	if stored, err := st.Run(ctx, r.ID); err == nil {
		r = stored // its sessions, as recorded
	}
	if len(r.Command) == 0 {
		return
	}
	var asked []client.Asked
	switch c, _ := client.Detect(r.Command[0]); c {
	case client.Claude:
		asked, _ = client.ClaudeSessionsCalls(os.Getenv, r.Sessions)
	case client.Codex:
		asked, _ = client.CodexSessionsCalls(os.Getenv, r.Sessions)
	}
	for _, a := range asked {
		_, _ = st.AppendEvent(ctx, r.ID, fleet.CallTokensEvent(a.At, "", a.CallUsage))
	}
}

// agentBudgetReads are how laserbrain run's process reads, at each tool
// call while a budget is held, the tokens its agent spent and whether the
// agent's client has recorded the response that asked for the call (nil:
// not known): Claude Code's sessions' transcripts, each read on from where
// the last question left it (client.ClaudeTranscripts); Codex's rollouts.
func agentBudgetReads(program string) (func(fleet.Run) (fleet.Usage, bool, error), func(fleet.Run, string) bool) {
	switch c, _ := client.Detect(program); c {
	case client.Claude:
		t := client.NewClaudeTranscripts(os.Getenv)
		return func(r fleet.Run) (fleet.Usage, bool, error) { return t.Usage(r.Sessions) },
			func(r fleet.Run, call string) bool { return t.Recorded(r.Sessions, call) }
	case client.Codex:
		return agentUsage(program), func(r fleet.Run, call string) bool {
			return client.CodexSessionsRecorded(os.Getenv, r.Sessions, call)
		}
	}
	return nil, nil
}

// runUsage is the tokens a run's agent spent, as recorded once it ended;
// ok is false when nothing recorded them. events are the run's, when the
// caller has read them (nil: read here).
func runUsage(ctx context.Context, sup *agentrun.Tracker, r fleet.Run, events []fleet.RunEvent) (fleet.Usage, bool) {
	st, err := sup.Fleet()
	if err != nil {
		return fleet.Usage{}, false
	}
	return usageIn(st, r, events)
}

// journalExport hands a supervisor's new journal records to
// laserbrain-otel: those after the last it handed over (none before the
// supervisor started). Off (nil) when no endpoint is configured.
type journalExport struct {
	s     telemetry.Settings
	self  string
	st    fleet.Store
	fleet string
	after int64
}

// newJournalExport starts after the journal's last record as it stands.
func newJournalExport(ctx context.Context, s *telemetry.Settings, st fleet.Store, fid string) (*journalExport, error) {
	if s == nil {
		return nil, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	recs, err := st.JournalRecords(ctx, fid, 0)
	if err != nil {
		return nil, err
	}
	j := &journalExport{s: *s, self: self, st: st, fleet: fid}
	if len(recs) > 0 {
		j.after = recs[len(recs)-1].Seq
	}
	return j, nil
}

// send hands over what was journaled since the last hand-off; what could
// not be delivered is said on w and sent no more.
func (j *journalExport) send(ctx context.Context, w io.Writer) {
	if j == nil {
		return
	}
	recs, err := j.st.JournalRecords(ctx, j.fleet, j.after)
	if err == nil && len(recs) > 0 {
		j.after = recs[len(recs)-1].Seq
		err = handOtel(ctx, j.self, j.s, "journal", telemetry.Journal{Fleet: j.fleet, Records: recs})
	}
	if err != nil {
		fmt.Fprintf(w, "laserbrain supervise: telemetry (%s): %v\n", j.s.Why, err)
	}
}

// recordsUsage is the tokens a run's agent spent as its client's own
// records hold them (Claude Code's transcript), for a reader that has read
// the run's model requests from its events already (the report and the
// live view).
func recordsUsage(r fleet.Run) (fleet.Usage, bool) {
	if len(r.Command) == 0 {
		return fleet.Usage{}, false
	}
	read := recordedUsage(r.Command[0])
	if read == nil {
		return fleet.Usage{}, false
	}
	u, ok, err := read(r)
	return u, ok && err == nil
}

// storeUsage reads the tokens a run's agent spent, as its client
// recorded them (ok false: none read) — for the summary and supervise's
// budget: the model requests its client reported through its own
// telemetry (with their cost), else its transcript's usage.
func storeUsage(st fleet.Store) func(fleet.Run) (fleet.Usage, bool) {
	return func(r fleet.Run) (fleet.Usage, bool) { return usageIn(st, r, nil) }
}

// usageIn is storeUsage's reading of run r, from its events when the
// caller has read them (nil: read here).
func usageIn(st fleet.Store, r fleet.Run, events []fleet.RunEvent) (fleet.Usage, bool) {
	ctx := context.Background()
	if stored, err := st.Run(ctx, r.ID); err == nil {
		r = stored // its sessions, as recorded
	}
	if u, ok := modelUsage(ctx, st, r.ID, events); ok {
		return u, true
	}
	return recordsUsage(r)
}

// exportLoop sends a loop's runs — its own and each agent and judge
// session's (RUN-N) — to the configured collector once the loop has
// ended, each as laserbrain run sends its one; what could not be
// delivered is said on w.
func exportLoop(ctx context.Context, w io.Writer, self string, s *telemetry.Settings, sup *agentrun.Tracker, loopRun string) {
	if s == nil || loopRun == "" {
		return
	}
	st, err := sup.Fleet()
	if err != nil {
		fmt.Fprintf(w, "laserbrain loop: telemetry (%s): %v; nothing was sent\n", s.Why, err)
		return
	}
	runs, err := st.ListRuns(ctx, fleet.RunFilter{})
	if err != nil {
		fmt.Fprintf(w, "laserbrain loop: telemetry (%s): %v; nothing was sent\n", s.Why, err)
		return
	}
	for _, r := range runs {
		if r.ID != loopRun && !strings.HasPrefix(r.ID, loopRun+"-") {
			continue
		}
		end := telemetry.Ending{}
		if r.ExitCode != nil {
			end.ExitCode = *r.ExitCode
		}
		if err := sendRun(ctx, self, *s, sup, agentrun.SpawnResult{Run: r}, end); err != nil {
			fmt.Fprintf(w, "laserbrain loop: telemetry (%s): run %s: %v\n", s.Why, r.ID, err)
		}
	}
}
