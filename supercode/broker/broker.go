package broker

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/supercode/agentrun"

	"github.com/laserkit/laserkit/internal/envconfig"
)

// EnvSocket names the broker's socket in a confined agent's environment:
// laserbrain's hooks, MCP server and check hand their operation to it when
// it is set.
const EnvSocket = envconfig.BrokerEnv

// Request is what a client asks: a laserbrain subcommand and its
// arguments, the client's own variables and its working directory.
type Request struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	Dir  string            `json:"dir,omitempty"`
	// Environ is the caller's whole environment, taken only by a server
	// whose callers are its own user (Server.CallerEnv).
	Environ []string `json:"environ,omitempty"`
}

// maxHeader bounds the request line.
const maxHeader = 256 << 10

// SessionEnv are the variables a client's hooks and MCP server get from the
// agent client and the broker takes from a request: the session's id,
// whether a person attends it, the project directory. Every other variable
// comes from the environment the supervisor gave the agent.
var SessionEnv = []string{
	"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_SESSION_ID",
	"CLAUDE_CODE_CHILD_SESSION", "CLAUDE_PROJECT_DIR", "AI_AGENT",
	"QWEN_CODE_SESSION_ID", "GEMINI_PROJECT_DIR",
}

// PonderEnv are the variables a ponder command also takes from the
// request: the session the agent's shell selected and how it reaches OCA.
// The ponder the broker runs is confined as the agent is, so they give it
// nothing the agent could not do itself.
var PonderEnv = []string{"PONDER_SLUG", "PONDER_OCA", "PONDER_OCA_DSN"}

// requestEnv are the variables an operation takes from the request.
func requestEnv(argv []string) []string {
	if len(argv) > 0 && argv[0] == OpPonder {
		return append(append([]string(nil), SessionEnv...), PonderEnv...)
	}
	return SessionEnv
}

// EnvConfinement carries, in the environment of each operation the broker
// runs (never the agent's), the agent's confinement (confine.Spec, as
// JSON): a ponder command is run under it.
const EnvConfinement = "LASERBRAIN_CONFINEMENT"

// Frame kinds.
const (
	frameStdout = 'o'
	frameStderr = 'e'
	frameExit   = 'x'
)

// Server runs the operations confined clients hand it.
type Server struct {
	// Self is the laserbrain binary that runs each operation.
	Self string
	// Env is the environment the supervisor gave the agent: each
	// operation runs with it (EnvSocket taken out), plus the request's
	// SessionEnv variables.
	Env []string
	// Dir is where an operation runs when the request names no existing
	// directory.
	Dir string
	// Allow refuses an operation (nil: none is allowed).
	Allow func(argv []string) error
	// Log receives what the broker refused or could not do (nil: dropped).
	Log func(string)
	// Local answers an operation in this process where it can (handled
	// false: it runs as a process of Self, as every operation does when
	// Local is nil). An operation that needs no process of its own costs
	// the agent no process start, and it shares what this process keeps
	// open. Its context ends when Close gives up waiting.
	Local func(ctx context.Context, op Op) (code int, handled bool)
	// CallerEnv: the operation runs with the request's whole environment
	// (Request.Environ) instead of Env and SessionEnv. Only for a server
	// that a caller of another user cannot reach (laserbrain hook serve:
	// a private directory, and the peer's user checked on every
	// connection) — never for a confined agent's broker, whose agent must
	// not choose the environment its hooks are answered in.
	CallerEnv bool

	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	cmds   map[*exec.Cmd]bool
	done   bool
}

// Listen opens the socket at path (its directory must be private to the
// supervisor and the agent) and serves it until Close.
func (s *Server) Listen(path string) error {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("the supervisor's broker: %w", err)
	}
	s.Serve(ln)
	return nil
}

// Serve serves the listener ln until Close.
func (s *Server) Serve(ln net.Listener) {
	s.ln = ln
	s.cmds = map[*exec.Cmd]bool{}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.accept(ln)
	}()
}

// accept serves each connection until the listener is closed. Any other
// accept error (out of descriptors, a connection aborted before it was
// taken) is logged and retried after a pause that grows to a second: a
// broker that stopped accepting would leave every confined hook waiting
// for its deadline and then denying.
func (s *Server) accept(ln net.Listener) {
	pause := time.Duration(0)
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.log("accept: %v; retrying in %v", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
		}()
	}
}

// Close stops accepting, lets the operations in flight finish for up to
// grace, then kills what is left and waits for it.
func (s *Server) Close(grace time.Duration) {
	if s.ln == nil {
		return
	}
	s.ln.Close()
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		s.cancel()
		return
	case <-time.After(grace):
	}
	s.cancel()
	s.mu.Lock()
	for c := range s.cmds {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	}
	s.mu.Unlock()
	<-finished
}

func (s *Server) log(format string, a ...any) {
	if s.Log != nil {
		s.Log(fmt.Sprintf(format, a...))
	}
}

// frames writes the answer's frames, one writer at a time.
type frames struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frames) frame(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(p)))
	if _, err := f.w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := f.w.Write(p)
	return err
}

type frameWriter struct {
	f    *frames
	kind byte
}

func (w frameWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += 1 << 20 {
		end := min(len(p), off+1<<20)
		if err := w.f.frame(w.kind, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// fail answers a request the broker could not run: a word on standard
// error, and the status.
func (s *Server) fail(f *frames, code int, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	s.log("laserbrain broker: %s", msg)
	_ = f.frame(frameStderr, []byte("laserbrain broker: "+msg+"\n"))
	exitFrame(f, code)
}

// exitFrame ends an answer with its exit status.
func exitFrame(f *frames, code int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(code))
	_ = f.frame(frameExit, b[:])
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	f := &frames{w: c}
	fail := func(code int, format string, a ...any) { s.fail(f, code, format, a...) }
	br := bufio.NewReaderSize(c, 64<<10)
	line, err := readLine(br, maxHeader)
	if err != nil {
		fail(2, "reading the request: %v", err)
		return
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		fail(2, "the request is not JSON: %v", err)
		return
	}
	if s.Allow == nil {
		fail(2, "no operation is allowed")
		return
	}
	if err := s.Allow(req.Argv); err != nil {
		fail(2, "refused %s: %v", strings.Join(req.Argv, " "), err)
		return
	}
	s.mu.Lock()
	closing := s.done
	s.mu.Unlock()
	if closing {
		fail(2, "the run is ending")
		return
	}
	env := s.env(req.Argv, req.Env)
	if s.CallerEnv {
		if err := samePeer(c); err != nil {
			fail(2, "%v", err)
			return
		}
		env = req.Environ
	}
	op := Op{Argv: req.Argv, Env: env, Dir: s.Dir, Stdin: br,
		Stdout: frameWriter{f, frameStdout}, Stderr: frameWriter{f, frameStderr}}
	if d := req.Dir; d != "" && filepath.IsAbs(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			op.Dir = d
		}
	}
	if code, handled := s.local(op); handled {
		exitFrame(f, code)
		return
	}
	s.spawn(f, op)
}

// local answers op in this process when Local takes it. A panic there is
// the operation's failure (status 125: not an answer, so a hook fails
// closed), not the broker's.
func (s *Server) local(op Op) (code int, handled bool) {
	if s.Local == nil {
		return 0, false
	}
	defer func() {
		if p := recover(); p != nil {
			s.log("laserbrain broker: %s: internal: %v", strings.Join(op.Argv, " "), p)
			fmt.Fprintf(op.Stderr, "laserbrain broker: internal: %v\n", p)
			code, handled = 125, true
		}
	}()
	return s.Local(s.ctx, op)
}

// spawn runs op as a process of Self and answers its exit status.
func (s *Server) spawn(f *frames, op Op) {
	cmd := exec.Command(s.Self, op.Argv...)
	cmd.Env, cmd.Dir = op.Env, op.Dir
	// The request's standard input through a pipe of our own: an
	// operation that never reads it (a ponder status, say, from a shell
	// whose input stays open) ends without waiting for its end.
	pr, pw, err := os.Pipe()
	if err != nil {
		s.fail(f, 125, "a pipe for the standard input: %v", err)
		return
	}
	go func() {
		_, _ = io.Copy(pw, op.Stdin)
		pw.Close()
	}()
	defer pw.Close()
	cmd.Stdin = pr
	cmd.Stdout, cmd.Stderr = op.Stdout, op.Stderr
	// Once the operation exited, its output is taken for up to outputGrace
	// (a loaded machine may be slow to drain it), then its pipes close.
	cmd.WaitDelay = outputGrace
	err = reap.Start(cmd)
	pr.Close() // the operation's now
	if err != nil {
		s.fail(f, 126, "starting %s: %v", s.Self, err)
		return
	}
	s.mu.Lock()
	s.cmds[cmd] = true
	s.mu.Unlock()
	err = reap.Wait(cmd)
	s.mu.Lock()
	delete(s.cmds, cmd)
	s.mu.Unlock()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		// Not the operation's own status (the wait for its output went
		// past WaitDelay, say): said, for the one who reads the refusal.
		s.log("laserbrain broker: %s: %v", strings.Join(op.Argv, " "), err)
		_ = f.frame(frameStderr, []byte("laserbrain broker: "+err.Error()+"\n"))
		code = 125
	}
	exitFrame(f, code)
}

// Op is one operation a client handed over: what a process of it would
// get.
type Op struct {
	// Argv is the laserbrain subcommand and its arguments, as Allow
	// accepted them.
	Argv []string
	// Env is the environment: the supervisor's for the agent, with the
	// client's session variables.
	Env []string
	// Dir is the working directory: the client's when it exists.
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Getenv reads the operation's environment, as os.Getenv would in a
// process of it.
func (o Op) Getenv(k string) string {
	for i := len(o.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(o.Env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// env is the supervisor's environment for the agent, without the socket,
// with the request's session variables (requestEnv).
func (s *Server) env(argv []string, from map[string]string) []string {
	keys := requestEnv(argv)
	env := make([]string, 0, len(s.Env)+len(from))
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k == EnvSocket || slices.Contains(keys, k) {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range keys {
		if v, ok := from[k]; ok && len(v) <= 4096 && !strings.ContainsRune(v, 0) {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// samePeer refuses a connection from another user than this process's
// (SO_PEERCRED).
func samePeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket connection")
	}
	cred, err := agentrun.PeerCred(uc)
	if err != nil {
		return fmt.Errorf("reading the caller's user: %v", err)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("refused: the caller is user %d, this server answers only user %d", cred.Uid, os.Getuid())
	}
	return nil
}

func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, fmt.Errorf("request longer than %d bytes", limit)
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// outputGrace bounds how long the broker takes an operation's output after
// the operation exited: within a hook's deadline.
const outputGrace = 3 * time.Second

// ErrNoAnswer is what Relay returns when the broker did not answer: the
// socket is gone (the supervisor ended) or the connection broke before an
// exit status.
var ErrNoAnswer = errors.New("the supervisor's broker gave no answer")

// ErrNotListening is wrapped, beside ErrNoAnswer, when nothing took the
// connection at all: the request was never sent.
var ErrNotListening = errors.New("nothing listens on the socket")

// dialError is a connection nothing took, said as ErrNoAnswer says it.
type dialError struct{ err error }

func (e dialError) Error() string   { return ErrNoAnswer.Error() + ": " + e.err.Error() }
func (e dialError) Unwrap() []error { return []error{ErrNoAnswer, ErrNotListening, e.err} }

// Relay hands the operation argv to the broker at socket, with this
// process's session variables (getenv) and directory, copies stdin to it
// and its answer to stdout and stderr, and returns the operation's exit
// status. The context bounds the whole exchange.
func Relay(ctx context.Context, socket string, argv []string, getenv func(string) string, dir string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req := Request{Argv: argv, Dir: dir, Env: map[string]string{}}
	for _, k := range requestEnv(argv) {
		if v := getenv(k); v != "" {
			req.Env[k] = v
		}
	}
	return send(ctx, socket, req, stdin, stdout, stderr)
}

// RelayEnviron is Relay to a server that takes the caller's whole
// environment (Server.CallerEnv): environ is sent as it is.
func RelayEnviron(ctx context.Context, socket string, argv, environ []string, dir string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return send(ctx, socket, Request{Argv: argv, Dir: dir, Environ: environ}, stdin, stdout, stderr)
}

// send is one exchange: the request, stdin, and the answer's frames.
func send(ctx context.Context, socket string, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return 0, dialError{err}
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	hdr, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	if _, err := c.Write(append(hdr, '\n')); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoAnswer, err)
	}
	go func() {
		if stdin != nil {
			_, _ = io.Copy(c, stdin)
		}
		_ = uc.CloseWrite()
	}()
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		var h [5]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			if ctx.Err() != nil {
				return 0, fmt.Errorf("%w in time: %v", ErrNoAnswer, ctx.Err())
			}
			return 0, fmt.Errorf("%w: %v", ErrNoAnswer, err)
		}
		n := binary.BigEndian.Uint32(h[1:])
		if n > 16<<20 {
			return 0, fmt.Errorf("%w: a frame of %d bytes", ErrNoAnswer, n)
		}
		switch h[0] {
		case frameStdout, frameStderr:
			w := stdout
			if h[0] == frameStderr {
				w = stderr
			}
			if _, err := io.CopyN(w, br, int64(n)); err != nil {
				return 0, fmt.Errorf("%w: %v", ErrNoAnswer, err)
			}
		case frameExit:
			if n != 4 {
				return 0, fmt.Errorf("%w: a bad exit frame", ErrNoAnswer)
			}
			var b [4]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return 0, fmt.Errorf("%w: %v", ErrNoAnswer, err)
			}
			return int(int32(binary.BigEndian.Uint32(b[:]))), nil
		default:
			return 0, fmt.Errorf("%w: an unknown frame %q", ErrNoAnswer, h[0])
		}
	}
}
