package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Harness is what the operator needs to know about the run an action
// belongs to. laserbrain's run type satisfies it.
type Harness interface {
	// LastVerdict is the run's latest drift verdict; ok is false before the
	// first check.
	LastVerdict() (drifting bool, reason string, ok bool)
	// Judgment is the whole-run (phronesis) verdict, e.g. "abandon".
	Judgment() string
}

// blockingJudgment: the whole-run verdicts that refuse an action needing
// authorization (narrow, verify, unbacked and over-budget do not). A
// switch, not a map: a map literal is built at package init, in every
// hook process.
func blockingJudgment(j string) bool {
	switch j {
	case "abandon", "wrong-problem", "repeating":
		return true
	}
	return false
}

// Action is something about to be done to the world. Reversible and Outward
// are the caller's declaration (for a shell command, escalated by Classify).
type Action struct {
	Kind       string `json:"kind"`
	Target     string `json:"target"`
	Reversible bool   `json:"reversible"`
	Outward    bool   `json:"outward"`
}

// NeedsAuthorization: irreversible or outward; either alone is enough.
func (a Action) NeedsAuthorization() bool { return !a.Reversible || a.Outward }

func (a Action) String() string {
	var marks []string
	if !a.Reversible {
		marks = append(marks, "irreversible")
	}
	if a.Outward {
		marks = append(marks, "outward")
	}
	s := a.Kind + ":" + a.Target
	if len(marks) > 0 {
		s += " (" + strings.Join(marks, ", ") + ")"
	}
	return s
}

// Authorizer stands in for the person: it is asked about every action that
// needs authorization, every time.
type Authorizer interface {
	Authorize(ctx context.Context, a Action) (bool, error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Action) (bool, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Action) (bool, error) { return f(ctx, a) }

// Event is one logged operator decision or outcome.
type Event struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"` // always "operator"
	Name string    `json:"name"` // the action
	OK   bool      `json:"ok"`
	Note string    `json:"note"`
}

// Log records events. A decision that cannot be recorded is not acted on.
type Log interface {
	Record(Event) error
}

// FileLog appends events as JSON lines to a file, each write synced.
type FileLog struct{ Path string }

// Record appends one event.
func (l FileLog) Record(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return fsx.AppendSync(l.Path, append(b, '\n'), 0o600)
}

// Refusal reasons.
const (
	RefusedNoReading     = "no_reading"          // harness attached, never checked
	RefusedDrift         = "blocked_by_drift"    // last verdict drifting
	RefusedJudgment      = "blocked_by_judgment" // whole-run verdict abandon, wrong-problem or repeating
	RefusedNoAuthorizer  = "no_authorizer"
	RefusedNotAuthorized = "not_authorized"
	RefusedAuthorizerErr = "authorizer_failed"
	RefusedUnlogged      = "log_failed" // the authorization could not be recorded
)

// Refused is returned for an action the operator would not take.
type Refused struct {
	Action Action
	Code   string
	Reason string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("refused %s: %s (%s)", e.Action, e.Reason, e.Code)
}

// Stats counts what an operator has done.
type Stats struct {
	Asked, Refused, Taken, Failed, BlockedByDrift, BlockedByJudgment int
}

// Operator gates actions: an action needing authorization is refused while
// the attached run drifts or its judgment says stop, and otherwise needs the
// authorizer's yes, asked afresh each time. Every refusal, authorization and
// outcome is logged. The zero value refuses every action needing
// authorization (nobody to ask) and logs nothing.
type Operator struct {
	Harness    Harness    // optional
	Authorizer Authorizer // nil: refuse everything needing authorization
	Log        Log        // nil: no log
	Now        func() time.Time

	mu    sync.Mutex
	stats Stats
}

// Stats returns a copy of the counters.
func (o *Operator) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats
}

func (o *Operator) count(f func(*Stats)) {
	o.mu.Lock()
	f(&o.stats)
	o.mu.Unlock()
}

func (o *Operator) record(a Action, ok bool, note string) error {
	if o.Log == nil {
		return nil
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return o.Log.Record(Event{Time: now().UTC(), Kind: "operator", Name: a.String(), OK: ok, Note: note})
}

func (o *Operator) refuse(a Action, code, reason string) error {
	o.count(func(s *Stats) {
		s.Refused++
		switch code {
		case RefusedDrift, RefusedNoReading:
			s.BlockedByDrift++
		case RefusedJudgment:
			s.BlockedByJudgment++
		}
	})
	r := &Refused{Action: a, Code: code, Reason: reason}
	if err := o.record(a, false, code+": "+reason); err != nil {
		return errors.Join(r, fmt.Errorf("and the refusal could not be logged: %w", err))
	}
	return r
}

// Act runs do if the operator's rule allows it (spec §12, act): with a
// harness attached and authorization needed, no reading yet, a drifting last
// verdict or a blocking judgment refuse; then an action needing
// authorization is put to the authorizer (no caching); a refusal is a
// *Refused error. The outcome of do is logged and returned.
func (o *Operator) Act(ctx context.Context, a Action, do func(context.Context) error) error {
	needs := a.NeedsAuthorization()
	if o.Harness != nil && needs {
		drifting, reason, ok := o.Harness.LastVerdict()
		switch {
		case !ok:
			return o.refuse(a, RefusedNoReading, "the run has no drift reading yet; check before asking for something that cannot be undone")
		case drifting:
			return o.refuse(a, RefusedDrift, "the agent is off its ground ("+reason+"); return to it before acting irreversibly")
		}
		if j := o.Harness.Judgment(); blockingJudgment(j) {
			return o.refuse(a, RefusedJudgment, "the whole-run judgment is "+j)
		}
	}
	if needs {
		o.count(func(s *Stats) { s.Asked++ })
		if o.Authorizer == nil {
			return o.refuse(a, RefusedNoAuthorizer, "nobody to ask, and this cannot be taken back")
		}
		allowed, err := o.Authorizer.Authorize(ctx, a)
		switch {
		case err != nil:
			return o.refuse(a, RefusedAuthorizerErr, "the authorizer failed: "+err.Error())
		case !allowed:
			return o.refuse(a, RefusedNotAuthorized, "not authorized")
		}
		if err := o.record(a, true, "authorized"); err != nil {
			return o.refuse(a, RefusedUnlogged, "the authorization could not be logged: "+err.Error())
		}
	}
	if err := do(ctx); err != nil {
		o.count(func(s *Stats) { s.Failed++ })
		if lerr := o.record(a, false, "failed: "+err.Error()); lerr != nil {
			return errors.Join(err, fmt.Errorf("and the failure could not be logged: %w", lerr))
		}
		return err
	}
	o.count(func(s *Stats) { s.Taken++ })
	return o.record(a, true, "taken")
}

// Shell gates a shell command: the caller's declaration is escalated by
// Classify first, so a command the gate knows to be irreversible asks even
// when declared reversible.
func (o *Operator) Shell(ctx context.Context, command string, reversible, outward bool, run func(context.Context) error) error {
	v := Classify(command, reversible, outward)
	target := command
	if v.Why != "" {
		target += "  [" + v.Why + "]"
	}
	return o.Act(ctx, Action{Kind: "shell", Target: target, Reversible: v.Reversible, Outward: v.Outward}, run)
}
