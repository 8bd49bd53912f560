package confine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/laserkit/laserkit/internal/reap"
)

// SupervisorComm is the name (comm) laserbrain run and laserbrain loop give
// their own process, a subreaper: every process the agent starts, however
// often it forks or however it calls itself, stays below a process of that
// name until it exits.
const SupervisorComm = "laserbrain-sv"

// BecomeSupervisor makes this process the one its agent's tree stays
// below: a subreaper (an orphan below it is reparented to it, not to
// init), named SupervisorComm. Orphans it inherits are reaped by Reap.
func BecomeSupervisor() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a subreaper: %w", err)
	}
	// The thread group leader's name is the process's (/proc/PID/comm).
	return os.WriteFile(fmt.Sprintf("/proc/self/task/%d/comm", os.Getpid()), []byte(SupervisorComm), 0)
}

// Reap collects the orphans a subreaper inherited that have exited,
// leaving keep (the agent, whose status its own Wait takes) and the
// children this process waits for itself (internal/reap) alone. It never
// blocks.
func Reap(keep int) {
	reap.Collect(func(waitedFor func(int) bool) {
		for {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
				return
			}
			pid := siginfoPid(&info)
			if pid == 0 || pid == keep || waitedFor(pid) {
				return
			}
			var ws unix.WaitStatus
			if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err != nil {
				return
			}
		}
	})
}

// Where says why this process is inside a supervised agent's tree, "" when
// it is not: the confinement's mounts are in its own mount table (the
// kernel keeps them there for the whole tree), or a supervising laserbrain
// run or loop is among its ancestors. Neither depends on the environment,
// the binary's name or path, or how the process was started.
func Where() string {
	if m := confinedMount(); m != "" {
		return "the kernel's confinement of a supervised agent (" + m + " is mounted read-only in this process's namespace)"
	}
	if pid := supervisingAncestor(); pid > 0 {
		return fmt.Sprintf("the process tree of a supervised agent (laserbrain run or loop, process %d, is an ancestor)", pid)
	}
	return ""
}

// Confined is the run's private directory when this process is inside the
// kernel's confinement of an agent (its mount table holds it read-only),
// "" when it is not: the laserbrain home and the stores are read-only
// here, whatever the environment says.
func Confined() string { return confinedMount() }

// confinedMount is the run's private directory as mounted in a confined
// tree, "" when this process's mount table has none.
func confinedMount() string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		point := unescapeMount(f[4])
		if !strings.HasPrefix(filepath.Base(point), Marker) {
			continue
		}
		for _, o := range strings.Split(f[5], ",") {
			if o == "ro" {
				return point
			}
		}
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// supervisingAncestor is the pid of the nearest ancestor named
// SupervisorComm, 0 when none.
func supervisingAncestor() int {
	pid := os.Getppid()
	for i := 0; pid > 1 && i < 4096; i++ {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			return 0
		}
		if s[open+1:end] == SupervisorComm {
			return pid
		}
		rest := strings.Fields(s[end+1:])
		if len(rest) < 2 {
			return 0
		}
		next, err := strconv.Atoi(rest[1])
		if err != nil {
			return 0
		}
		pid = next
	}
	return 0
}

// siginfoPid is si_pid: on Linux it follows signo, errno, code and the
// alignment word, at byte 16.
func siginfoPid(info *unix.Siginfo) int {
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), 16)))
}
