package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
)

// stallProxy is a PostgreSQL that answers the handshake and then stops
// answering: a TCP listener in front of the test cluster's socket that
// relays each connection until the server's first ReadyForQuery, then
// holds it open and relays nothing more. Healed, it relays new
// connections whole.
type stallProxy struct {
	ln     net.Listener
	socket string
	healed atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newStallProxy(t *testing.T, dsn string) (*stallProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dir, port := u.Query().Get("host"), u.Query().Get("port")
	if dir == "" {
		t.Fatalf("the test cluster's DSN names no socket directory: %s", dsn)
	}
	if port == "" {
		port = "5432"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, socket: filepath.Join(dir, ".s.PGSQL."+port)}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	go p.serve()
	q := url.Values{"sslmode": {"disable"}}
	proxied := url.URL{Scheme: "postgres", User: u.User, Host: ln.Addr().String(), Path: u.Path, RawQuery: q.Encode()}
	return p, proxied.String()
}

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("unix", p.socket)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		healed := p.healed.Load()
		go func() { _, _ = io.Copy(s, c) }() // the client's side: relayed (frozen servers answer nothing)
		go func() {
			if healed {
				_, _ = io.Copy(c, s)
				return
			}
			// Relay the server's messages up to its first ReadyForQuery.
			for {
				var hdr [5]byte
				if _, err := io.ReadFull(s, hdr[:]); err != nil {
					return
				}
				n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
				body := make([]byte, n)
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				if _, err := c.Write(append(hdr[:], body...)); err != nil {
					return
				}
				if hdr[0] == 'Z' {
					return // the handshake is over: nothing more is answered
				}
			}
		}()
	}
}

// A PostgreSQL that stops answering after the handshake: pre-tool-use
// denies an irreversible command within its deadline, saying it could not
// read the run in time; a reversible one goes on, as late; the observers
// answer within it too and queue their events, which the first hook after
// the database answers again records exactly once.
func TestStalledDatabaseDeadline(t *testing.T) {
	c := pgtest.StartCluster(t)
	direct := pgtest.URL(t, c.NewDatabase(t))
	proxy, proxied := newStallProxy(t, direct)
	home := filepath.Join(t.TempDir(), "home")
	env := []string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_FLEET=fleet-stall", "LASERBRAIN_RUN=", "CLAUDE_CODE_SESSION_ID=", "CLAUDE_CODE_SESSION_ATTENDED=0"}
	lbDirect := lbEnv{t: t, bin: laserbrainBinary(t), env: append(env, "LASERBRAIN_STORE="+direct)}
	lb := lbEnv{t: t, bin: laserbrainBinary(t), env: append(env, "LASERBRAIN_STORE="+proxied)}
	if out, errOut, code := lbDirect.run("", "store", "init"); code != 0 {
		t.Fatalf("store init: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := lbDirect.run(hookPayload("SessionStart", map[string]any{"source": "startup"}), "hook", "session-start"); code != 0 {
		t.Fatalf("session-start: %s", errOut)
	}
	limit := hook.StoreDeadline + 3*time.Second // the deadline, and a process's start and exit on a loaded machine
	timed := func(stdin string, args ...string) (string, string, int, time.Duration) {
		start := time.Now()
		out, errOut, code := lb.run(stdin, args...)
		return out, errOut, code, time.Since(start)
	}
	_, errOut, code, took := timed(hookPayload("PreToolUse", bash("t1", "git push --force origin main")), "hook", "pre-tool-use")
	if code != 2 || !strings.Contains(errOut, "cannot read the run in time") {
		t.Fatalf("a force push against a stalled database: exit %d, %s", code, errOut)
	}
	if took > limit {
		t.Errorf("the denial took %v, past the hook's deadline of %v", took, limit)
	}
	if _, errOut, code, took := timed(hookPayload("PreToolUse", bash("t2", "ls -la")), "hook", "pre-tool-use"); code != 0 || took > limit {
		t.Errorf("a reversible command against a stalled database: exit %d in %v, %s", code, took, errOut)
	}
	for _, id := range []string{"t3", "t4"} {
		_, errOut, code, took := timed(hookPayload("PostToolUse", bash(id, "go build ./...")), "hook", "post-tool-use")
		if code != 0 || took > limit {
			t.Errorf("post-tool-use %s against a stalled database: exit %d in %v, %s", id, code, took, errOut)
		}
	}
	proxy.healed.Store(true)
	if _, errOut, code := lb.run(hookPayload("PostToolUse", bash("t5", "make test")), "hook", "post-tool-use"); code != 0 {
		t.Fatalf("post-tool-use once the database answers: %s", errOut)
	}
	// Each queued event once, and the live one.
	conn, err := pgx.Connect(context.Background(), direct)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, id := range []string{"tool:t3", "tool:t4", "tool:t5"} {
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM laserbrain.fleet_events WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("event %s recorded %d times, want once", id, n)
		}
	}
	if out, _, _ := lbDirect.run("", "store", "flush"); !strings.HasPrefix(out, "0 queued") {
		t.Errorf("the queue is not empty after the flush: %s", out)
	}
}

// The halts table held by LOCK TABLE: the gate does not wait for it past
// its deadline.
func TestHaltsTableLocked(t *testing.T) {
	lb, _, dsn, _ := pgFleet(t, "fleet-lock", "CLAUDE_CODE_SESSION_ATTENDED=0")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE laserbrain.halts IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	limit := hook.StoreDeadline + 3*time.Second
	start := time.Now()
	_, errOut, code := lb.run(hookPayload("PreToolUse", bash("t1", "git push --force origin main")), "hook", "pre-tool-use")
	took := time.Since(start)
	if code != 2 || !strings.Contains(errOut, "in time") {
		t.Fatalf("a force push while the halts table is locked: exit %d, %s", code, errOut)
	}
	if took > limit {
		t.Errorf("took %v, past the deadline %v", took, limit)
	}
}

// PostgreSQL stopped with a halt in force: the halted agent's calls are
// denied, from what this machine last read, and say so.
func TestHaltHoldsWhileDatabaseDown(t *testing.T) {
	lb, c, dsn, home := pgFleet(t, "fleet-down", "CLAUDE_CODE_SESSION_ATTENDED=0")
	if _, errOut, code := lb.run(hookPayload("SessionStart", map[string]any{"source": "startup"}), "hook", "session-start"); code != 0 {
		t.Fatalf("session-start: %s", errOut)
	}
	b := openStores(t, dsn, home)
	st, err := b.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := st.RunForSession(ctx, "sess-outage")
	if err != nil {
		t.Fatal(err)
	}
	h := fleet.Halt{ID: "h1", Fleet: run.Fleet, Agent: fleet.RunAgent(run), Run: run.ID, Reason: "it duplicates another agent's work", By: "supervisor", At: time.Now().UTC()}
	putHalt(t, st, h)
	b.Close()
	// The gate reads it once while the database answers.
	if _, errOut, code := lb.run(hookPayload("PreToolUse", bash("t1", "ls")), "hook", "pre-tool-use"); code != 2 || !strings.Contains(errOut, "is halted") {
		t.Fatalf("the halted agent's call: exit %d, %s", code, errOut)
	}
	if err := c.Halt(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Resume() })
	for _, cmd := range []string{"ls", "go test ./...", "git status"} {
		_, errOut, code := lb.run(hookPayload("PreToolUse", bash("t2", cmd)), "hook", "pre-tool-use")
		if code != 2 || !strings.Contains(errOut, "is halted") || !strings.Contains(errOut, "out of reach") {
			t.Errorf("%s by the halted agent while the database is down: exit %d, %s", cmd, code, errOut)
		}
	}
	// Another session, never halted, goes on.
	other := strings.Replace(hookPayload("PreToolUse", bash("t3", "ls")), "sess-outage", "sess-other", 1)
	if _, errOut, code := lb.run(other, "hook", "pre-tool-use"); code != 0 {
		t.Errorf("an agent that is not halted, while the database is down: exit %d, %s", code, errOut)
	}
	_ = fmt.Sprint()
}

// A PostgreSQL frozen by SIGSTOP (a connection is accepted and nothing
// answers): through laserbrain-gate, which hands a database event to the
// laserbrain beside it, and through laserbrain hook pre-tool-use alike, a
// reversible command is allowed and an irreversible one refused, each
// within the deadline a hook's wait for another process has.
func TestFrozenDatabaseGate(t *testing.T) {
	c := pgtest.StartCluster(t)
	dsn := pgtest.URL(t, c.NewDatabase(t))
	lbPath, gate := installedPair(t)
	home := filepath.Join(t.TempDir(), "home")
	env := []string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_STORE=" + dsn, "LASERBRAIN_FLEET=fleet-frozen",
		"LASERBRAIN_RUN=", "CLAUDE_CODE_SESSION_ID=", "CLAUDE_CODE_SESSION_ATTENDED=0"}
	lb := lbEnv{t: t, bin: lbPath, env: env}
	if out, errOut, code := lb.run("", "store", "init"); code != 0 {
		t.Fatalf("store init: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := lb.run(hookPayload("SessionStart", map[string]any{"source": "startup"}), "hook", "session-start"); code != 0 {
		t.Fatalf("session-start: %s", errOut)
	}
	c.Freeze(t)
	// The deadline of a hook's wait for the laserbrain it hands the event
	// to: that process's store deadline, its close, its start and exit.
	limit := hook.StoreDeadline + 3*time.Second
	for _, g := range []struct {
		name string
		env  lbEnv
		args []string
	}{
		{"laserbrain-gate", lbEnv{t: t, bin: gate, env: env}, nil},
		{"laserbrain hook pre-tool-use", lb, []string{"hook", "pre-tool-use"}},
	} {
		start := time.Now()
		_, errOut, code := g.env.run(hookPayload("PreToolUse", bash("r1", "ls -la")), g.args...)
		if took := time.Since(start); code != 0 || took > limit {
			t.Errorf("%s: ls against a frozen database: exit %d in %v (deadline %v), %s", g.name, code, took, limit, errOut)
		}
		start = time.Now()
		_, errOut, code = g.env.run(hookPayload("PreToolUse", bash("r2", "git push --force origin main")), g.args...)
		if took := time.Since(start); code != 2 || !strings.Contains(errOut, "cannot read the run in time") || took > limit {
			t.Errorf("%s: a force push against a frozen database: exit %d in %v (deadline %v), %s", g.name, code, took, limit, errOut)
		}
	}
}
