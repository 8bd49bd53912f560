package hookserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/supercode/broker"
)

// Subcommand is the laserbrain command that runs a server: `laserbrain
// hook serve --socket PATH`.
var Subcommand = []string{"hook", "serve"}

// SocketFlag names the server's socket on its command line.
const SocketFlag = "--socket"

// EnvIdle sets how long a server lives without a request (a Go duration;
// DefaultIdle when unset or unreadable).
const EnvIdle = "LASERBRAIN_HOOK_SERVER_IDLE"

// DefaultIdle is how long a server lives without a request.
const DefaultIdle = 2 * time.Minute

// Ready is the line a server writes on its standard output once it
// listens.
const Ready = "ready"

// ErrNoServer is wrapped when no server could be started: the caller may
// answer the event another way (a laserbrain process of its own).
var ErrNoServer = errors.New("no hook server could be started")

// identity says whether the variable k decides the server's own answers,
// so that the server is started with it and found by it: the store, the
// home (and what places the default home), the database driver's PG*
// variables and the system's trust roots, the temporary directory its
// socket lives under, the locale and the search path. Every other
// variable comes with each request.
func identity(k string) bool {
	switch k {
	case envconfig.StoreEnv, envconfig.HomeEnv, EnvIdle, "HOME", "XDG_CONFIG_HOME", "USER", "LOGNAME",
		"TMPDIR", "PATH", "LANG", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR":
		return true
	}
	return strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "LC_")
}

// serverEnv is environ's identity variables, sorted, each once (the last
// value, as a process started with environ sees it): what a server is
// started with.
func serverEnv(environ []string) []string {
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && identity(k) {
			vals[k] = v
		}
	}
	env := make([]string, 0, len(vals))
	for k, v := range vals {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// Socket is the path of the server for the laserbrain binary self and a
// caller with environ, in a directory private to this user (created if
// missing; refused if another user could enter it).
func Socket(self string, environ []string) (string, error) {
	fi, err := os.Stat(self)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", self, fi.Size(), fi.ModTime().UnixNano())
	for _, kv := range serverEnv(environ) {
		fmt.Fprintf(h, "%s\x00", kv)
	}
	name := "hook-" + hex.EncodeToString(h.Sum(nil))[:20] + ".sock"
	dir := envconfig.ServerDir(tempDir(environ))
	// A unix socket's path is at most 107 bytes.
	if len(filepath.Join(dir, name)) > 100 {
		dir = envconfig.ServerDir("/tmp")
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// tempDir is the caller's TMPDIR, else /tmp.
func tempDir(environ []string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], "TMPDIR="); ok && filepath.IsAbs(v) {
			return v
		}
	}
	return "/tmp"
}

// privateDir makes dir if missing and refuses it unless it is a directory
// (not a link) of this user that no other user may enter.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to other users (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// Relay answers one hook (argv: hook EVENT [flags]) through the server
// for the laserbrain binary self, as a hook process with environ in dir
// would answer it: the server that listens, else one started now. It
// returns the hook's exit status. Its errors wrap ErrNoServer when no
// server could be started, and otherwise say why the server gave no
// answer; the context bounds it all, a server's start included.
func Relay(ctx context.Context, self string, argv, environ []string, dir string, input []byte, stdout, stderr io.Writer) (int, error) {
	sock, err := Socket(self, environ)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	code, err := relayOnce(ctx, sock, argv, environ, dir, input, stdout, stderr)
	if !errors.Is(err, broker.ErrNotListening) {
		return code, err
	}
	if err := start(ctx, self, sock, environ); err != nil {
		return 0, err
	}
	return relayOnce(ctx, sock, argv, environ, dir, input, stdout, stderr)
}

// relayOnce is one exchange with the server at sock, its failure said as
// the server's.
func relayOnce(ctx context.Context, sock string, argv, environ []string, dir string, input []byte, stdout, stderr io.Writer) (int, error) {
	code, err := broker.RelayEnviron(ctx, sock, argv, environ, dir, bytes.NewReader(input), stdout, stderr)
	if err == nil {
		return code, nil
	}
	why := strings.TrimPrefix(err.Error(), broker.ErrNoAnswer.Error()+": ")
	if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && !time.Now().Before(dl) {
		why = "no answer in time"
	}
	if errors.Is(err, broker.ErrNotListening) {
		return 0, fmt.Errorf("the hook server at %s: %w: %s", sock, broker.ErrNotListening, why)
	}
	return 0, fmt.Errorf("the hook server (laserbrain hook serve, %s) gave no answer: %s", sock, why)
}

// start starts a server at sock unless one listens by the time the start
// lock is ours, and returns once it listens.
func start(ctx context.Context, self, sock string, environ []string) error {
	unlock, err := lock(ctx, sock+".lock")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	defer unlock()
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close() // another hook started it meanwhile
		return nil
	}
	logf, err := os.OpenFile(sock+".log", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	defer pr.Close()
	cmd := exec.Command(self, append(slices.Clone(Subcommand), SocketFlag, sock)...)
	cmd.Env, cmd.Dir = serverEnv(environ), "/"
	cmd.Stdout, cmd.Stderr = pw, logf
	// A session of its own: it outlives this hook, and the client's
	// signal to the hook's process group does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("%w: starting %s: %v", ErrNoServer, self, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = pr.SetReadDeadline(dl)
	}
	line, rerr := bufio.NewReader(pr).ReadString('\n')
	if strings.TrimSpace(line) == Ready {
		return cmd.Process.Release()
	}
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()
	if ctx.Err() != nil || errors.Is(rerr, os.ErrDeadlineExceeded) {
		return fmt.Errorf("the hook server (%s) did not listen in time", sock)
	}
	msg, _ := os.ReadFile(sock + ".log")
	return fmt.Errorf("%w: %s %s ended before it listened: %s", ErrNoServer, self, strings.Join(Subcommand, " "), lastLine(msg))
}

// lock takes the exclusive lock on path, waiting no longer than ctx
// (a minute when it has no deadline).
func lock(ctx context.Context, path string) (unlock func(), err error) {
	wait := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	l, err := fsx.LockFile(path, wait)
	if err != nil {
		return nil, fmt.Errorf("another hook is starting the server, and it did not finish in time: %w", err)
	}
	return func() { _ = l.Unlock() }, nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "it said nothing"
	}
	return s
}

// Listener is a server's socket.
type Listener struct {
	*net.UnixListener
	path     string
	dev, ino uint64
}

// Listen opens the server's socket at path, replacing a socket nobody
// listens on. Closing the listener leaves the path alone: Unlink removes
// it first, and only while it is still this listener's.
func Listen(path string) (*Listener, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("a server listens at %s already", path)
	}
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		ln.Close()
		return nil, err
	}
	return &Listener{UnixListener: ln, path: path, dev: uint64(st.Dev), ino: st.Ino}, nil
}

// Unlink removes the socket's path if it is still this listener's (a
// server started after this one was taken for dead may have bound it):
// from then on a hook starts a new server rather than reach this one.
func (l *Listener) Unlink() {
	var st syscall.Stat_t
	if syscall.Stat(l.path, &st) == nil && uint64(st.Dev) == l.dev && st.Ino == l.ino {
		_ = os.Remove(l.path)
	}
}

// Idle is how long a server lives without a request, from getenv.
func Idle(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv(EnvIdle)); err == nil && d > 0 {
		return d
	}
	return DefaultIdle
}

// Allow is what a server takes: a hook event and its flags, nothing else.
func Allow(argv []string) error {
	if len(argv) == 0 || argv[0] != "hook" || slices.Equal(argv, Subcommand) {
		return errors.New("a hook server answers hook events only")
	}
	return broker.Ops{}.Allow(argv)
}
