package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The loop's own drift run: registered in the fleet like any agent run
// (agent "loop", run id = the loop's), grounded on --goal, and stepped
// once per round (each judge call, and each agent call that is not a
// judge's work order) with a state the loop reads off ./ci and the verdict
// alone — never off what an agent says. So `laserbrain supervise` sees a
// loop that circles as it sees any agent that does.
//
// Distances (0-10): a verdict that passes (after --soak/--jury) 0; a pass
// still soaking 1; an insufficient verdict 3, or 4 with a blocker; an
// agent iteration opened on a failing ./ci 6; an agent iteration with no
// ./ci run before it: unknown. Progress: advancing when the distance fell
// (or the soak count rose) or on the first reading; circling when the
// iteration repeats one of the last eight (the same verdict findings, or
// ./ci failing with the same log); stuck otherwise.

func (l *Loop) goal() string {
	if g := strings.TrimSpace(l.o.Goal); g != "" {
		return g
	}
	return "bring " + l.o.Script + " to a verified fixpoint: ./ci passes and the judge finds the work complete"
}

func (l *Loop) registerDrift(ctx context.Context) error {
	st, err := l.sup.Fleet()
	if err != nil {
		return err
	}
	cmd := append([]string{"laserbrain", "loop", l.o.Script}, l.o.Args...)
	run := fleet.Run{ID: l.id, Agent: "loop", Fleet: l.fleetID, Dir: l.work, Command: cmd, Goal: l.goal(), Created: time.Now().UTC()}
	if err := st.CreateRun(ctx, run); err != nil {
		return err
	}
	// The goal is the ground; how far from it is not known yet.
	in := agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: l.goal(), Progress: laserbrain.ProgressAdvancing}, Via: agentrun.ViaGoal}
	if _, err := l.sup.Check(ctx, l.id, in); err != nil {
		return err
	}
	if _, err = st.AppendEvent(ctx, l.id, fleet.RunEvent{ID: "loop:start", Kind: fleet.KindSession, Name: "run-start", Text: strings.Join(cmd, " ")}); err != nil {
		return err
	}
	if l.o.Unconfined != "" {
		_, err = st.AppendEvent(ctx, l.id, fleet.RunEvent{ID: "loop:confinement", Kind: fleet.KindSession, Name: "confinement", Text: l.o.Unconfined})
	}
	return err
}

// childRun registers an agent or judge session's own run (its hooks and
// check_state calls go there, not to the loop's drift run). A failure is
// reported and the session still runs, on the id.
func (l *Loop) childRun(ctx context.Context, svc *Service, role string, step int) string {
	id := fmt.Sprintf("%s-%d", l.id, step)
	st, err := l.sup.Fleet()
	if err == nil {
		err = st.CreateRun(ctx, fleet.Run{ID: id, Agent: svc.Name, Fleet: l.fleetID, Dir: l.work,
			Command: []string{"laserbrain", "loop", role, svc.Name}, Created: time.Now().UTC()})
	}
	if err != nil && !errors.Is(err, fleet.ErrExists) {
		l.note("the session's run %s could not be registered: %v", id, err)
	}
	return id
}

// endChild ends a session's run when its call returns, with the status
// the builtin returns to SCRIPT (128+N when a signal stopped the run, the
// loop's code when it stopped SCRIPT), as `laserbrain run` ends its run
// when the agent exits: a finished session is never left "running" for
// `laserbrain runs` and `laserbrain supervise` to see. Best effort: a
// failure is reported, the call's status stands.
func (l *Loop) endChild(ctx context.Context, child string, status error) {
	code := statusCode(status)
	why := ""
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			why = cause.Error()
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, _, err := l.sup.End(ctx, child, &code, why); err != nil && !errors.Is(err, fleet.ErrNotFound) {
		l.note("the session's run %s could not be ended: %v", child, err)
	}
}

// endOrphans ends the session runs of calls the journal started and never
// finished: their loop was killed outright (SIGKILL, a crash) before it
// could end them. Their status is not known. Ending a run twice keeps the
// first end, so a call ended when it was interrupted is left as it was.
func (l *Loop) endOrphans(ctx context.Context, recs []Record) {
	started := map[int]string{}
	for _, r := range recs {
		switch {
		case r.Phase == "start" && r.ChildRun != "":
			started[r.Step] = r.ChildRun
		case r.Phase == "" && (r.Kind == recAgent || r.Kind == recJudge):
			delete(started, r.Step)
		}
	}
	for _, child := range started {
		if _, _, err := l.sup.End(ctx, child, nil, "its loop stopped before the call returned"); err != nil && !errors.Is(err, fleet.ErrNotFound) {
			l.note("the session's run %s could not be ended: %v", child, err)
		}
	}
}

// reopenDrift marks the loop's own run as running again for --resume
// (finish ends it once more).
func (l *Loop) reopenDrift(ctx context.Context) {
	st, err := l.sup.Fleet()
	if err == nil {
		_, err = st.UpdateRun(ctx, l.id, func(r *fleet.Run) error {
			r.Ended, r.ExitCode = time.Time{}, nil
			return nil
		})
	}
	if err != nil && !errors.Is(err, fleet.ErrNotFound) {
		l.note("the loop's drift run could not be reopened: %v", err)
	}
}

// event records what the loop observed on its own run, best effort.
func (l *Loop) event(ctx context.Context, kind, name string, ok bool, text string, step int) {
	l.recordEvent(ctx, fleet.RunEvent{Kind: kind, Name: name, OK: laserbrain.OKOf(ok), Text: text}, step)
}

// recordEvent records e on the loop's run as step's event, best effort.
func (l *Loop) recordEvent(ctx context.Context, e fleet.RunEvent, step int) {
	st, err := l.sup.Fleet()
	if err != nil {
		return
	}
	e.ID, e.At = fmt.Sprintf("loop:%d", step), time.Now().UTC()
	_, _ = st.AppendEvent(ctx, l.id, e)
}

// driftAfterAgent steps the drift run for an iteration an agent opened.
func (l *Loop) driftAfterAgent(ctx context.Context, svc string, ci *int, c capped) *DriftStep {
	var dist *int
	if ci != nil && *ci != 0 {
		dist = intp(6)
	}
	sum := sha256.Sum256([]byte(c.Text))
	ciWord := "unknown"
	if ci != nil {
		ciWord = fmt.Sprint(*ci)
	}
	sig := fmt.Sprintf("agent:%s:ci=%s:%s", svc, ciWord, hex.EncodeToString(sum[:8]))
	return l.driftStep(ctx, dist, sig, false)
}

// driftAfterJudge steps the drift run for a judge's iteration; a judge
// that gave no verdict (escalated, failed) leaves no reading.
func (l *Loop) driftAfterJudge(ctx context.Context, svc string, ci *int, out judgeOutcome, soakBefore int, mode string) *DriftStep {
	if len(out.verdicts) == 0 || (out.code != 0 && out.code != 1 && !out.pending) {
		return nil
	}
	d := 3
	blockers := 0
	var sigs []string
	for _, v := range out.verdicts {
		blockers += v.Count("blocker")
		sigs = append(sigs, v.Signature())
	}
	switch {
	case out.passed && !out.pending:
		d = 0
	case out.pending:
		d = 1 // passing, still soaking
	case blockers > 0:
		d = 4
	}
	l.mu.Lock()
	soakRose := mode == "soak" && out.passed && l.st.Soak[svc] > soakBefore
	l.mu.Unlock()
	return l.driftStep(ctx, &d, "judge:"+svc+":"+strings.Join(sigs, "/"), soakRose)
}

func (l *Loop) driftStep(ctx context.Context, dist *int, sig string, rose bool) *DriftStep {
	l.mu.Lock()
	st := l.st
	progress := laserbrain.ProgressAdvancing
	switch {
	case dist == nil || st.LastDistance == nil:
	case *dist < *st.LastDistance || rose:
	case st.seen(sig):
		progress = laserbrain.ProgressCircling
	default:
		progress = laserbrain.ProgressStuck
	}
	st.remember(sig)
	if dist != nil {
		st.LastDistance = intp(*dist)
	}
	l.mu.Unlock()
	step := &DriftStep{Distance: dist, Progress: progress}
	in := agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: l.goal(), Progress: progress}, Via: agentrun.ViaLoop}
	if dist != nil {
		in.Distance = laserbrain.Dist(*dist)
	}
	out, err := l.sup.Check(ctx, l.id, in)
	if err != nil {
		l.note("the loop's drift run: %v", err)
		return step
	}
	step.Reason, step.Drifting = out.Reason, out.Drifting
	if out.Drifting {
		l.note("the loop's own run drifts (%s): %s", out.Reason, out.Advice)
	}
	return step
}

// closeDrift ends the loop's run in the fleet and judges it.
func (l *Loop) closeDrift(ctx context.Context, res Result) {
	st, err := l.sup.Fleet()
	if err != nil {
		return
	}
	code := res.ExitCode
	if _, err := st.UpdateRun(ctx, l.id, func(r *fleet.Run) error {
		r.Ended, r.ExitCode = time.Now().UTC(), &code
		return nil
	}); err != nil {
		l.note("the loop's drift run could not be closed: %v", err)
		return
	}
	ok := code == 0
	_, _ = st.AppendEvent(ctx, l.id, fleet.RunEvent{At: time.Now().UTC(), Kind: fleet.KindSession, Name: "run-end", OK: laserbrain.OKOf(ok),
		Text: fmt.Sprintf("exit %d: %s", code, res.Reason)})
	_, _ = l.sup.Judge(ctx, l.id)
}
