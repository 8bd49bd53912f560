package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Net is the tree's own network: a namespace in which only the loopback
// interface is up, so nothing inside reaches any other host, and in which
// the setup step opens the listeners the mediator serves (Listen: the
// proxy's address and each local endpoint the policy allows, host:port
// on the loopback). The setup step hands the listening sockets to the
// supervisor, outside, before the agent starts: what connects to them
// inside is accepted outside, where the mediator decides by the policy,
// and nothing inside can close them or take their ports.
type Net struct {
	Listen []string `json:"listen"`
}

// handoffFD is the descriptor the setup step hands the listeners over on.
const handoffFD = 3

// openNet brings the loopback up, opens the listeners and hands them to
// the supervisor on handoffFD, which it then closes.
func openNet(n Net) error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing the loopback up: %w", err)
	}
	var fds []int
	var opened []string
	for _, a := range n.Listen {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			host, _, _ := net.SplitHostPort(a)
			if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
				continue // no IPv6 on this kernel: the IPv4 one serves
			}
			return fmt.Errorf("listening on %s: %w", a, err)
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			return err
		}
		fds = append(fds, int(f.Fd()))
		opened = append(opened, a)
	}
	msg, err := json.Marshal(opened)
	if err != nil {
		return err
	}
	var rights []byte
	if len(fds) > 0 {
		rights = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(handoffFD, msg, rights, nil, 0); err != nil {
		return fmt.Errorf("handing the listeners to the supervisor: %w", err)
	}
	_ = unix.Close(handoffFD)
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
	return nil
}

// loopbackUp sets the loopback interface up (an ioctl: no netlink).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// Handoff is the supervisor's end of the setup step's handover.
type Handoff struct {
	parent, child *os.File
}

func newHandoff() (*Handoff, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	// Ours non-blocking, so that a read has a deadline.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	return &Handoff{parent: os.NewFile(uintptr(fds[0]), "handoff"), child: os.NewFile(uintptr(fds[1]), "handoff-child")}, nil
}

// ErrNoListeners is what Listeners returns when the setup step handed
// nothing over (the agent did not start, or the deadline passed).
var ErrNoListeners = errors.New("the confined tree's listeners were not handed over")

// Listeners are the listeners the setup step opened, by the address each
// has inside the tree, once it has handed them over (within timeout: call
// it once the agent has started).
func (h *Handoff) Listeners(timeout time.Duration) (map[string]net.Listener, error) {
	_ = h.parent.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(64*4))
	rc, err := h.parent.SyscallConn()
	if err != nil {
		return nil, err
	}
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoListeners, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the setup step ended first", ErrNoListeners)
	}
	var addrs []string
	if err := json.Unmarshal(buf[:n], &addrs); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoListeners, err)
	}
	var fds []int
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoListeners, err)
	}
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoListeners, err)
		}
		fds = append(fds, got...)
	}
	out := map[string]net.Listener{}
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil || i >= len(addrs) {
			continue
		}
		out[addrs[i]] = ln
	}
	if len(out) != len(addrs) {
		for _, ln := range out {
			ln.Close()
		}
		return nil, fmt.Errorf("%w: %d listeners for %d addresses", ErrNoListeners, len(fds), len(addrs))
	}
	return out, nil
}

// Close releases both ends.
func (h *Handoff) Close() {
	if h.child != nil {
		h.child.Close()
		h.child = nil
	}
	h.parent.Close()
}
