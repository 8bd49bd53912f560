package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/internal/fswatch"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/undo"
)

// Options configures a Server.
type Options struct {
	// Repo is the repository's root and FleetID its fleet, both resolved.
	Repo    string
	FleetID string
	// Fleet is the fleet store the person's acts write to; Runs is
	// laserbrain's run store.
	Fleet fleet.Store
	Runs  laserbrain.Store
	// Undo is the machine's undo checkpoints: what each call changed (nil:
	// left out).
	Undo *undo.Store
	// Usage reads the model tokens a run's agent spent (nil: not shown).
	Usage func(fleet.Run) (fleet.Usage, bool)
	// Addr is where to listen: a loopback address (LoopbackAddr).
	Addr string
	// By is the person: every act is journaled as theirs.
	By string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Poll is how often a store without file notifications is asked for
	// its version (fleet.Versioner; 0: 250 ms).
	Poll time.Duration
	// Log gets a line per act and per failed reload (nil: discarded).
	Log io.Writer
}

// Server is the live view of one fleet.
type Server struct {
	o     Options
	g     *guard
	ln    net.Listener
	hub   *hub
	ld    *loader
	nonce string
}

// New makes a server; nothing listens yet.
func New(o Options) (*Server, error) {
	addr, err := LoopbackAddr(o.Addr)
	if err != nil {
		return nil, err
	}
	o.Addr = addr
	if o.Fleet == nil {
		return nil, errors.New("ui: no fleet store")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.By == "" {
		o.By = "a person"
	}
	g, err := newGuard()
	if err != nil {
		return nil, err
	}
	nonce, err := secret()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, g: g, nonce: nonce}
	s.ld = &loader{o: o}
	s.hub = newHub(s.ld, s.renderSections, o.Log)
	return s, nil
}

// Listen binds the address and returns the one-time link to open: it
// carries the launch token, which the first browser to open it exchanges
// for its session. The token is printed once and kept in memory only.
func (s *Server) Listen() (string, error) {
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return "", err
	}
	s.ln = ln
	s.g.bind(ln.Addr())
	return s.link(), nil
}

func (s *Server) link() string {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	return "http://" + s.ln.Addr().String() + "/?launch=" + s.g.launch
}

// NewLink issues a new one-time link (after Listen), for a person whose
// browser spent the last one and lost its session (it crashed, or the
// page was opened elsewhere): the session the old link gave ends, so one
// browser at a time holds the view and its acts.
func (s *Server) NewLink() (string, error) {
	if s.ln == nil {
		return "", errors.New("ui: NewLink before Listen")
	}
	if err := s.g.renew(); err != nil {
		return "", err
	}
	return s.link(), nil
}

// Addr is the address listened on (after Listen).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers until ctx ends, following the stores' changes.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		return errors.New("ui: Serve before Listen")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals, err := s.watch(ctx)
	if err != nil {
		return err
	}
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); s.hub.run(ctx, signals) }()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.ln) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer scancel()
	cancel() // ends the event streams, so Shutdown need not wait for them
	_ = srv.Shutdown(sctx)
	<-hubDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// watch is the stores' change signal: the kernel's file notifications on
// the local fleet store and the repository's .ponder, else the store's
// version (fleet.Versioner) asked every Poll.
func (s *Server) watch(ctx context.Context) (<-chan struct{}, error) {
	var roots []string
	if s.o.Repo != "" {
		roots = append(roots, filepath.Join(s.o.Repo, ".ponder"))
	}
	local, isLocal := s.o.Fleet.(*fleet.Local)
	if isLocal {
		roots = append(roots, local.Dir())
	}
	files, err := fswatch.Watch(ctx, roots, fswatch.Lock)
	if err != nil {
		return nil, fmt.Errorf("watching %v: %w", roots, err)
	}
	if isLocal {
		return files, nil
	}
	out := make(chan struct{}, 1)
	signal := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	v, versioned := s.o.Fleet.(fleet.Versioner)
	go func() {
		t := time.NewTicker(s.o.Poll)
		defer t.Stop()
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-files:
				if !ok {
					files = nil
					continue
				}
				signal()
			case <-t.C:
				if !versioned {
					signal() // no way to tell: read again each tick
					continue
				}
				cur, err := v.Version(ctx, s.o.FleetID)
				if err == nil && cur != last {
					last = cur
					signal()
				}
			}
		}
	}()
	return out, nil
}

// Handler is the server's routes, each behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /agent", s.agent)
	mux.HandleFunc("POST /act/release", s.act(s.release))
	mux.HandleFunc("POST /act/answer", s.act(s.answer))
	mux.HandleFunc("POST /act/authorize", s.act(s.authorize))
	return headers(mux)
}

// headers are on every answer: nothing is cached, framed, referred, or
// loaded from anywhere but this server.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Cache-Control", "no-store")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

func forbid(w http.ResponseWriter, err error) {
	http.Error(w, "laserbrain ui: "+err.Error(), http.StatusForbidden)
}

// page answers the one-time link (exchanging its token for a session and
// sending the browser on to the page without it) and the page itself.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if err := s.g.host(r); err != nil {
		forbid(w, err)
		return
	}
	if t := r.URL.Query().Get("launch"); t != "" {
		cookie, ok := s.g.exchange(t)
		if !ok {
			forbid(w, fmt.Errorf("%w: this link was used already, or is not this server's: press Enter where laserbrain ui runs (or send it SIGUSR1) for a new one", errForbidden))
			return
		}
		http.SetCookie(w, cookie)
		fmt.Fprintf(s.o.Log, "laserbrain ui: a browser opened the link; the link is spent\n")
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if err := s.g.session(r); err != nil {
		forbid(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+s.nonce+"'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	// The top goes out at once; the rest follows when the fleet is read
	// (the first read of a large fleet takes seconds).
	if _, err := w.Write(s.pageTop()); err != nil {
		return
	}
	_ = http.NewResponseController(w).Flush()
	secs, version := s.hub.current(r.Context())
	if r.Context().Err() != nil {
		return // the browser went away, or the server ends
	}
	_, _ = w.Write(s.pageRest(secs, version))
}

// events streams the page's changes: every section first, then each
// section whose markup changed, as one JSON object per event.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if err := s.g.session(r); err != nil {
		forbid(w, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sub := s.hub.subscribe()
	defer s.hub.unsubscribe(sub)
	sent := map[string]string{}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	send := func() error {
		secs, version := s.hub.current(r.Context())
		changed := map[string]string{}
		for id, html := range secs {
			if sent[id] != html {
				changed[id] = html
				sent[id] = html
			}
		}
		if len(changed) == 0 && len(sent) > 0 {
			return nil
		}
		b, err := json.Marshal(struct {
			Version  uint64            `json:"version"`
			Sections map[string]string `json:"sections"`
		}{version, changed})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send(); err != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub:
			if err := send(); err != nil {
				return
			}
		case <-keep.C:
			if _, err := io.WriteString(w, ": still here\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// agent answers an agent's drill-down, drawn from the current view.
func (s *Server) agent(w http.ResponseWriter, r *http.Request) {
	if err := s.g.session(r); err != nil {
		forbid(w, err)
		return
	}
	name := r.URL.Query().Get("name")
	v := s.hub.view(r.Context())
	if v == nil {
		http.Error(w, "laserbrain ui: the fleet could not be read yet", http.StatusServiceUnavailable)
		return
	}
	d, err := s.ld.detail(r.Context(), v, name)
	if errors.Is(err, fleet.ErrNotFound) {
		http.Error(w, fmt.Sprintf("laserbrain ui: no agent %q in this fleet", name), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, "laserbrain ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(renderDetail(d))
}
