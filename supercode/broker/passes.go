package broker

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// PassTTL is how long a pass waits for the person's answer in their
// client before it dies unused.
const PassTTL = 15 * time.Minute

// Passes are the one-use passes the supervisor gives an outward command it
// asks a person about in their client: the hook's answer rewrites the call
// into `laserbrain act --pass PASS -- COMMAND`, the client shows the person
// that call, and if they approve it, act hands the pass back through this
// broker and the command is carried out outside the boundary. A pass is a
// random value kept only in the supervisor's memory (outside the agent's
// tree, never in a file or the journal), bound to one run and exactly one
// command, spent by its first use whatever that use names, and dead after
// PassTTL: the agent cannot make one, and one it saw after its use opens
// nothing.
type Passes struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex
	m  map[string]pass
}

type pass struct {
	run, action, why string
	until            time.Time
}

func (g *Passes) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Issue makes a pass for action (the command's key, operator.ActionKey)
// on run; why says what the person is asked about, for the act's record.
func (g *Passes) Issue(run, action, why string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	p := hex.EncodeToString(b[:])
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]pass{}
	}
	now := g.now()
	for k, v := range g.m {
		if now.After(v.until) {
			delete(g.m, k)
		}
	}
	g.m[p] = pass{run: run, action: action, why: why, until: now.Add(PassTTL)}
	return p, nil
}

// Spend takes pass p for action on run: ok when it was issued for exactly
// these and is still alive. Any use spends it, a wrong one too.
func (g *Passes) Spend(p, run, action string) (why string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, found := g.m[p]
	if !found {
		return "", false
	}
	delete(g.m, p)
	if v.run != run || v.action != action || g.now().After(v.until) {
		return "", false
	}
	return v.why, true
}
