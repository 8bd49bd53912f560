package agentrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// RunError is a check on a run named the wrong way: a run that does not
// exist (a mistyped id would otherwise start a new run and hide the
// drift), or one that exists when a new run was asked for under its id.
type RunError struct {
	ID     string
	Exists bool
}

func (e *RunError) Error() string {
	if e.Exists {
		return fmt.Sprintf("run %q exists already", e.ID)
	}
	return fmt.Sprintf("no such run %q", e.ID)
}

// Checks decide where a check on a run id goes. A run laserbrain run (or a
// hook) registered in the fleet store is checked the way its hooks' and
// MCP server's checks are (Tracker.Check): on the run's current task,
// taking a pending user turn, counted and recorded on the registry, which
// is what laserbrain supervise and laserbrain runs read. Any other run is
// laserbrain's run store's alone. Checks remember what they learned of an
// id, so a stream over one run asks the fleet store once.
type Checks struct {
	Tracker *Tracker
	known   map[string]*fleet.Run // nil: not registered
}

// NewChecks routes checks through sup.
func NewChecks(sup *Tracker) *Checks {
	return &Checks{Tracker: sup, known: map[string]*fleet.Run{}}
}

// Registered returns the run registered under id, nil when none is. A
// fleet store that cannot be read is an error, not "not registered": the
// check would otherwise go where the supervisor does not look.
func (c *Checks) Registered(ctx context.Context, id string) (*fleet.Run, error) {
	if r, ok := c.known[id]; ok {
		return r, nil
	}
	st, err := c.Tracker.Fleet()
	if err != nil {
		return nil, err
	}
	found, err := st.Run(ctx, id)
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		c.known[id] = nil
		return nil, nil
	case err != nil:
		return nil, err
	}
	r := new(fleet.Run) // on the heap only when found
	*r = found
	c.known[id] = r
	return r, nil
}

// Forget drops what Registered learned of id when it was not registered:
// a stream over ever more runs keeps no entry for each, and a later check
// on id looks again (laserbrain run may have registered it since). A
// registered run's entry is kept: it counts the run's checks.
func (c *Checks) Forget(id string) {
	if r, ok := c.known[id]; ok && r == nil {
		delete(c.known, id)
	}
}

// Remembered is how many ids Checks hold what they learned of: a stream
// that forgets the ones it no longer holds keeps it bounded.
func (c *Checks) Remembered() int { return len(c.known) }

// Check checks one state on registered run r; created reports whether it
// was the run's first check. newRun asks for a new run: one that has
// checks is a *RunError. via is how the check came (ViaCLI, ViaStream),
// counted for coverage.
func (c *Checks) Check(ctx context.Context, r *fleet.Run, in laserbrain.StepInput, newRun bool, via string) (v laserbrain.CheckResult, created bool, err error) {
	if newRun && r.Checks > 0 {
		return v, false, &RunError{ID: r.ID, Exists: true}
	}
	out, err := c.Tracker.Check(ctx, r.ID, CheckInput{StepInput: in, Via: via})
	if err != nil {
		return v, false, fmt.Errorf("run %s: %w", r.ID, err)
	}
	created = r.Checks == 0
	r.Checks++
	return out.CheckResult, created, nil
}

// CheckBatch checks states on registered run r as one batch of its
// supervision: durable together before it returns.
func (c *Checks) CheckBatch(ctx context.Context, r *fleet.Run, ins []CheckInput) ([]CheckOutcome, error) {
	outs, err := c.Tracker.CheckBatch(ctx, r.ID, ins)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.Checks += len(outs)
	return outs, nil
}

// OpenUnregistered opens run id of laserbrain's run store for stepping and
// holds the check to what was asked: an id given without newRun must name
// a saved run, and one given with it must not (a *RunError). A run
// laserbrain run registered is not opened here: see Checks.
func OpenUnregistered(ctx context.Context, store laserbrain.Store, id string, newRun bool) (laserbrain.RunHandle, error) {
	h, err := store.OpenRun(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case h.Created() && !newRun:
		_ = h.Close()
		return nil, &RunError{ID: id}
	case !h.Created() && newRun:
		_ = h.Close()
		return nil, &RunError{ID: id, Exists: true}
	}
	return h, nil
}
