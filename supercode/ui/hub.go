package ui

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// hub keeps the current view and its sections' markup, reloads them when
// the stores signal a change, and wakes every open page's stream.
type hub struct {
	ld     *loader
	render func(*View) map[string]string
	log    io.Writer

	mu       sync.Mutex
	v        *View
	sections map[string]string
	version  uint64
	ready    chan struct{} // closed once the first load is in
	subs     map[chan struct{}]bool
	// loads counts reloads (for the benchmark's ratios).
	loads int
}

func newHub(ld *loader, render func(*View) map[string]string, log io.Writer) *hub {
	return &hub{ld: ld, render: render, log: log, ready: make(chan struct{}), subs: map[chan struct{}]bool{}}
}

// settle is how long a reload waits after a change for the changes that
// come with it (a check writes its run, its task and an event): one
// reload for the lot, not three.
const settle = 25 * time.Millisecond

// run loads the view, then again after every signal, until ctx ends.
// Signals that come during a load are one reload after it: however fast
// the agents write, the view is at most one load behind.
func (h *hub) run(ctx context.Context, signals <-chan struct{}) {
	h.reload(ctx)
	close(h.ready)
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-signals:
			if !ok {
				<-ctx.Done()
				return
			}
		}
		t := time.NewTimer(settle)
	wait:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-signals:
			case <-t.C:
				break wait
			}
		}
		h.reload(ctx)
	}
}

// reload reads the view and, when its markup changed, wakes the streams.
func (h *hub) reload(ctx context.Context) {
	v, err := h.ld.load(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintf(h.log, "laserbrain ui: reading the fleet: %v\n", err)
		h.mu.Lock()
		prev := h.v
		h.mu.Unlock()
		if prev == nil {
			return
		}
		// The last view stands, and says it could not be read again.
		cp := *prev
		cp.Problem = "the fleet could not be read again: " + err.Error()
		v = &cp
	}
	secs := h.render(v)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.loads++
	changed := len(secs) != len(h.sections)
	for id, html := range secs {
		if h.sections[id] != html {
			changed = true
		}
	}
	h.v = v
	if !changed {
		return
	}
	h.sections = secs
	h.version++
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// current waits for the first load, then returns the sections and their
// version.
func (h *hub) current(ctx context.Context) (map[string]string, uint64) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sections, h.version
}

// view waits for the first load and returns the view.
func (h *hub) view(ctx context.Context) *View {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.v
}

func (h *hub) subscribe() chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = true
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan struct{}) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}
