package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/supercode/hookserver"
)

// hookServerPid is the process id of the hook server laserbrain lb runs
// for a caller with env, read from the socket's peer (0: none listens).
func hookServerPid(t testing.TB, lb string, env []string) int {
	t.Helper()
	sock, err := hookserver.Socket(lb, env)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		return 0
	}
	defer c.Close()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		t.Fatalf("reading the hook server's pid: %v %v", err, cerr)
	}
	return int(cred.Pid)
}

// TestGateAnswersPostgresThroughHookServer: with LASERBRAIN_STORE naming
// a PostgreSQL database, the gate hands each event to one long-lived
// laserbrain hook server, which answers as `laserbrain hook pre-tool-use`
// (a process of its own, the path the gate took before) answers the same
// event; and it never fails open. The server killed: the next call starts
// another. The server hung (SIGSTOP): every call is refused, saying so,
// within the hook's deadline. The database stopped: the force-push is
// refused for want of the run, the reversible call goes on (decided from
// the command alone), and once it is back the refusal is the run's again.
// Idle, the server ends and takes its socket with it.
func TestGateAnswersPostgresThroughHookServer(t *testing.T) {
	dir := t.TempDir()
	gate, lb := filepath.Join(dir, "laserbrain-gate"), filepath.Join(dir, "laserbrain")
	copyExec(t, buildGate(t), gate)
	copyExec(t, buildLaserbrain(t), lb)
	c := pgtest.StartCluster(t)
	dsn := pgtest.URL(t, c.NewDatabase(t))
	env := append(quietEnv(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "LASERBRAIN_FLEET=f", "LASERBRAIN_AGENT=",
		"LASERBRAIN_STORE="+dsn)
	lbRun(t, lb, env, "store", "init")
	run := lbRun(t, lb, env, "run", "--agent", "a", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", "echo $LASERBRAIN_RUN")
	env = append(env, "LASERBRAIN_RUN="+run)
	t.Cleanup(func() {
		stopHookServer(t, lb, env)
		stopHookServer(t, lb, append(env, hookserver.EnvIdle+"=1s"))
	})
	call := func(bin string, args []string, command string) (string, string, int, time.Duration) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","session_id":"s1","tool_use_id":"t1","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"` + command + `"}}`)
		start := time.Now()
		out, errOut, code := proctest.Run(t, cmd)
		return out, errOut, code, time.Since(start)
	}
	const push = "git push --force origin main"
	// The oracle: laserbrain's own hook process on the same events.
	for _, command := range []string{"ls -la", push} {
		wo, we, wc, _ := call(lb, []string{"hook", "pre-tool-use"}, command)
		go_, ge, gc, _ := call(gate, nil, command)
		if go_ != wo || ge != we || gc != wc {
			t.Fatalf("%s: the gate answered exit %d %q %q, laserbrain hook exit %d %q %q", command, gc, go_, ge, wc, wo, we)
		}
	}
	if _, errOut, code, _ := call(gate, nil, push); code != 2 || !strings.Contains(errOut, "force-push") {
		t.Fatalf("force-push: exit %d %q", code, errOut)
	}
	first := hookServerPid(t, lb, env)
	if first == 0 {
		t.Fatal("no hook server listens after the gate's calls")
	}
	call(gate, nil, "ls -la")
	if again := hookServerPid(t, lb, env); again != first {
		t.Fatalf("a second server (%d) answered after %d: one is started per user, store and binary", again, first)
	}

	// Killed: the next calls — four at once — start one other, and are
	// answered.
	killAndWait(t, first, syscall.SIGKILL)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			if _, errOut, code, _ := call(gate, nil, push); code != 2 || !strings.Contains(errOut, "force-push") {
				errs <- fmt.Sprintf("exit %d %q", code, errOut)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("force-push after the server was killed: %s", e)
	}
	sock, _ := hookserver.Socket(lb, env)
	if n := serversAt(t, sock); n != 1 {
		t.Fatalf("%d servers run for %s after four calls at once, want 1", n, sock)
	}
	second := hookServerPid(t, lb, env)
	if second == 0 || second == first {
		t.Fatalf("after the kill: server %d (was %d)", second, first)
	}

	// Hung: refused, within the deadline, saying so.
	if err := syscall.Kill(second, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"ls -la", push} {
		_, errOut, code, took := call(gate, nil, command)
		if code != 2 || !strings.Contains(errOut, "guard error: the hook server") || !strings.Contains(errOut, "gave no answer: no answer in time") {
			t.Fatalf("%s with the server stopped: exit %d %q", command, code, errOut)
		}
		if took > hookDeadline {
			t.Fatalf("%s with the server stopped: answered after %v, past the hook's %v", command, took, hookDeadline)
		}
	}
	_ = syscall.Kill(second, syscall.SIGCONT)
	killAndWait(t, second, syscall.SIGKILL)

	// The database stopped: the run cannot be read.
	if err := c.Halt(); err != nil {
		t.Fatal(err)
	}
	_, errOut, code, took := call(gate, nil, push)
	if code != 2 || !strings.Contains(errOut, "cannot read the run: cannot reach the laserbrain store") || took > hookDeadline {
		t.Fatalf("force-push with the database stopped: exit %d after %v: %q", code, took, errOut)
	}
	if out, errOut, code, _ := call(gate, nil, "ls -la"); code != 0 || out != "" {
		t.Fatalf("ls with the database stopped: exit %d %q %q", code, out, errOut)
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code, _ := call(gate, nil, push); code != 2 || strings.Contains(errOut, "cannot read the run") || !strings.Contains(errOut, "force-push") {
		t.Fatalf("force-push with the database back: exit %d %q", code, errOut)
	}

	// Idle (1 s here: another server, its idle time being part of what
	// a server is started with): the server ends, and its socket is gone.
	env = append(env, hookserver.EnvIdle+"=1s")
	call(gate, nil, "ls -la")
	idle := hookServerPid(t, lb, env)
	if idle == 0 || idle == second {
		t.Fatalf("the server idle after 1 s: %d", idle)
	}
	waitGone(t, idle, 30*time.Second)
	sock, _ = hookserver.Socket(lb, env)
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the idle server left its socket: %v", err)
	}
}

// hookDeadline is what a gate handing an event on may take: the hook
// server's deadline, its start, and room for a loaded machine.
const hookDeadline = 10 * time.Second

// killAndWait signals pid and waits (up to 10 s) until it is gone.
func killAndWait(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 10*time.Second)
}

// waitGone waits until pid has ended, up to limit (the server is no
// child of this test: its pidfd says when it ends).
func waitGone(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(limit.Milliseconds()))
	if err != nil || n == 0 {
		t.Fatalf("process %d still runs after %v (%v)", pid, limit, err)
	}
}

// serversAt counts the processes serving sock (their command line names
// it).
func serversAt(t *testing.T, sock string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "serve\x00--socket\x00"+sock+"\x00") {
			n++
		}
	}
	return n
}
