package oca

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/laserkit/laserkit/internal/text"
)

// Mode is the bridge's setting, PONDER_OCA.
type Mode string

const (
	ModeAuto Mode = "auto" // probe once; on failure disable silently (oca.log only)
	ModeOn   Mode = "on"   // probe once; on failure the writing commands refuse
	ModeOff  Mode = "off"  // connect to nothing, log nothing
)

// The probe's budgets (SPEC.md §8).
const (
	AutoProbeBudget = 2 * time.Second
	OnProbeBudget   = 5 * time.Second
	CallTimeout     = 5 * time.Second
	// maxPending caps session-less log lines waiting for a session log.
	maxPending = 50
)

// ParseMode reads a PONDER_OCA value: empty means auto. Anything unknown is
// reported with ok false (a usage error for the commands, a problem for
// doctor) and reads as auto, which is how doctor still probes.
func ParseMode(s string) (m Mode, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return ModeAuto, true
	case "on":
		return ModeOn, true
	case "off":
		return ModeOff, true
	}
	return ModeAuto, false
}

// Probe is probe()'s answer: the one negative result the bridge reports as an
// object rather than as nil.
type Probe struct {
	Reachable bool     `json:"reachable"`
	DSN       string   `json:"dsn"` // masked
	Note      string   `json:"note"`
	Mode      Mode     `json:"mode"`
	Schema    bool     `json:"schema"`
	Missing   []string `json:"missing"`
	MS        int64    `json:"ms"`
	Fatal     bool     `json:"fatal"`
}

// UnusableError is what Require returns under PONDER_OCA=on when the probe
// says OCA cannot be used.
type UnusableError struct{ Probe Probe }

func (e *UnusableError) Error() string {
	return fmt.Sprintf("OCA is required (PONDER_OCA=on) but unusable: %s (dsn=%s)", e.Probe.Note, e.Probe.DSN)
}

// Config wires a Bridge to its surroundings. Zero fields get defaults:
// os.Getenv, time.Now, os.Stderr; a nil Connect makes every probe fail.
type Config struct {
	Connect Connector
	Getenv  func(string) string
	Now     func() time.Time
	Stderr  io.Writer
	// CallTimeout and ProbeBudgets override the 5 s per call and
	// 2 s (auto) / 5 s (on) probe budgets; tests shorten them.
	CallTimeout     time.Duration
	AutoProbeBudget time.Duration
	OnProbeBudget   time.Duration
}

// Bridge is the OCA bridge of one process. It is safe for concurrent use,
// never panics, and (apart from Require) never returns an error: every
// export returns nil on failure and logs one line.
type Bridge struct {
	cfg Config

	mu            sync.Mutex
	probe         *Probe // memoised verdict
	verdictLogged bool
	backend       Backend
	logDir        string
	pending       []string
}

// New returns a Bridge; nothing is read or connected until the first call.
func New(cfg Config) *Bridge {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = CallTimeout
	}
	if cfg.AutoProbeBudget <= 0 {
		cfg.AutoProbeBudget = AutoProbeBudget
	}
	if cfg.OnProbeBudget <= 0 {
		cfg.OnProbeBudget = OnProbeBudget
	}
	return &Bridge{cfg: cfg}
}

// Mode reads PONDER_OCA now: the variable is read on every call, so flipping
// it mid-session is safe.
func (b *Bridge) Mode() Mode {
	m, _ := ParseMode(b.cfg.Getenv("PONDER_OCA"))
	return m
}

// DSN is PONDER_OCA_DSN, or the default.
func (b *Bridge) DSN() string {
	if d := strings.TrimSpace(b.cfg.Getenv("PONDER_OCA_DSN")); d != "" {
		return d
	}
	return DefaultDSN
}

// IsEnabled reports, without probing, whether the bridge is switched on for
// this process: not off, and not disabled by an earlier failed probe.
func (b *Bridge) IsEnabled() bool {
	if b.Mode() == ModeOff {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.probe == nil || b.probe.Reachable
}

// Attach names the session directory whose oca.log receives this process's
// lines, and flushes the session-less lines buffered so far into it.
func (b *Bridge) Attach(sessionDir string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logDir = sessionDir
	if len(b.pending) > 0 {
		lines := b.pending
		b.pending = nil
		for _, l := range lines {
			b.writeLocked(l)
		}
	}
}

// Close releases the connection and prints to stderr the lines that never
// found a session log.
func (b *Bridge) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.backend != nil {
		be := b.backend
		b.backend = nil
		func() {
			defer func() { _ = recover() }()
			be.Close()
		}()
	}
	for _, l := range b.pending {
		fmt.Fprintln(b.cfg.Stderr, l)
	}
	b.pending = nil
}

// Probe is probe(): nil under off, otherwise the memoised verdict (running
// the probe if this process has not yet). Its verdict line goes to the
// session log when one is attached; with none, nothing is buffered — the
// caller shows the note — unless a later call needs the line as context.
func (b *Bridge) Probe() *Probe {
	mode := b.Mode()
	if mode == ModeOff {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.probeLocked(mode)
	if b.logDir != "" {
		b.logVerdictLocked()
	}
	cp := *p
	cp.Missing = append([]string{}, p.Missing...)
	return &cp
}

// Require is the PONDER_OCA=on gate the writing commands pass before they
// change anything: under on it probes (5 s) and returns *UnusableError when
// OCA cannot be used; under auto and off it returns nil at once.
func (b *Bridge) Require() error {
	mode := b.Mode()
	if mode != ModeOn {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.probeLocked(mode)
	if p.Reachable {
		return nil
	}
	if b.logDir != "" {
		b.logVerdictLocked()
	}
	cp := *p
	cp.Fatal = true
	return &UnusableError{Probe: cp}
}

// probeLocked runs the probe once per process and memoises its verdict.
func (b *Bridge) probeLocked(mode Mode) *Probe {
	if b.probe != nil {
		// The verdict stands; only its mode-dependent fields follow the
		// variable.
		b.probe.Mode = mode
		b.probe.Fatal = !b.probe.Reachable && mode == ModeOn
		return b.probe
	}
	budget := b.cfg.AutoProbeBudget
	if mode == ModeOn {
		budget = b.cfg.OnProbeBudget
	}
	dsn := b.DSN()
	p := &Probe{DSN: MaskDSN(dsn), Mode: mode, Missing: []string{}}
	start := b.cfg.Now()
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	be, err := b.connect(ctx, dsn)
	if err == nil {
		var rep ProbeReport
		rep, err = safeProbe(ctx, be)
		if err == nil {
			p.Schema = rep.Schema
			if rep.Missing != nil {
				p.Missing = append(p.Missing, rep.Missing...)
			}
			switch {
			case rep.Schema && len(rep.Missing) == 0:
				p.Reachable = true
				p.Note = "ok"
				b.backend = be
			case rep.Schema:
				// Every table is there, but this role may not write them.
				p.Note = "cannot write: missing " + strings.Join(rep.Missing, ", ")
				safeClose(be)
			default:
				p.Note = "not an OCA database: missing " + strings.Join(rep.Missing, ", ")
				safeClose(be)
			}
		} else {
			safeClose(be)
		}
	}
	if err != nil {
		p.Note = "unreachable: " + describe(ctx, err, budget, dsn)
	}
	p.MS = b.cfg.Now().Sub(start).Milliseconds()
	p.Fatal = !p.Reachable && mode == ModeOn
	b.probe = p
	b.verdictLogged = p.Reachable // a good probe has nothing to say
	return p
}

func (b *Bridge) connect(ctx context.Context, dsn string) (be Backend, err error) {
	if b.cfg.Connect == nil {
		return nil, errors.New("this build has no OCA store")
	}
	defer func() {
		if r := recover(); r != nil {
			be, err = nil, fmt.Errorf("panic in connector: %v", r)
		}
	}()
	be, err = b.cfg.Connect(ctx, dsn)
	if err == nil && be == nil {
		err = errors.New("connector returned no backend")
	}
	return be, err
}

func safeProbe(ctx context.Context, be Backend) (rep ProbeReport, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in probe: %v", r)
		}
	}()
	return be.Probe(ctx)
}

func safeClose(be Backend) {
	defer func() { _ = recover() }()
	be.Close()
}

// describe turns a call's error into one loggable line. A refused or
// unreachable connection is said once: pgx lists every attempt (one per
// address and TLS mode), each with the same dial error.
func describe(ctx context.Context, err error, budget time.Duration, dsn string) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timeout after %dms", budget.Milliseconds())
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return scrub(op.Error(), dsn)
	}
	return scrub(err.Error(), dsn)
}

// logVerdictLocked writes the probe's own verdict line once.
func (b *Bridge) logVerdictLocked() {
	if b.verdictLogged || b.probe == nil {
		return
	}
	b.verdictLogged = true
	kind := "DISABLED"
	if b.probe.Mode == ModeOn {
		kind = "FATAL"
	}
	b.logLocked("probe", kind, b.probe.Note, b.probe.Mode, b.probe.MS)
}

// logLocked formats one oca.log line: <ts> <function> <KIND> <message>
// dsn=<masked> [mode=<m>] [ms=<n>]. A negative ms is left out, as is an
// empty mode.
func (b *Bridge) logLocked(fn, kind, msg string, mode Mode, ms int64) {
	var l strings.Builder
	l.WriteString(b.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	l.WriteString(" " + fn + " " + kind + " " + text.OneLine(msg))
	l.WriteString(" dsn=" + MaskDSN(b.DSN()))
	if mode != "" {
		l.WriteString(" mode=" + string(mode))
	}
	if ms >= 0 {
		fmt.Fprintf(&l, " ms=%d", ms)
	}
	b.writeLocked(l.String())
}

// writeLocked appends a line to the session log, or buffers it while there
// is none (or its directory does not exist yet).
func (b *Bridge) writeLocked(line string) {
	if b.logDir != "" {
		f, err := os.OpenFile(b.logDir+string(os.PathSeparator)+"oca.log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, werr := f.WriteString(line + "\n")
			cerr := f.Close()
			if werr == nil && cerr == nil {
				return
			}
		}
	}
	if len(b.pending) < maxPending {
		b.pending = append(b.pending, line)
	}
}

// call runs one export: nothing under off; SKIP when the memoised probe said
// OCA is unusable; otherwise fn under a 5 s deadline, with any error or panic
// turned into one FAIL line. ok reports whether fn succeeded.
func call[T any](b *Bridge, name string, fn func(ctx context.Context, be Backend) (T, error)) (res T, ok bool) {
	mode := b.Mode()
	if mode == ModeOff {
		return res, false
	}
	b.mu.Lock()
	p := b.probeLocked(mode)
	if !p.Reachable || b.backend == nil {
		b.logVerdictLocked()
		b.logLocked(name, "SKIP", "oca unreachable ("+p.Note+")", mode, -1)
		b.mu.Unlock()
		return res, false
	}
	be := b.backend
	b.mu.Unlock()

	start := b.cfg.Now()
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.CallTimeout)
	defer cancel()
	res, err := func() (r T, err error) {
		defer func() {
			if rec := recover(); rec != nil {
				err = fmt.Errorf("panic: %v", rec)
			}
		}()
		return fn(ctx, be)
	}()
	if err != nil {
		ms := b.cfg.Now().Sub(start).Milliseconds()
		b.mu.Lock()
		b.logLocked(name, "FAIL", describe(ctx, err, b.cfg.CallTimeout, b.DSN()), "", ms)
		b.mu.Unlock()
		var zero T
		return zero, false
	}
	return res, true
}

// callFor is call's result as a pointer: nil when OCA was off, out of
// reach or failed.
func callFor[T any](b *Bridge, name string, fn func(ctx context.Context, be Backend) (T, error)) *T {
	r, ok := call(b, name, fn)
	if !ok {
		return nil
	}
	return &r
}

// callList is call for a list: nil when OCA could not be asked, else a
// non-nil slice (empty when the backend found nothing).
func callList[T any](b *Bridge, name string, fn func(ctx context.Context, be Backend) ([]T, error)) []T {
	list, ok := call(b, name, fn)
	if !ok {
		return nil
	}
	if list == nil {
		list = []T{}
	}
	return list
}

// note appends one non-failure line (the hypothesis lifecycle declining).
func (b *Bridge) note(fn, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logLocked(fn, "SKIP", msg, b.Mode(), -1)
}

// PriorPondering is priorPondering(subject): earlier episodes on this
// subject, or nil.
func (b *Bridge) PriorPondering(subject string) []Episode {
	return callList(b, "priorPondering", func(ctx context.Context, be Backend) ([]Episode, error) {
		return be.PriorPondering(ctx, subject)
	})
}

// RecordStart is recordStart(session).
func (b *Bridge) RecordStart(s Session) *StartResult {
	return callFor(b, "recordStart", func(ctx context.Context, be Backend) (StartResult, error) {
		return be.RecordStart(ctx, s)
	})
}

// RecordPass is recordPass(session, pass, metrics, predict). The lifecycle's
// declines (lock contended, already-forecast, no-churn-signal) each append
// one line.
func (b *Bridge) RecordPass(rec PassRecord) *PassResult {
	r, ok := call(b, "recordPass", func(ctx context.Context, be Backend) (PassResult, error) {
		return be.RecordPass(ctx, rec)
	})
	if !ok {
		return nil
	}
	if r.Lock == "contended" {
		b.note("recordPass", fmt.Sprintf("contended: another judge of pass %d holds the hypothesis lock; close and open skipped", rec.Pass))
	} else {
		switch r.OpenNote {
		case "already-forecast":
			b.note("recordPass", fmt.Sprintf("already-forecast: pass %d has already opened its forecast", rec.Pass))
		case "no-churn-signal":
			b.note("recordPass", fmt.Sprintf("no-churn-signal: pass %d has no churn, so no forecast is opened", rec.Pass))
		}
	}
	return &r
}

// RecordDeliberation is recordDeliberation(session, pass, deliberation[, summary]).
func (b *Bridge) RecordDeliberation(rec DeliberationRecord) *DeliberationResult {
	return callFor(b, "recordDeliberation", func(ctx context.Context, be Backend) (DeliberationResult, error) {
		return be.RecordDeliberation(ctx, rec)
	})
}

// ResolveDeliberation is resolveDeliberation(session, id, summary).
func (b *Bridge) ResolveDeliberation(s Session, id int64, summary string) *ResolveResult {
	return callFor(b, "resolveDeliberation", func(ctx context.Context, be Backend) (ResolveResult, error) {
		return be.ResolveDeliberation(ctx, s, id, summary)
	})
}

// RecordObservation is recordObservation(session, type, description,
// evidence, severity, intervention).
func (b *Bridge) RecordObservation(rec ObservationRecord) *ObservationResult {
	return callFor(b, "recordObservation", func(ctx context.Context, be Backend) (ObservationResult, error) {
		return be.RecordObservation(ctx, rec)
	})
}

// RecordConverged is recordConverged(session, summary).
func (b *Bridge) RecordConverged(rec ConvergedRecord) *ConvergedResult {
	return callFor(b, "recordConverged", func(ctx context.Context, be Backend) (ConvergedResult, error) {
		return be.RecordConverged(ctx, rec)
	})
}

// ExpireForecasts expires the session's pending forecasts (abort's
// best-effort cleanup).
func (b *Bridge) ExpireForecasts(s Session) *ExpireResult {
	return callFor(b, "expireForecasts", func(ctx context.Context, be Backend) (ExpireResult, error) {
		return be.ExpireForecasts(ctx, s)
	})
}

// SessionRows reads what the database holds of a session, or nil.
func (b *Bridge) SessionRows(s Session) *SessionRows {
	return callFor(b, "sessionRows", func(ctx context.Context, be Backend) (SessionRows, error) {
		return be.SessionRows(ctx, s)
	})
}

// RecordApply is recordApply(session, summary).
func (b *Bridge) RecordApply(rec ApplyRecord) *ApplyResult {
	return callFor(b, "recordApply", func(ctx context.Context, be Backend) (ApplyResult, error) {
		return be.RecordApply(ctx, rec)
	})
}

// OpenObservations is openObservations(session): the open observations,
// highest severity first; an empty non-nil slice when there are none, nil
// when OCA could not be asked.
func (b *Bridge) OpenObservations(s Session) []Observation {
	return callList(b, "openObservations", func(ctx context.Context, be Backend) ([]Observation, error) {
		return be.OpenObservations(ctx, s)
	})
}
