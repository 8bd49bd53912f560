package agentrun

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// checkOwner refuses a control socket whose listening process is not an
// ancestor of this one (or, when self, this one): laserbrain run started
// the agent, whose hooks and MCP server ask it (from processes of their
// own, or from the run's own process, where its broker answers them), so a
// listener the agent started in its place (after removing the socket) is
// not believed.
func checkOwner(c *net.UnixConn, self bool) error {
	cred, err := PeerCred(c)
	if err != nil {
		return fmt.Errorf("the control socket's owner cannot be read: %w", err)
	}
	if !(self && int(cred.Pid) == os.Getpid()) && !isAncestor(int(cred.Pid)) {
		return fmt.Errorf("the control socket is held by process %d, which is not the laserbrain run this agent runs under", cred.Pid)
	}
	return nil
}

// PeerCred is the process at the other end of a unix socket connection as
// the kernel recorded it (SO_PEERCRED): its pid, uid and gid.
func PeerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// isAncestor reports whether pid is this process's parent, or its parent's,
// and so on up to init.
func isAncestor(pid int) bool {
	p := os.Getppid()
	for i := 0; i < 64 && p > 1; i++ {
		if p == pid {
			return true
		}
		next, err := parentOf(p)
		if err != nil {
			return false
		}
		p = next
	}
	return pid == p && pid > 0
}

// parentOf is a process's parent (readStat).
func parentOf(pid int) (int, error) {
	st, err := readStat(pid)
	return st.ppid, err
}
