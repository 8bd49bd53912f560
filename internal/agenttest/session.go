package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunTimeout is the deadline of one Session.Run unless Session.Timeout says
// otherwise.
const RunTimeout = 5 * time.Minute

// Session is one client's world for one test: a fresh HOME (and the
// client's own config directories under it), a project directory, the
// scripted model the client is configured against, and the environment
// that says all that.
type Session struct {
	Client *Client
	Bin    string // the client's binary
	// Claude is Bin when Client is Claude Code (the Claude-only tests use it).
	Claude string
	Home   string // fresh per session; XDG_* directories live under it
	Dir    string // the working directory (a project)
	Model  *Model
	// Env is added to the base environment (KEY=VALUE), after the client's own.
	Env []string
	// Timeout bounds each Run (default RunTimeout).
	Timeout time.Duration
	// UserConfig is the client's user configuration file or directory in
	// Home (~/.claude/settings.json, $CODEX_HOME/config.toml, …): where an
	// install into this session's user scope writes.
	UserConfig string

	extra []string // the client's per-session settings (its setup adds them)
	tmp   string   // TMPDIR, when the client's setup gives the session one of its own
	id    string   // the value of AGENTTEST_SESSION
	runs  int      // runs started, for AGENTTEST_RUN

	// Reaped lists the processes ("PID command line") a run left behind
	// and Run stopped, such as Cline's hub daemon.
	Reaped []string
}

// NewSession makes a Claude Code session with a fresh HOME and work
// directory under the test's temp dir, against model (a Messages server).
func NewSession(t testing.TB, claude string, model *Model) *Session {
	t.Helper()
	s := newSession(t, ClaudeCode, claude, model)
	ClaudeCode.setup(t, s)
	return s
}

// NewAgent is the whole world for one test with client c: its binary
// (skipped loudly when missing, failing under CI=true), a scripted model of
// its API playing turns, a fresh HOME and project (a git repository with
// one commit), and the client configured there against the model, headless,
// every tool allowed. Prompt(t, prompt) then drives it.
func NewAgent(t testing.TB, c *Client, turns ...Turn) *Session {
	t.Helper()
	bin := c.Require(t)
	s := newSession(t, c, bin, NewModelFor(t, c.API, turns...))
	s.git(t, "init", "-q", "-b", "main")
	s.git(t, "-c", "user.name=agenttest", "-c", "user.email=agenttest@localhost", "commit", "-q", "--allow-empty", "-m", "start")
	c.setup(t, s)
	return s
}

func newSession(t testing.TB, c *Client, bin string, model *Model) *Session {
	t.Helper()
	if model.API != c.API {
		t.Fatalf("agenttest: %s speaks the %s API, the model %s", c.Name, c.API, model.API)
	}
	root := t.TempDir()
	s := &Session{Client: c, Bin: bin, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "work"), Model: model, id: root}
	if c == ClaudeCode {
		s.Claude = bin
	}
	for _, d := range []string{s.Home, s.Dir, s.xdg("config"), s.xdg("data"), s.xdg("state"), s.xdg("cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.reap(t, "") })
	return s
}

// Join adds a second client to this session's HOME and project — two
// agents on one repository, on one person's machine. c gets its own
// scripted model and is configured in the same HOME (it must be another
// client: each keeps its own config files there); it starts with a copy of
// s.Env. The two can work at once (Start both, then Wait both); each one's
// Wait stops only what its own run left.
func (s *Session) Join(t testing.TB, c *Client, turns ...Turn) *Session {
	t.Helper()
	if c == s.Client {
		t.Fatalf("agenttest: %s is already in this session; a second %s needs a HOME of its own (NewAgent)", c.Name, c.Name)
	}
	j := s.join(t, c, c.Require(t), NewModelFor(t, c.API, turns...))
	c.setup(t, j)
	return j
}

func (s *Session) join(t testing.TB, c *Client, bin string, model *Model) *Session {
	t.Helper()
	j := &Session{Client: c, Bin: bin, Home: s.Home, Dir: s.Dir, Model: model, id: t.TempDir(),
		Env: append([]string(nil), s.Env...)}
	if c == ClaudeCode {
		j.Claude = bin
	}
	t.Cleanup(func() { j.reap(t, "") })
	return j
}

func (s *Session) xdg(kind string) string {
	switch kind {
	case "config":
		return filepath.Join(s.Home, ".config")
	case "data":
		return filepath.Join(s.Home, ".local", "share")
	case "state":
		return filepath.Join(s.Home, ".local", "state")
	}
	return filepath.Join(s.Home, ".cache")
}

func (s *Session) git(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.Dir
	cmd.Env = s.BaseEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// BaseEnv is the environment the client runs in: PATH (with the client's
// own directory first, so `codex` and the like resolve by name), HOME, the
// XDG directories under it, a UTF-8 locale, the client's settings that
// point it at the model, and Env — none of the caller's own agent settings.
func (s *Session) BaseEnv() []string {
	path := os.Getenv("PATH")
	tmp := os.TempDir()
	if s.tmp != "" {
		tmp = s.tmp
	}
	if s.Bin != "" {
		path = filepath.Dir(s.Bin) + string(os.PathListSeparator) + path
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + s.Home,
		"USER=" + os.Getenv("USER"),
		"LANG=C.UTF-8",
		"TMPDIR=" + tmp,
		"XDG_CONFIG_HOME=" + s.xdg("config"),
		"XDG_DATA_HOME=" + s.xdg("data"),
		"XDG_STATE_HOME=" + s.xdg("state"),
		"XDG_CACHE_HOME=" + s.xdg("cache"),
		"NO_COLOR=1",
		sessionVar + "=" + s.id,
	}
	if s.Client != nil && s.Client.env != nil {
		env = append(env, s.Client.env(s)...)
	}
	env = append(env, s.extra...)
	return append(env, s.Env...)
}

// Result is what one run produced.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
	// JSON is the result object ({"type":"result",…}) of Claude Code's and
	// Qwen Code's --output-format json, when stdout holds one.
	JSON map[string]any
}

// ClaudeArgs are the flags every scripted Claude Code run needs: print
// mode, JSON output, and acceptEdits with an explicit tool list (as root,
// --dangerously-skip-permissions is refused).
func ClaudeArgs(prompt string, allowedTools ...string) []string {
	args := []string{"-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"}
	if len(allowedTools) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowedTools, " "))
	}
	return args
}

// Args are the client's headless flags for one prompt (its binary not
// included), as a wrapper such as `laserbrain run -- BIN ARGS…` passes them.
func (s *Session) Args(prompt string) []string { return s.Client.args(s, prompt) }

// Prompt runs the client itself, headless, on prompt.
func (s *Session) Prompt(t testing.TB, prompt string) Result {
	t.Helper()
	return s.Run(t, s.Bin, s.Args(prompt)...)
}

// PromptVia runs the client on prompt through a wrapper: name pre… BIN
// ARGS…, e.g. PromptVia(t, laserbrain, []string{"run", "--agent", "a1", "--"}, "…").
func (s *Session) PromptVia(t testing.TB, name string, pre []string, prompt string) Result {
	t.Helper()
	args := append(append(append([]string(nil), pre...), s.Bin), s.Args(prompt)...)
	return s.Run(t, name, args...)
}

// Install runs `laserbrain install CLIENT ARGS…` (laserbrain is its path)
// in this session's project with its environment: HOME, the client's config
// directories and the client on PATH, so the install lands where this
// client will read it. It fails the test on a non-zero exit.
func (s *Session) Install(t testing.TB, laserbrain string, args ...string) Result {
	t.Helper()
	r := s.Run(t, laserbrain, append([]string{"install", s.Client.Name}, args...)...)
	if r.ExitCode != 0 {
		t.Fatalf("laserbrain install %s %s: exit %d\nstdout: %s\nstderr: %s", s.Client.Name, strings.Join(args, " "), r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// Run starts name (the client, or a wrapper such as laserbrain run) with
// args in s.Dir, stdin empty, and waits up to the deadline; on the deadline
// its whole process group is killed and the test fails. Every process the
// run left behind (a detached daemon) is stopped before Run returns.
func (s *Session) Run(t testing.TB, name string, args ...string) Result {
	t.Helper()
	return s.Start(t, name, args...).Wait(t)
}

// Running is a process Start started; Wait ends it.
type Running struct {
	s       *Session
	cmd     *exec.Cmd
	marker  string
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	out     bytes.Buffer
	errb    bytes.Buffer
	err     error
	done    chan struct{}
}

// Start is Run without the waiting, so that two clients (two sessions) can
// work at once; Wait must be called from the test's goroutine. The deadline
// counts from Start.
func (s *Session) Start(t testing.TB, name string, args ...string) *Running {
	t.Helper()
	timeout := s.Timeout
	if timeout == 0 {
		timeout = RunTimeout
	}
	s.runs++
	r := &Running{s: s, timeout: timeout, marker: fmt.Sprintf("%s=%s.%d", runVar, s.id, s.runs), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(s.BaseEnv(), r.marker)
	cmd.Stdout, cmd.Stderr = &r.out, &r.errb
	// Its own group, so the deadline kills its children too; and killed with
	// the test binary (a go test -timeout panic) instead of left waiting on
	// a model server that is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	r.cmd = cmd
	if err := cmd.Start(); err != nil {
		r.cancel()
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r
}

// Wait waits for the process, stops what it left behind, and returns what
// it printed and its exit code; past the deadline it fails the test.
func (r *Running) Wait(t testing.TB) Result {
	t.Helper()
	<-r.done
	r.cancel()
	r.s.reap(t, r.marker)
	res := Result{Stdout: r.out.String(), Stderr: r.errb.String()}
	name := filepath.Base(r.cmd.Path)
	var ee *exec.ExitError
	switch {
	case r.ctx.Err() == context.DeadlineExceeded:
		t.Fatalf("%s did not finish within %s (the model had %d requests, played %d turns)\nstdout: %s\nstderr: %s",
			name, r.timeout, len(r.s.Model.Requests()), r.s.Model.Played(), clipText(res.Stdout), clipText(res.Stderr))
	case errors.As(r.err, &ee):
		res.ExitCode = ee.ExitCode()
	case r.err != nil:
		t.Fatalf("running %s: %v\nstderr: %s", name, r.err, res.Stderr)
	}
	res.JSON = resultObject(res.Stdout)
	return res
}

// resultObject finds the {"type":"result"} object in a client's output:
// the last line that is one (Claude Code prints one line), or the last such
// element of a JSON array (Qwen Code prints its whole transcript as one).
func resultObject(stdout string) map[string]any {
	var all []map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(stdout)), &all) == nil {
		for i := len(all) - 1; i >= 0; i-- {
			if all[i]["type"] == "result" {
				return all[i]
			}
		}
		return nil
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil && m["type"] == "result" {
			return m
		}
	}
	return nil
}

// clipText keeps a long output's first 2000 and last 4000 bytes, where a
// client says what it is doing and how it ended.
func clipText(s string) string {
	if len(s) > 6000 {
		return s[:2000] + "\n…\n" + s[len(s)-4000:]
	}
	return s
}

// The variables that mark a session's processes: every process a session
// starts carries sessionVar, every one a run starts runVar too, and their
// children inherit them (a client that scrubs its children's environment
// keeps HOME at least, which is fresh per session).
const (
	sessionVar = "AGENTTEST_SESSION"
	runVar     = "AGENTTEST_RUN"
)

// Processes are the processes still running in this session: those marked
// with its AGENTTEST_SESSION, and unmarked ones with its HOME.
func (s *Session) Processes() []int {
	mark := []byte(sessionVar + "=" + s.id + "\x00")
	home := []byte("HOME=" + s.Home + "\x00")
	return processes(func(env []byte) bool {
		return hasVar(env, mark) || (hasVar(env, home) && !bytes.Contains(env, []byte(sessionVar+"=")))
	})
}

// processes lists the live processes whose environment matches.
func processes(match func(env []byte) bool) []int {
	self := os.Getpid()
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := environ(e.Name())
		if err != nil || !match(env) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && zombie(stat) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// environ is a process's environment. A process in the middle of an exec
// shows an empty one (its new memory has no environment yet): a client's
// daemon detaching as the client exits is there, so a user process that
// shows none is read again until it shows one, it is gone, or 2 s pass.
// (A kernel thread has no executable to read and none to show.)
func environ(pid string) ([]byte, error) {
	path := filepath.Join("/proc", pid, "environ")
	env, err := os.ReadFile(path)
	if err != nil || len(env) > 0 {
		return env, err
	}
	if _, err := os.Readlink(filepath.Join("/proc", pid, "exe")); err != nil {
		return env, nil
	}
	for end := time.Now().Add(2 * time.Second); len(env) == 0 && err == nil && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
		env, err = os.ReadFile(path)
	}
	return env, err
}

// hasVar: env (NUL-separated) holds the entry kv, which ends in NUL.
func hasVar(env, kv []byte) bool {
	return bytes.HasPrefix(env, kv) || bytes.Contains(env, append([]byte{0}, kv...))
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// reap stops what a run left behind (Cline's hub daemon, a stray MCP
// server): the processes marked with marker (a run's, as KEY=VALUE), or
// with marker "" every process of the session. SIGTERM, then SIGKILL after
// a grace period; the test fails when one still runs after that.
func (s *Session) reap(t testing.TB, marker string) {
	t.Helper()
	find := s.Processes
	if marker != "" {
		kv := []byte(marker + "\x00")
		find = func() []int { return processes(func(env []byte) bool { return hasVar(env, kv) }) }
	}
	pids := find()
	if len(pids) == 0 {
		return
	}
	left := describe(pids)
	s.Reaped = append(s.Reaped, left...)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && len(find()) > 0; time.Sleep(50 * time.Millisecond) {
	}
	for _, pid := range find() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if len(find()) == 0 {
			t.Logf("agenttest: stopped what the run left behind: %s", strings.Join(left, "; "))
			return
		}
	}
	t.Errorf("agenttest: processes of this session still run after SIGKILL: %s", strings.Join(describe(find()), "; "))
}

// describe is each process as "PID command line".
func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	return out
}

// WriteJSON writes v as JSON to a file under s.Dir and returns its path.
func (s *Session) WriteJSON(t testing.TB, name string, v any) string {
	t.Helper()
	p := filepath.Join(s.Dir, name)
	writeFile(t, p, mustJSON(t, v))
	return p
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
