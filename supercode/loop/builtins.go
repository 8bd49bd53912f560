package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

// service resolves a builtin's service and checks it can serve the role.
// A failure is a config error: the reason goes to stderr and the call
// returns 7 without starting anything.
func (l *Loop) service(hc interp.HandlerContext, role, name string) (*Service, error) {
	if name == "" {
		name = l.cfg.DefaultAgent
		if name == "" {
			return nil, fmt.Errorf("%s needs a service NAME (or DEFAULT_AGENT in agents.conf)", role)
		}
	}
	svc, err := l.cfg.Lookup(name)
	if err == nil {
		err = svc.CheckRole(role)
	}
	if err == nil {
		err = svc.checkExecutable(l.work, execEnv(hc.Env))
	}
	if err == nil && svc.Enabled == "MANUAL" {
		err = l.confirm(svc, role)
	}
	return svc, err
}

// confirm asks the person at the terminal before a MANUAL service runs;
// without a terminal there is nobody to ask, and the call is refused.
func (l *Loop) confirm(svc *Service, role string) error {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("service %s is %s_ENABLED=MANUAL and there is no terminal to ask", svc.Name, svc.Name)
	}
	defer tty.Close()
	fmt.Fprintf(tty, "laserbrain loop: run %s %s? [y/N] ", role, svc.Name)
	var answer string
	_, _ = fmt.Fscanln(tty, &answer)
	if a := strings.ToLower(strings.TrimSpace(answer)); a == "y" || a == "yes" {
		return nil
	}
	return fmt.Errorf("service %s: the operator declined (%s_ENABLED=MANUAL)", svc.Name, svc.Name)
}

// configFailure journals and reports a builtin that could not start.
func (l *Loop) configFailure(hc interp.HandlerContext, key, kind string, argv []string, err error) error {
	l.mu.Lock()
	step := l.nextStep()
	l.mu.Unlock()
	msg := fmt.Sprintf("laserbrain loop: %s: %v", kind, err)
	fmt.Fprintln(hc.Stderr, msg)
	if jerr := l.j.append(Record{Step: step, Key: key, Kind: kind, Argv: argv, Status: intp(statusConfig), Reason: err.Error()}); jerr != nil {
		return l.halt(statusInternal, "%v", jerr)
	}
	return exitStatus(statusConfig)
}

// readContext reads a builtin's stdin (unless it is a terminal: nobody
// piped anything) into a capped context, spilling to a temporary file
// that becomes ci-<step>.log once the step is known.
func (l *Loop) readContext(hc interp.HandlerContext, key string) (capped, error) {
	f, ok := hc.Stdin.(*os.File)
	if !ok || f == nil {
		if hc.Stdin == nil || ok {
			return capped{}, nil
		}
		return capContext(hc.Stdin, filepath.Join(l.dir, "ops", "context-"+safeName(key)+".tmp"))
	}
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return capped{}, nil
	}
	return capContext(f, filepath.Join(l.dir, "ops", "context-"+safeName(key)+".tmp"))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// placeSpill moves a spilled context to ci-<step>.log.
func (l *Loop) placeSpill(c *capped, step int) error {
	if c.Spill == "" {
		return nil
	}
	final := filepath.Join(l.dir, fmt.Sprintf("ci-%03d.log", step))
	if err := os.Rename(c.Spill, final); err != nil {
		return err
	}
	c.Text = strings.Replace(c.Text, c.Spill, final, 1)
	c.Spill = final
	return nil
}

// openIteration counts a model call against --max-iters and --budget;
// over either, the run stops. The caller holds l.mu. A judge call starts
// the next iteration (--max-iters N gives the judge N looks); an agent
// call belongs to the iteration it runs in, the pre-judge repairs to the
// implicit iteration 0, and at most N agent calls that are not a judge's
// work order run between two looks, so a ./ci that never goes green
// stops too. opened reports whether the call opens a round of the drift
// run (see state).
func (l *Loop) openIteration(role string) (opened bool, stop *haltError) {
	st := l.st
	if l.o.Budget > 0 && st.Tokens >= l.o.Budget {
		return false, &haltError{statusExhausted, fmt.Sprintf("the token --budget is spent: %d of %d tokens used", st.Tokens, l.o.Budget)}
	}
	if role == roleAgent && st.Opener == roleJudge && !st.OpenerAgent {
		st.OpenerAgent = true // the judge's work order: same round
		return false, nil
	}
	switch {
	case role == roleJudge && st.Iteration >= l.o.MaxIters:
		return false, &haltError{statusExhausted, fmt.Sprintf("--max-iters %d reached: the judge has had its %s, look %d could not start%s",
			l.o.MaxIters, text.Plural(l.o.MaxIters, "look"), st.Iteration+1, l.lastSignals())}
	case role == roleAgent && st.Repairs >= l.o.MaxIters:
		return false, &haltError{statusExhausted, fmt.Sprintf("--max-iters %d reached: %s in iteration %d without a judge look, another could not start%s",
			l.o.MaxIters, text.Plural(st.Repairs, "agent call"), st.Iteration, l.lastSignals())}
	case role == roleJudge:
		st.Iteration++
		st.Repairs = 0
	default:
		st.Repairs++
	}
	st.Opener, st.OpenerAgent = role, role == roleAgent
	st.IterCI, st.PendingCI = st.PendingCI, nil
	return true, nil
}

// lastSignals says where the run stood, for a stop's reason.
func (l *Loop) lastSignals() string {
	st := l.st
	var parts []string
	if st.LastCI != nil {
		if *st.LastCI == 0 {
			parts = append(parts, "./ci passes")
		} else {
			parts = append(parts, fmt.Sprintf("./ci still fails (exit %d)", *st.LastCI))
		}
	}
	if st.FinalPasses != nil && !*st.FinalPasses {
		parts = append(parts, "the last verdict did not pass")
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// callStart is how a model call began.
type callStart struct {
	step   int
	opened bool   // the call opened a round of the drift run
	st     *state // the state it began from (a copy)
	ref    string // its checkpoint ("" outside git)
	tree   string // the tree checkpointed
}

// begin starts a model call (the caller holds l.calls): it is counted
// against --max-iters and --budget (over either, the run stops), gets its
// step, its spilled context is placed, and the tree is checkpointed to
// refs/laserkit/loop/<run>/<step>. A non-nil error is the status the call
// ends with.
func (l *Loop) begin(ctx context.Context, role string, svc *Service, cctx *capped, what string) (callStart, error) {
	if ctx.Err() != nil {
		return callStart{}, stopped(ctx)
	}
	l.mu.Lock()
	var cs callStart
	opened, stop := l.openIteration(role)
	if stop == nil {
		cs.step = l.nextStep()
	}
	cs.opened, cs.st = opened, l.st.clone()
	l.mu.Unlock()
	if stop != nil {
		return cs, l.halt(stop.code, "%s", stop.reason)
	}
	l.replay.liveDone() // a live model call: the run has gone past its journal
	if err := l.placeSpill(cctx, cs.step); err != nil {
		return cs, l.halt(statusInternal, "%s %s: %v", role, svc.Name, err)
	}
	if l.git != nil {
		cs.ref = CheckpointRef(l.id, cs.step)
		t, err := l.git.checkpoint(ctx, l.dir, cs.ref, fmt.Sprintf("laserbrain loop %s step %d: %s", l.id, cs.step, what))
		if err != nil {
			return cs, l.halt(statusInternal, "checkpoint %s: %v", what, err)
		}
		cs.tree = t
	}
	return cs, nil
}

// setUp finds a call's service and its system prompt, and reads its
// context (the builtin's stdin). A failure comes back as the status the
// builtin ends with.
func (l *Loop) setUp(hc interp.HandlerContext, key, kind, role string, argv []string, name string) (*Service, string, capped, error) {
	svc, err := l.service(hc, role, name)
	if err != nil {
		return nil, "", capped{}, l.configFailure(hc, key, kind, argv, err)
	}
	system, err := l.systemFor(svc, role)
	if err != nil {
		return nil, "", capped{}, l.configFailure(hc, key, kind, argv, err)
	}
	cctx, err := l.readContext(hc, key)
	if err != nil {
		return nil, "", capped{}, l.halt(statusInternal, "%s %s: %v", role, svc.Name, err)
	}
	return svc, system, cctx, nil
}

// agent is `agent NAME [INSTR...]`: a fresh session per call; stdin is its
// context, the arguments its instruction. 0 it completed (which says
// nothing about the task), 3 it escalated, 5 it failed, 7 a config error.
func (l *Loop) agent(ctx context.Context, argv []string) (status error) {
	hc := interp.HandlerCtx(ctx)
	key := l.key(hc.Pos)
	name, instr := "", ""
	if len(argv) > 1 {
		name, instr = argv[1], strings.Join(argv[2:], " ")
	}
	if rec := l.replay.take(key, argv); rec != nil {
		l.note("step %d (agent %s) replayed from the journal", rec.Step, rec.Service)
		return l.replayStep(hc, rec)
	}
	svc, system, cctx, failed := l.setUp(hc, key, recAgent, roleAgent, argv, name)
	if failed != nil {
		return failed
	}
	l.calls.Lock()
	defer l.calls.Unlock()
	cs, err := l.begin(ctx, roleAgent, svc, &cctx, "before agent "+svc.Name)
	if err != nil {
		return err
	}
	step, opened, iteration, ref, iterCI := cs.step, cs.opened, cs.st.Iteration, cs.ref, cs.st.IterCI
	child := l.childRun(ctx, svc, roleAgent, step)
	defer func() { l.endChild(ctx, child, status) }()
	session := child
	if svc.Kind == KindClaude {
		session = newUUID()
	}
	callDir := filepath.Join(l.dir, "calls", strconv.Itoa(step))
	if err := l.j.append(Record{Step: step, Phase: "start", Key: key, Kind: recAgent, Argv: argv, Service: svc.Name,
		Iteration: iteration, Checkpoint: ref, ChildRun: child, Sessions: []string{session}, Spill: cctx.Spill}); err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	rec := Record{Step: step, Key: key, Kind: recAgent, Argv: argv, Service: svc.Name, Iteration: iteration,
		Checkpoint: ref, ChildRun: child, Spill: cctx.Spill}
	stdout, _, closeRec, err := l.recorders(interp.HandlerContext{Stdout: hc.Stdout}, &rec)
	if err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	t := turn{svc: svc, role: roleAgent, step: step, callDir: callDir, system: system, session: session,
		childRun: child, env: execEnv(hc.Env), label: svc.Name}
	if svc.Kind == KindCommand {
		t.prompt, t.context, t.stdout = instr, cctx.Text, stdout
	} else {
		t.prompt = agentPrompt(instr, cctx)
	}
	res := l.runTurn(ctx, t)
	if res.interrupted {
		closeRec()
		return stopped(ctx)
	}
	if svc.Kind == KindClaude && res.transport == "" && strings.TrimSpace(res.text) != "" && stdout != nil {
		fmt.Fprintln(stdout, strings.TrimSpace(res.text))
	}
	rec.Cut = closeRec()
	if res.session != "" {
		rec.Sessions = []string{res.session}
	}
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	code, streak := l.settleAgent(ctx, svc, cs, res, callDir, &rec)
	if opened {
		rec.Drift = l.driftAfterAgent(ctx, svc.Name, iterCI, cctx)
	}
	l.mu.Lock()
	rec.State = l.st.clone()
	l.mu.Unlock()
	if err := l.j.append(rec); err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	what := fmt.Sprintf("agent %s exit %d", svc.Name, code)
	if rec.Noop {
		what += " (no-op)"
	}
	l.event(ctx, fleet.KindTool, "agent:"+svc.Name, code == 0, what, step)
	if streak > 0 {
		if streak >= noopLimit {
			return l.halt(statusExhausted, "%d agent calls in a row left the tree unchanged while there was work to do (the last: agent %s, step %d)", streak, svc.Name, step)
		}
		l.note("agent %s left the tree unchanged while there was work to do (no-op %d of %d allowed in a row; ignored files do not count)", svc.Name, streak, noopLimit-1)
	}
	return exitStatus(code)
}

// settleAgent reads how an agent's turn ended — its status (a transport
// failure, an escalation, or 0) and whether it was a no-op — into rec and
// the loop's state; streak is the no-ops in a row so far (0 unless this
// was one).
func (l *Loop) settleAgent(ctx context.Context, svc *Service, cs callStart, res turnResult, callDir string, rec *Record) (code, streak int) {
	// No-op: the agent left the tree as it found it (outside git: it said
	// nothing and called no tool).
	noop := false
	if l.git != nil {
		after, _, err := l.git.snapshot(ctx, l.dir, "")
		noop = err == nil && after == cs.tree
	} else {
		noop = strings.TrimSpace(res.text) == "" && res.toolCalls == 0
	}
	switch {
	case res.transport != "":
		code = statusTransport
		rec.Reason = res.transport
		l.note("agent %s: %s (exit %d)", svc.Name, res.transport, code)
	default:
		if reason := firstNonEmpty(res.escalated, l.escalatedByTool(callDir)); reason != "" {
			code, rec.Reason = statusEscalated, reason
			l.note("agent %s escalated: %s", svc.Name, reason)
		}
	}
	rec.Status, rec.Tokens = intp(code), res.tokens
	// A no-op is an agent that changed nothing while there was work to
	// do; one handed a passing verdict short of its soak (no work) is not.
	rec.Noop = noop && code == 0 && cs.st.WorkPending
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.Tokens += res.tokens
	l.st.count("agent " + svc.Name)
	l.st.LastRef = cs.ref
	if rec.Noop {
		l.st.NoopStreak++
		streak = l.st.NoopStreak
	} else if !noop {
		l.st.NoopStreak = 0
	}
	return code, streak
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func (l *Loop) escalatedByTool(callDir string) string {
	c, err := verdict.Read(callDir)
	if err != nil {
		return ""
	}
	return c.Escalated
}

// judgeArgs are a judge call's flags: judge NAME [--jury N | --soak N]
// [--goldfish] [--pedantic] [INSTR...].
type judgeArgs struct {
	name, instr        string
	soak, jury         int
	goldfish, pedantic bool
	// pending is the status of a pass short of --soak N: 1 (not
	// sufficient yet, the builtins' exit-code protocol) unless
	// --soak-pending says.
	pending int
}

func (l *Loop) parseJudge(args []string) (judgeArgs, error) {
	a := judgeArgs{soak: l.o.Soak, jury: l.o.Jury, goldfish: l.o.Goldfish, pedantic: l.o.Pedantic, pending: 1}
	var words []string
	setSoak, setJury := false, false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if len(words) > 0 && a.name != "" && !strings.HasPrefix(arg, "--") {
			words = append(words, arg)
			continue
		}
		flag, val, hasVal := strings.Cut(arg, "=")
		num := func() (int, error) {
			if !hasVal {
				if i+1 >= len(args) {
					return 0, fmt.Errorf("%s needs a number", flag)
				}
				i++
				val = args[i]
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("%s %q: want a whole number of at least 1", flag, val)
			}
			return n, nil
		}
		var err error
		switch {
		case flag == "--soak":
			a.soak, err = num()
			setSoak = true
		case flag == "--jury":
			a.jury, err = num()
			setJury = true
		case flag == "--soak-pending":
			if a.pending, err = num(); err == nil && !pendingStatusOK(a.pending) {
				err = fmt.Errorf("--soak-pending %d: want 1, 2 or 9 to 125 (0 is a pass, 3 to 8 are the builtin's own failures, 126 and up the shell's)", a.pending)
			}
		case arg == "--goldfish":
			a.goldfish = true
		case arg == "--pedantic":
			a.pedantic = true
		case arg == "--":
			words = append(words, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(arg, "--"):
			err = fmt.Errorf("unknown judge flag %s (have --soak N, --soak-pending N, --jury N, --goldfish, --pedantic)", arg)
		case a.name == "":
			a.name = arg
		default:
			words = append(words, arg)
		}
		if err != nil {
			return a, err
		}
	}
	if setSoak && setJury {
		return a, errors.New("--soak and --jury are mutually exclusive")
	}
	if setSoak {
		a.jury = 0
	}
	if setJury {
		a.soak = 0
	}
	if a.name == "" && len(words) > 0 {
		a.name, words = words[0], words[1:]
	}
	a.instr = strings.Join(words, " ")
	return a, nil
}

// pendingStatusOK reports whether n may be the status of a pass short of
// --soak: a status no verdict, failure or shell status already means.
func pendingStatusOK(n int) bool { return n == 1 || n == 2 || n >= 9 && n <= 125 }

// judgeOutcome is one judge call's result.
type judgeOutcome struct {
	samples  []Sample
	verdicts []verdict.Verdict
	passed   bool
	// pending: the verdicts pass, but --soak N is not reached yet.
	pending bool
	code    int
	reason  string
}

// judge is `judge NAME [flags] [INSTR...]`: one session pinned per run
// (goldfish and jurors: a fresh one per sample). 0 the verdict passes
// (after --soak/--jury), 1 it does not — or it passes short of --soak N,
// when the rendered verdict says there is no work to do (--soak-pending N
// gives such a pass a status of its own) —, 3 escalated, 5 transport, 6
// malformed, 7 config. The rendered verdict goes to stdout, the judge's
// transcript to stderr.
func (l *Loop) judge(ctx context.Context, argv []string) (status error) {
	hc := interp.HandlerCtx(ctx)
	key := l.key(hc.Pos)
	if rec := l.replay.take(key, argv); rec != nil {
		l.note("step %d (judge %s) replayed from the journal", rec.Step, rec.Service)
		return l.replayStep(hc, rec)
	}
	ja, err := l.parseJudge(argv[1:])
	if err != nil {
		return l.configFailure(hc, key, recJudge, argv, err)
	}
	if ja.name == "" {
		return l.configFailure(hc, key, recJudge, argv, errors.New("judge needs a service NAME"))
	}
	svc, system, cctx, failed := l.setUp(hc, key, recJudge, roleJudge, argv, ja.name)
	if failed != nil {
		return failed
	}
	l.calls.Lock()
	defer l.calls.Unlock()
	cs, err := l.begin(ctx, roleJudge, svc, &cctx, "judge "+svc.Name+" looks")
	if err != nil {
		return err
	}
	jc := newJudgeCall(ja, svc, system, cctx, cs)
	jc.child = l.childRun(ctx, svc, roleJudge, jc.step)
	defer func() { l.endChild(ctx, jc.child, status) }()
	if err := l.j.append(Record{Step: jc.step, Phase: "start", Key: key, Kind: recJudge, Argv: argv, Service: svc.Name,
		Iteration: jc.iteration, Checkpoint: jc.ref, ChildRun: jc.child, Sessions: jc.sessions(), Spill: cctx.Spill, Mode: jc.mode}); err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	out, tokens, born, interrupted := l.askJurors(ctx, hc, jc)
	if interrupted || ctx.Err() != nil {
		return stopped(ctx)
	}
	rec := Record{Step: jc.step, Key: key, Kind: recJudge, Argv: argv, Service: svc.Name, Iteration: jc.iteration, Checkpoint: jc.ref,
		ChildRun: jc.child, Spill: cctx.Spill, Mode: jc.mode, Samples: out.samples, Tokens: tokens}
	for _, s := range out.samples {
		if s.Session != "" {
			rec.Sessions = append(rec.Sessions, s.Session)
		}
	}
	rendered := l.settleJudge(jc, &out, &rec, tokens, born)
	if out.code == 0 || out.code == 1 || out.pending {
		if n, err := l.ledger(jc.step, svc.Name, out); err != nil {
			return l.halt(statusInternal, "suggestions ledger: %v", err)
		} else if n > 0 {
			l.mu.Lock()
			l.st.Suggestions += n
			l.mu.Unlock()
		}
	}
	return l.finishJudge(ctx, hc, jc, out, rec, rendered)
}

// judgeCall is one call of the judge builtin as it goes: what was asked
// of which service, and the loop's state the call began from.
type judgeCall struct {
	ja         judgeArgs
	svc        *Service
	system     string
	cctx       capped
	step       int
	iteration  int
	iterCI     *int
	ref        string     // the call's checkpoint
	js         judgeState // the judge's own state (its pinned session)
	soakBefore int        // passes counted towards --soak before this call
	// prevRef is the tree the judge is shown its change against, and
	// prevWhat says which tree that is.
	prevRef, prevWhat string
	jurors            int
	goldfish          bool // a fresh session per sample
	mode              string
	child             string // the child run the call records on
}

func newJudgeCall(ja judgeArgs, svc *Service, system string, cctx capped, cs callStart) *judgeCall {
	jc := &judgeCall{ja: ja, svc: svc, system: system, cctx: cctx, step: cs.step, iteration: cs.st.Iteration, iterCI: cs.st.IterCI,
		ref: cs.ref, js: *cs.st.judge(svc.Name), soakBefore: cs.st.Soak[svc.Name],
		jurors: max(1, ja.jury), goldfish: ja.goldfish || ja.jury > 0, mode: "single"}
	jc.prevRef, jc.prevWhat = jc.js.LastRef, "the tree when you last gave a verdict"
	if jc.prevRef == "" && cs.st.LastRef != "" {
		jc.prevRef, jc.prevWhat = cs.st.LastRef, "the tree before the last agent ran"
	}
	switch {
	case ja.jury > 0:
		jc.mode = "jury"
	case ja.soak > 0:
		jc.mode = "soak"
	}
	// The pinned session: born at the judge's first completed call (a first
	// call interrupted before it completed starts afresh).
	if !jc.goldfish && !jc.js.Born {
		jc.js.Session = newUUID()
	}
	return jc
}

// sessions are the sessions the call starts with: the pinned one, or none
// for fresh sessions.
func (jc *judgeCall) sessions() []string {
	if jc.goldfish {
		return nil
	}
	return []string{jc.js.Session}
}

// askJurors asks the judge once per juror, stopping at the first sample
// that escalates, fails or gives no verdict; born reports whether the
// pinned session now exists.
func (l *Loop) askJurors(ctx context.Context, hc interp.HandlerContext, jc *judgeCall) (out judgeOutcome, tokens int64, born, interrupted bool) {
	ledger, _ := os.ReadFile(filepath.Join(l.dir, "suggestions.md"))
	svc := jc.svc
	born = jc.js.Born
	for i := 1; i <= jc.jurors; i++ {
		session, resume, transcript := jc.js.Session, jc.js.Born, l.judgeTranscript(svc.Name, "")
		fresh := !jc.js.Born
		if jc.goldfish {
			session, resume, fresh = newUUID(), false, true
			transcript = l.judgeTranscript(svc.Name, fmt.Sprintf("-%d-%d", jc.step, i))
		}
		if svc.Kind == KindCommand && fresh {
			_ = fsx.WriteFile(transcript, []byte(seedHeader(l.seed)), 0o644)
		}
		in := judgePromptIn{instr: jc.ja.instr, ctx: jc.cctx, iteration: jc.iteration, max: l.o.MaxIters, ref: jc.prevRef, refWhat: jc.prevWhat, now: jc.ref,
			suggestions: string(ledger), command: svc.Kind == KindCommand}
		if jc.ja.soak > 0 {
			in.soakAt, in.soakOf = jc.soakBefore+1, jc.ja.soak
		}
		if jc.jurors > 1 {
			in.juror, in.jurors = i, jc.jurors
		}
		if fresh {
			in.seed = l.seed
		}
		callDir := filepath.Join(l.dir, "calls", fmt.Sprintf("%d-%d", jc.step, i))
		t := turn{svc: svc, role: roleJudge, step: jc.step, callDir: callDir, system: jc.system, session: session, resume: resume,
			childRun: jc.child, env: execEnv(hc.Env), label: svc.Name, transcript: transcript}
		s, v, res := l.sample(ctx, t, judgePrompt(in))
		if res.interrupted {
			return out, tokens, born, true
		}
		tokens += s.Tokens
		if !jc.goldfish && s.Attempts > 0 && s.Error == "" {
			born = true
		}
		out.samples = append(out.samples, s)
		switch {
		case s.Escalated != "":
			out.code, out.reason = statusEscalated, "judge "+svc.Name+" escalated: "+s.Escalated
		case s.Error != "":
			out.code, out.reason = statusTransport, s.Error
		case v == nil:
			out.code, out.reason = statusMalformed, fmt.Sprintf("judge %s gave no valid verdict after the one bounce allowed: %s", svc.Name, strings.Join(append(s.Malformed, noVerdictWords(s.NoVerdict)...), "; "))
		default:
			out.samples[len(out.samples)-1].Passed = v.Passes(jc.ja.pedantic)
			out.verdicts = append(out.verdicts, *v)
		}
		if out.code != 0 {
			break
		}
	}
	return out, tokens, born, false
}

// settleJudge folds the call into the loop's state: tokens and calls
// counted, the pinned session kept, and — when every sample gave a
// verdict — the status under the call's mode (--soak counts passes in a
// row, --jury wants every juror) and the final verdict. It returns the
// verdict rendered for stdout ("" when there is none).
func (l *Loop) settleJudge(jc *judgeCall, out *judgeOutcome, rec *Record, tokens int64, born bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.st
	st.Tokens += tokens
	st.count("judge " + jc.svc.Name)
	jsNow := st.judge(jc.svc.Name)
	jsNow.Calls++
	if !jc.goldfish {
		jsNow.Session, jsNow.Born = jc.js.Session, born
	}
	if out.code != 0 {
		return ""
	}
	jsNow.LastRef = jc.ref
	out.passed = true
	passCount := 0
	for _, s := range out.samples {
		if s.Passed {
			passCount++
		}
		out.passed = out.passed && s.Passed
	}
	out.code = 1
	if out.passed {
		out.code = 0
	}
	st.FinalPassed, st.FinalOf = 0, 0
	switch jc.mode {
	case "soak":
		if st.Soak == nil {
			st.Soak = map[string]int{}
		}
		if out.passed {
			st.Soak[jc.svc.Name]++
		} else {
			st.Soak[jc.svc.Name] = 0
		}
		n := st.Soak[jc.svc.Name]
		rec.Soak, rec.SoakTarget = intp(n), jc.ja.soak
		st.FinalPassed, st.FinalOf = n, jc.ja.soak
		switch {
		case n >= jc.ja.soak:
			out.code = 0
		case out.passed:
			out.code, out.pending = jc.ja.pending, true
		}
	case "jury":
		rec.Jurors = jc.jurors
		st.FinalPassed, st.FinalOf = passCount, jc.jurors
	}
	st.FinalMode = jc.mode
	last := out.verdicts[len(out.verdicts)-1]
	st.FinalVerdict = strings.TrimSpace(last.Summary)
	rec.Summary = st.FinalVerdict
	rec.Passed = boolp(out.passed)
	st.FinalPasses = boolp(out.passed)
	st.WorkPending = !out.passed
	if out.passed {
		st.NoopStreak = 0
	}
	return renderJudge(*out, jc.mode, rec.Soak, jc.ja.soak, jc.jurors)
}

// finishJudge ends the call: the rendered verdict on stdout, the drift
// the judge's answer caused, the journal record and the run's event; it
// returns the call's status.
func (l *Loop) finishJudge(ctx context.Context, hc interp.HandlerContext, jc *judgeCall, out judgeOutcome, rec Record, rendered string) error {
	rec.Status = intp(out.code)
	rec.Reason = out.reason
	if out.reason != "" {
		l.note("%s (exit %d)", out.reason, out.code)
	}
	if rendered != "" {
		stdout, _, closeRec, err := l.recorders(interp.HandlerContext{Stdout: hc.Stdout}, &rec)
		if err != nil {
			return l.halt(statusInternal, "%v", err)
		}
		if stdout != nil {
			io.WriteString(stdout, rendered)
		}
		rec.Cut = closeRec()
	}
	rec.Drift = l.driftAfterJudge(ctx, jc.svc.Name, jc.iterCI, out, jc.soakBefore, jc.mode)
	l.mu.Lock()
	rec.State = l.st.clone()
	l.mu.Unlock()
	if err := l.j.append(rec); err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	l.event(ctx, fleet.KindTool, "verdict:"+jc.svc.Name, out.code == 0 || out.pending, fmt.Sprintf("judge %s exit %d: %s", jc.svc.Name, out.code, rec.Summary), jc.step)
	return exitStatus(out.code)
}

func noVerdictWords(n int) []string {
	if n == 0 {
		return nil
	}
	return []string{text.Plural(n, "turn") + " ended without a verdict"}
}

// sample runs one judge session to a verdict. Missing and malformed
// verdicts have a strike each: a turn that ends without a verdict is
// answered once — a messages judge's conversation is sent again with the
// verdict tool mandated (tool_choice), any other judge is asked again in
// words — and a malformed verdict is bounced once with its error. The
// second of either kind is a malfunction (v nil, no error, no escalation).
func (l *Loop) sample(ctx context.Context, t turn, prompt string) (Sample, *verdict.Verdict, turnResult) {
	s := Sample{Session: t.session}
	command := t.svc.Kind == KindCommand
	first := prompt
	var res turnResult
	for attempt := 1; ; attempt++ {
		before, err := verdict.Read(t.callDir)
		if err != nil {
			s.Error = err.Error()
			return s, nil, res
		}
		t.prompt = prompt
		res = l.runTurn(ctx, t)
		if res.interrupted {
			return s, nil, res
		}
		s.Attempts = attempt
		s.Tokens += res.tokens
		if res.session != "" {
			s.Session = res.session
		}
		if res.transport != "" {
			s.Error = res.transport
			return s, nil, res
		}
		if command {
			if t.transcript != "" {
				l.appendTranscript(t.transcript, prompt, res.lastLine)
			}
			// A last line that opens an object is a verdict attempt;
			// anything else is no verdict.
			if strings.HasPrefix(res.lastLine, "{") {
				_, _, _ = verdict.Submit(t.callDir, []byte(res.lastLine))
			}
		}
		call, err := verdict.Read(t.callDir)
		if err != nil {
			s.Error = err.Error()
			return s, nil, res
		}
		s.Malformed = call.Malformed
		if res.escalated != "" || call.Escalated != "" {
			s.Escalated = firstNonEmpty(res.escalated, call.Escalated)
			return s, nil, res
		}
		if call.Verdict != nil {
			s.Verdict = call.Verdict
			return s, call.Verdict, res
		}
		missing := len(call.Malformed) == len(before.Malformed)
		if missing {
			s.NoVerdict++ // the turn ended with no verdict at all
		}
		if len(call.Malformed) >= verdict.MaxMalformed || s.NoVerdict >= 2 {
			return s, nil, res
		}
		last := ""
		if !missing {
			last = call.Malformed[len(call.Malformed)-1]
		}
		t.force = false
		switch {
		case command:
			prompt = first + "\n" + reaskPrompt(true, last)
			t.extraEnv = []string{"LASERBRAIN_VERDICT_ERROR=" + last, "LASERBRAIN_VERDICT_REQUIRED=1"}
		default:
			prompt = reaskPrompt(false, last)
			t.resume = true
			t.force = missing && t.svc.Kind == KindMessages
		}
		if missing {
			s.Reask = ReaskWords
			if t.force {
				s.Reask = ReaskToolChoice
			}
			l.note("judge %s ended its turn without a verdict: %s", t.svc.Name, reaskWords(s.Reask))
		}
	}
}

func reaskWords(how string) string {
	if how == ReaskToolChoice {
		return "sending the conversation again with the verdict tool mandated (tool_choice)"
	}
	return "asking once more in words (its client cannot be made to call a tool)"
}

func (l *Loop) judgeTranscript(name, suffix string) string {
	dir := filepath.Join(l.dir, "judges")
	_ = os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, name+suffix+".transcript")
}

func seedHeader(seed string) string {
	if strings.TrimSpace(seed) == "" {
		return ""
	}
	return "## Seed: the design thread this loop was launched from\n\n" + strings.TrimSpace(seed) + "\n\n"
}

// appendTranscript keeps a command judge's pinned transcript: every prompt
// and the verdict line it answered with.
func (l *Loop) appendTranscript(path, prompt, answer string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "## Prompt\n\n%s\n## Answer\n\n%s\n\n", strings.TrimSpace(prompt), answer)
}

// SoakPendingWords is the rendered verdict's heading for a pass short of
// the soak count.
func SoakPendingWords(k, n int) string {
	return fmt.Sprintf("passed, soak %d of %d: no work to do; the judge looks again", k, n)
}

// renderJudge is the judge call's stdout: each verdict as markdown, then
// the soak or jury count. A pass short of the soak count renders as no
// work to do, without the findings (its suggestions go to the ledger).
func renderJudge(out judgeOutcome, mode string, soak *int, soakOf, jurors int) string {
	var b strings.Builder
	if out.pending {
		// Piped to `agent task` (as ralph.sid does with every status 1),
		// this is what the agent reads: nothing to change.
		fmt.Fprintf(&b, "## Verdict: %s\n\n", SoakPendingWords(*soak, soakOf))
		fmt.Fprintf(&b, "Leave the tree as it is: the verdict passed, and --soak %d wants %d passing verdicts in a row, so the judge examines the tree again before the loop ends. Its suggestions are kept in the run's ledger (suggestions.md) for the sweep after the loop.\n", soakOf, soakOf)
		fmt.Fprintf(&b, "\nSoak: %d of %d consecutive passes.\n", *soak, soakOf)
		return b.String()
	}
	for i, v := range out.verdicts {
		if len(out.verdicts) > 1 {
			fmt.Fprintf(&b, "<!-- juror %d of %d -->\n", i+1, len(out.verdicts))
		}
		b.WriteString(verdict.Render(v))
		if i+1 < len(out.verdicts) {
			b.WriteString("\n")
		}
	}
	switch mode {
	case "soak":
		fmt.Fprintf(&b, "\nSoak: %d of %d consecutive passes.\n", *soak, soakOf)
	case "jury":
		passed := 0
		for _, s := range out.samples {
			if s.Passed {
				passed++
			}
		}
		fmt.Fprintf(&b, "\nJury: %d of %d jurors passed.\n", passed, jurors)
	}
	return b.String()
}

// suggestion is one entry of the run's suggestions ledger: a suggestion
// the judges made, once, with every step and judge that made it. Two
// suggestions are the same when their where and what are, whitespace and
// case aside; the first one's words are kept.
type suggestion struct {
	Where  string   `json:"where"`
	What   string   `json:"what"`
	Why    string   `json:"why"`
	Judges []string `json:"judges"`
	Steps  []int    `json:"steps"`
}

func (s suggestion) key() string {
	return strings.ToLower(text.OneLine(s.Where)) + "\x00" + strings.ToLower(text.OneLine(s.What))
}

// ledger adds the suggestions of passing verdicts to the run's ledger
// (suggestions.json, rendered as suggestions.md, both rewritten whole and
// atomically) and says how many entries are new: a suggestion made again
// gains a step rather than a line, so soak passes and jurors that agree do
// not repeat it.
func (l *Loop) ledger(step int, judge string, out judgeOutcome) (int, error) {
	var made []suggestion
	for i, v := range out.verdicts {
		if !out.samples[min(i, len(out.samples)-1)].Passed {
			continue
		}
		for _, f := range v.Suggestions() {
			made = append(made, suggestion{Where: text.OneLine(f.Where), What: text.OneLine(f.What), Why: text.OneLine(f.Why)})
		}
	}
	if len(made) == 0 {
		return 0, nil
	}
	path := filepath.Join(l.dir, "suggestions.json")
	var entries []suggestion
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return 0, err
	default:
		if err := json.Unmarshal(b, &entries); err != nil {
			return 0, fmt.Errorf("%s: %v", path, err)
		}
	}
	index := map[string]int{}
	for i, e := range entries {
		index[e.key()] = i
	}
	n := 0
	for _, m := range made {
		i, ok := index[m.key()]
		if !ok {
			i, n = len(entries), n+1
			index[m.key()] = i
			entries = append(entries, m)
		}
		e := &entries[i]
		if !slices.Contains(e.Judges, judge) {
			e.Judges = append(e.Judges, judge)
		}
		if !slices.Contains(e.Steps, step) {
			e.Steps = append(e.Steps, step)
		}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := fsx.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return 0, err
	}
	return n, fsx.WriteFile(filepath.Join(l.dir, "suggestions.md"), []byte(renderLedger(entries)), 0o644)
}

// renderLedger is suggestions.md: one line per suggestion, naming the
// judges and the steps it was made at.
func renderLedger(entries []suggestion) string {
	var b strings.Builder
	for _, e := range entries {
		steps := make([]string, len(e.Steps))
		for i, s := range e.Steps {
			steps[i] = strconv.Itoa(s)
		}
		word := "step"
		if len(steps) > 1 {
			word = "steps"
		}
		fmt.Fprintf(&b, "- judge %s, %s %s: `%s` — %s (why: %s)\n", strings.Join(e.Judges, ", judge "), word,
			strings.Join(steps, ", "), e.Where, e.What, e.Why)
	}
	return b.String()
}
