package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A client process binding joins an MCP server to the session its
// client's hooks report, when nothing else can: Gemini CLI, Codex,
// opencode, Cline and Copilot CLI give neither the MCP server a session id
// nor its environment anything that names the session (outside laserbrain
// run, which exports LASERBRAIN_RUN). What the two do share is their
// parent: every one of the seven clients starts its hooks (through a shell
// that execs laserbrain, or opencode's plugin spawning it) and its MCP
// servers as children of the same process, seen with each pinned version.
// So a hook that knows the session binds it to that client process, and an
// MCP server started by the same process reads the binding.
//
// The hook writes the binding on a PreToolUse of one of laserbrain's own
// tools: every client runs its PreToolUse hook for an MCP call and waits
// for its answer before it sends the call, so the binding is there before
// the server is asked. A client process that works on several sessions
// one after the other (a new conversation in the same process) rebinds on
// the next own-tool call; the last one wins, which is the one about to
// call. Bindings live on this machine only (a process id means nothing
// elsewhere), one small file per client process under the laserbrain
// home, removed once their process is gone.

// Process names one process of this machine for as long as it lives: its
// id, its start time (clock ticks after boot, /proc's field 22) and the
// boot it belongs to, so a reused pid is never taken for the old process.
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Boot  string `json:"boot"`
}

// Binding is one client process bound to the session it works on.
type Binding struct {
	Process
	Session string    `json:"session"`
	Client  string    `json:"client,omitempty"`
	At      time.Time `json:"at"`
}

// wrapper: the programs between a client and what it starts that
// are not the client: shells (a hook command runs through one, which
// execs laserbrain), the usual launchers, and laserbrain's own binaries
// (laserbrain-gate hands an event to laserbrain when it must).
func wrapper(comm string) bool {
	switch comm {
	case "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "fish",
		"busybox", "env", "timeout", "nice", "nohup", "setsid",
		"laserbrain", "laserbrain-gate":
		return true
	}
	return false
}

// ClientProcess is the agent client this process runs under: its nearest
// ancestor that is not a wrapper (a shell, a launcher, laserbrain's own
// binaries). It reads /proc: where there is none there is no client
// process, and an MCP server there finds the hooks' run only through
// LASERBRAIN_RUN or a session id in its environment.
func ClientProcess() (Process, error) {
	boot, err := bootID()
	if err != nil {
		return Process{}, err
	}
	pid := os.Getpid()
	for i := 0; i < 32; i++ {
		st, err := readStat(pid)
		if err != nil {
			return Process{}, err
		}
		if st.ppid <= 1 {
			return Process{}, errors.New("no agent client among this process's ancestors")
		}
		parent, err := readStat(st.ppid)
		if err != nil {
			return Process{}, err
		}
		if !wrapper(parent.comm) {
			return Process{PID: st.ppid, Start: parent.start, Boot: boot}, nil
		}
		pid = st.ppid
	}
	return Process{}, errors.New("no agent client among this process's first 32 ancestors")
}

type procStat struct {
	comm  string
	ppid  int
	start uint64
}

// readStat reads a process's name, parent and start time from
// /proc/PID/stat (the name is in parentheses and may hold anything, so the
// fields are counted after its last ')').
func readStat(pid int) (procStat, error) {
	var buf [4096]byte
	b, err := readProc(&buf, "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return procStat{}, err
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || end+2 > len(b) {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unreadable", pid)
	}
	// After the name: state(0) ppid(1) pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime(19).
	var ppidField, startField []byte
	rest := b[end+2:]
	for i := 0; i <= 19; i++ {
		rest = bytes.TrimLeft(rest, " \n")
		n := bytes.IndexAny(rest, " \n")
		if n < 0 {
			n = len(rest)
		}
		if n == 0 {
			return procStat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
		}
		switch i {
		case 1:
			ppidField = rest[:n]
		case 19:
			startField = rest[:n]
		}
		rest = rest[n:]
	}
	ppid, err1 := strconv.Atoi(string(ppidField))
	start, err2 := strconv.ParseUint(string(startField), 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unreadable", pid)
	}
	return procStat{comm: string(b[open+1 : end]), ppid: ppid, start: start}, nil
}

// readProc reads a small /proc file whole into buf, with plain system
// calls: os.ReadFile would register the file with the runtime's poller
// first (four more calls per file, each hook process reads three).
func readProc(buf *[4096]byte, path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
	return nil, fmt.Errorf("%s: longer than %d bytes", path, len(buf))
}

func bootID() (string, error) {
	var buf [4096]byte
	b, err := readProc(&buf, "/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// alive reports whether p still runs (the same process: same boot, same
// start time).
func (p Process) alive() bool {
	boot, err := bootID()
	if err != nil || boot != p.Boot {
		return false
	}
	st, err := readStat(p.PID)
	return err == nil && st.start == p.Start
}

func (p Process) fileName() string {
	return fmt.Sprintf("%s-%d-%d.json", p.Boot, p.PID, p.Start)
}

// bindingDir is where the bindings are kept: BindingDir, else clients/ in
// the laserbrain home.
func (s *Tracker) bindingDir() (string, error) {
	if s.BindingDir != "" {
		return s.BindingDir, nil
	}
	return localstore.InHome(bindingsName)
}

// BindingDirOf is the bindings' directory in a laserbrain home.
func BindingDirOf(home string) string { return filepath.Join(home, bindingsName) }

const bindingsName = "clients"

func (s *Tracker) clientProcess() (Process, error) {
	if s.ClientProcess != nil {
		return s.ClientProcess()
	}
	return ClientProcess()
}

// BindSession binds the client process this hook runs under to the
// caller's session (and client), so that the client's MCP server finds the
// session's run. A binding already saying so is left as it is; writing a
// new one clears the bindings of processes that are gone.
func (s *Tracker) BindSession(c Caller) error {
	if c.Session == "" {
		return errors.New("no session to bind")
	}
	if err := fleet.ValidateRunID(c.Session); err != nil {
		return err
	}
	p, err := s.clientProcess()
	if err != nil {
		return err
	}
	dir, err := s.bindingDir()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, p.fileName())
	if b, ok := readBinding(path); ok && b.Process == p && b.Session == c.Session && b.Client == c.Client {
		return nil
	}
	data, err := json.Marshal(Binding{Process: p, Session: c.Session, Client: c.Client, At: s.now()})
	if err != nil {
		return err
	}
	if err := fsx.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	s.pruneBindings(dir, path)
	return nil
}

// BoundSession is the binding of the client process this process runs
// under, when its hooks made one.
func (s *Tracker) BoundSession() (Binding, bool) {
	dir, err := s.bindingDir()
	if err != nil {
		return Binding{}, false
	}
	if _, err := os.Stat(dir); err != nil {
		// No binding was ever written here: this process's client (three
		// reads of /proc) cannot have one.
		return Binding{}, false
	}
	p, err := s.clientProcess()
	if err != nil {
		return Binding{}, false
	}
	b, ok := readBinding(filepath.Join(dir, p.fileName()))
	if !ok || b.Process != p || fleet.ValidateRunID(b.Session) != nil {
		return Binding{}, false
	}
	return b, true
}

func readBinding(path string) (Binding, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Binding{}, false
	}
	var b Binding
	if json.Unmarshal(data, &b) != nil {
		return Binding{}, false
	}
	return b, true
}

// pruneBindings removes the bindings (but keep's) whose process is gone.
func (s *Tracker) pruneBindings(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		if path == keep || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, ok := readBinding(path)
		if ok && b.alive() {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}
