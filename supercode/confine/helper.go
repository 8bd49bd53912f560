package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// HelperError is why the setup step stopped before the agent ran, by its
// kind in the project's exit-code table: "setup" when the confinement could
// not be made (the agent did not start), or — as a shell reports a program
// it could not run — "not-runnable" or "not-found". Its message is on
// stderr already.
type HelperError struct {
	Kind string
	Err  error
}

func (e *HelperError) Error() string    { return e.Err.Error() }
func (e *HelperError) Unwrap() error    { return e.Err }
func (e *HelperError) ExitKind() string { return e.Kind }

// Main is the setup step, run as `laserbrain HelperArg PROGRAM ARGV0 ARGS…`
// in the agent's new namespaces: it makes the mounts, drops what could
// undo them, restricts itself with Landlock and execs PROGRAM. With
// `--probe` instead of a program it stops before the exec (Check), and
// returns nil. Otherwise it returns only on failure, having said why on
// stderr.
func Main(args []string) error {
	fail := func(format string, a ...any) error {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(os.Stderr, "laserbrain: confinement: %v\n", err)
		return &HelperError{Kind: "setup", Err: err}
	}
	var spec Spec
	if err := json.Unmarshal([]byte(os.Getenv(envSpec)), &spec); err != nil {
		return fail("no setup given (%s): %v", envSpec, err)
	}
	_ = os.Unsetenv(envSpec)
	if err := setup(spec); err != nil {
		return fail("%v", err)
	}
	if len(args) == 1 && args[0] == "--probe" {
		return nil
	}
	if len(args) < 2 {
		return fail("no program to run")
	}
	env := os.Environ()
	err := syscall.Exec(args[0], args[1:], env)
	kind := "not-runnable"
	if os.IsNotExist(err) {
		kind = "not-found"
	}
	fmt.Fprintf(os.Stderr, "laserbrain run: %s: %v\n", args[0], err)
	return &HelperError{Kind: kind, Err: err}
}

func setup(spec Spec) error {
	// Nothing mounted here reaches the parent's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	all := binds(spec)
	for i, b := range all {
		if err := b.mount(spec, all[:i]); err != nil {
			return err
		}
	}
	// The working directory was entered before the mounts: entered again,
	// a relative path goes through them too.
	if wd, err := os.Getwd(); err == nil {
		if err := os.Chdir(wd); err != nil {
			return fmt.Errorf("entering %s again: %w", wd, err)
		}
	}
	// What root could use to leave: loading modules, raw devices,
	// tracing, new mounts, changing the clock, … (Landlock forbids mounts
	// and tracing outside the tree too).
	for _, c := range dropCaps {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if spec.Net != nil {
		if err := openNet(*spec.Net); err != nil {
			return fmt.Errorf("the network: %w", err)
		}
	}
	return restrict(spec)
}

// emptyFS stands for an empty read-only file system of its own as what a
// bind mounts.
const emptyFS = "\x00empty"

// bind is one mount of the setup step: path bound onto itself (or from,
// a placeholder for what it covers), read-only or not.
type bind struct {
	path, from string
	ro         bool
}

// binds are the setup step's mounts, outer ones first: the carved
// directories read-only, the writable places inside them writable again,
// the pins with the writability of what they lie in, the protected paths
// read-only and the places credentials are kept covered.
func binds(spec Spec) []bind {
	kind := map[string]bind{}
	var paths []string
	add := func(b bind) {
		if _, seen := kind[b.path]; !seen {
			paths = append(paths, b.path)
		}
		kind[b.path] = b
	}
	for _, c := range spec.Carve {
		add(bind{path: c, ro: true})
		for _, w := range spec.Writable {
			if w != c && within(w, c) {
				add(bind{path: w})
			}
		}
	}
	for _, p := range spec.Pin {
		add(bind{path: p, ro: roIn(p, spec)})
	}
	for _, p := range spec.ReadOnly {
		add(bind{path: p, ro: true})
	}
	for _, m := range spec.Mask {
		// As container runtimes mask: a file by /dev/null, a directory by
		// an empty file system of its own, each read-only.
		from := os.DevNull
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			from = emptyFS
		}
		add(bind{path: m, from: from, ro: true})
	}
	out := make([]bind, 0, len(paths))
	for _, p := range sorted(paths) {
		out = append(out, kind[p])
	}
	return out
}

// roIn says whether p lies read-only among the carved directories and the
// writable places bound again inside them (the deepest decides).
func roIn(p string, spec Spec) bool {
	best, ro := "", false
	for _, c := range spec.Carve {
		if within(p, c) && len(c) > len(best) {
			best, ro = c, true
		}
	}
	for _, w := range spec.Writable {
		if best != "" && within(p, w) && len(w) > len(best) {
			best, ro = w, false
		}
	}
	return ro
}

func (b bind) mount(spec Spec, under []bind) error {
	from := b.path
	if b.from != "" {
		from = b.from
	}
	var err error
	if from == emptyFS {
		err = unix.Mount("laserbrain-masked", b.path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=0,mode=0500")
		if err != nil {
			return fmt.Errorf("masking %s: %w", b.path, err)
		}
		return nil
	}
	err = unix.Mount(from, b.path, "", unix.MS_BIND|unix.MS_REC, "")
	if errors.Is(err, unix.ENOENT) && b.from == "" && slices.Contains(spec.Ensure, b.path) {
		if merr := os.MkdirAll(b.path, 0o755); merr == nil || errors.Is(merr, os.ErrExist) {
			err = unix.Mount(b.path, b.path, "", unix.MS_BIND|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("binding %s: %w", b.path, err)
	}
	// A bind takes the read-only flag of the mount it was made from: one
	// inside a read-only bind is made writable again by a remount.
	if !b.ro && !slices.ContainsFunc(under, func(o bind) bool { return o.ro && within(b.path, o.path) }) {
		return nil
	}
	// A remount keeps the flags the kernel locks in a user namespace.
	var st unix.Statfs_t
	if err := unix.Statfs(b.path, &st); err != nil {
		return fmt.Errorf("reading %s's mount: %w", b.path, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND)
	if b.ro {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", b.path, "", flags, ""); err != nil {
		if !b.ro {
			return fmt.Errorf("making %s writable again: %w", b.path, err)
		}
		return fmt.Errorf("making %s read-only: %w", b.path, err)
	}
	return nil
}

var dropCaps = []int{
	unix.CAP_SYS_MODULE, unix.CAP_SYS_RAWIO, unix.CAP_SYS_PTRACE, unix.CAP_SYS_BOOT, unix.CAP_MKNOD, unix.CAP_BPF,
	unix.CAP_PERFMON, unix.CAP_SYS_ADMIN, unix.CAP_MAC_ADMIN, unix.CAP_MAC_OVERRIDE, unix.CAP_LINUX_IMMUTABLE,
	unix.CAP_SYS_TIME, unix.CAP_SYSLOG, unix.CAP_AUDIT_CONTROL, unix.CAP_SETFCAP, unix.CAP_NET_ADMIN,
	unix.CAP_SETPCAP, // last: it is what lets the others go
}

// restrict is the Landlock part: read and run everything, write only the
// writable places and devices; no mounts, no tracing (and, from ABI 6, no
// signals) beyond the tree.
func restrict(spec Spec) error {
	cfg := landlock.V6.BestEffort()
	rules := []landlock.Rule{landlock.RODirs("/")}
	if len(spec.Writable) > 0 {
		rules = append(rules, landlock.RWDirs(spec.Writable...).WithRefer().WithIoctlDev())
	}
	for _, d := range spec.Devices {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			rules = append(rules, landlock.RWDirs(d).WithIoctlDev())
		} else {
			rules = append(rules, landlock.RWFiles(d).WithIoctlDev())
		}
	}
	if err := cfg.RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := cfg.RestrictScoped(); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if len(spec.DenyTCP) > 0 {
		// Landlock allows by port: every port but the database's.
		ports := make([]landlock.Rule, 0, 65535)
		for p := 1; p <= 65535; p++ {
			if !slices.Contains(spec.DenyTCP, uint16(p)) {
				ports = append(ports, landlock.ConnectTCP(uint16(p)))
			}
		}
		net := landlock.Config{HandledAccessNet: landlock.AccessNetSet(ll.AccessNetConnectTCP)}.BestEffort()
		if err := net.RestrictNet(ports...); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	return nil
}
