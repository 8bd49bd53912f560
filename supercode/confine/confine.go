package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// HelperArg is the first argument that makes the laserbrain binary the
// setup step (Main) instead of a command.
const HelperArg = "__laserbrain-confine"

// envSpec carries the Spec to the setup step; it is gone before the agent
// runs.
const envSpec = "LASERBRAIN_CONFINE_SPEC"

// EnvWritable adds directories the agent may write (':'-separated), for a
// tool that writes outside the repository, $HOME and the temporary
// directories.
const EnvWritable = "LASERBRAIN_CONFINE_WRITABLE"

// EnvOff, set to 1, runs the agent without the kernel's confinement (the
// gate alone, as where the kernel has none); laserbrain run says so.
const EnvOff = "LASERBRAIN_CONFINE"

// Marker is the name the run's private directory starts with: bound
// read-only in every confined tree, it is what Inside finds in the
// tree's mountinfo.
const Marker = "laserbrain-run-"

// Spec is what the setup step does before it execs the agent.
type Spec struct {
	// ReadOnly are bound read-only onto themselves.
	ReadOnly []string `json:"read_only"`
	// Pin are bound onto themselves, writable: directories a rename would
	// move a protected path with.
	Pin []string `json:"pin"`
	// Writable are where Landlock lets the agent write.
	Writable []string `json:"writable"`
	// Devices are the device files (and /dev/pts) it may write.
	Devices []string `json:"devices"`
	// DenyTCP are TCP ports the agent may not connect to (the store's
	// database); empty: no network rule.
	DenyTCP []uint16 `json:"deny_tcp,omitempty"`
	// Root: the parent is root (no user namespace).
	Root bool `json:"root"`
	// Created are directories Plan made to hold them (Options.Create).
	Created []string `json:"created,omitempty"`
	// Ensure are the directories Plan makes when missing (Created or
	// not): the setup step makes one again when it is gone by the time it
	// binds it — another run on the repository that made it removes it
	// when its agent is done — rather than fail, or leave it unheld.
	Ensure []string `json:"ensure,omitempty"`
}

// Protected is one path the confinement holds, and what it is.
type Protected struct {
	Path string `json:"path"`
	What string `json:"what"`
}

// Options say what to protect for one agent.
type Options struct {
	// Home is the laserbrain home; FleetDir the fleet store when elsewhere.
	Home, FleetDir string
	// Dir is the agent's working directory (its repository is found from
	// it); UserHome the user's home directory.
	Dir, UserHome string
	// Binaries are the programs supervision runs (laserbrain, the gate,
	// ponder, what the installed hooks name).
	Binaries []string
	// RunDir is the run's private directory (its settings, MCP config and
	// the broker's socket).
	RunDir string
	// Files are the clients' settings and hook files (install.Protected).
	Files []Protected
	// Writable adds places the agent may write.
	Writable []string
	// DenyTCP are ports the agent may not connect to.
	DenyTCP []uint16
	// Create makes the project's .laserbrain and .claude directories when
	// they are missing, so that they can be bound read-only: an agent that
	// could create .laserbrain/policy.json or .claude/settings.local.json
	// would write its own policy or switch its hooks off. The caller
	// removes them afterwards (Created, when still empty).
	Create bool
}

// Created are the directories Plan made (Options.Create), for the caller
// to remove when the agent is done and they are still empty.
func Created(spec Spec) []string { return spec.Created }

// Plan is the Spec for o, and the paths it holds and leaves (a protected
// path that does not exist cannot be bound: the gate alone stands there).
func Plan(o Options) (spec Spec, held, absent []Protected) {
	add := func(p, what string) {
		if p == "" {
			return
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if _, err := os.Lstat(abs); err != nil {
			absent = append(absent, Protected{abs, what})
			return
		}
		for _, h := range held {
			if h.Path == abs {
				return
			}
		}
		held = append(held, Protected{abs, what})
	}
	add(o.Home, "the laserbrain home (halts, authorizations, journal, runs, queue)")
	if o.FleetDir != "" && !within(o.FleetDir, o.Home) {
		add(o.FleetDir, "the fleet store")
	}
	for _, b := range o.Binaries {
		add(b, "an installed binary")
	}
	add(o.RunDir, "the run's settings and the supervisor's socket")
	repo, gitDirs := repository(o.Dir)
	for _, g := range gitDirs {
		add(filepath.Join(g, "hooks"), "the repository's git hooks")
		add(filepath.Join(g, "config"), "the repository's git configuration")
		add(filepath.Join(g, "config.worktree"), "the worktree's git configuration")
	}
	if repo != "" {
		if o.Create {
			for _, d := range []string{".laserbrain", ".claude"} {
				p := filepath.Join(repo, d)
				spec.Ensure = append(spec.Ensure, p)
				if _, err := os.Lstat(p); os.IsNotExist(err) && os.Mkdir(p, 0o755) == nil {
					spec.Created = append(spec.Created, p)
				}
			}
		}
		add(filepath.Join(repo, ".laserbrain"), "the project's laserbrain policy")
	}
	for _, f := range o.Files {
		add(f.Path, f.What)
	}
	if o.UserHome != "" {
		add(filepath.Join(o.UserHome, ".gitconfig"), "the user's git configuration (core.hooksPath)")
		add(filepath.Join(o.UserHome, ".config", "git"), "the user's git configuration (core.hooksPath)")
		add(filepath.Join(o.UserHome, ".ssh"), "the user's ssh keys (a login to this machine would leave the confinement)")
	}

	writable := []string{}
	for _, w := range append([]string{repo, o.Dir, o.UserHome, "/tmp", os.TempDir(), "/var/tmp", "/dev/shm",
		fmt.Sprintf("/run/user/%d", os.Getuid())}, o.Writable...) {
		if w == "" {
			continue
		}
		if fi, err := os.Stat(w); err == nil && fi.IsDir() {
			if r, err := filepath.EvalSymlinks(w); err == nil {
				w = r
			}
			writable = append(writable, w)
		}
	}
	for _, g := range gitDirs {
		// A worktree's git directory lives in the main repository's: git
		// writes objects and refs there.
		writable = append(writable, g)
		if common := filepath.Dir(filepath.Dir(g)); filepath.Base(filepath.Dir(g)) == "worktrees" {
			writable = append(writable, common)
		}
	}
	spec.Writable = dedupe(writable)
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"} {
		if _, err := os.Stat(d); err == nil {
			spec.Devices = append(spec.Devices, d)
		}
	}
	for _, h := range held {
		spec.ReadOnly = append(spec.ReadOnly, h.Path)
	}
	spec.Pin = pins(spec.ReadOnly, spec.Writable)
	spec.DenyTCP = o.DenyTCP
	spec.Root = os.Geteuid() == 0
	return spec, held, absent
}

// pins are the directories above the protected paths whose parent the
// agent may write: each is bound onto itself so that a rename of it is
// EBUSY.
func pins(protected, writable []string) []string {
	var out []string
	for _, p := range protected {
		for a := filepath.Dir(p); a != "/" && a != "."; a = filepath.Dir(a) {
			if writableUnder(filepath.Dir(a), writable) && !slices.Contains(protected, a) {
				out = append(out, a)
			}
		}
		// The protected path itself is a mount point: EBUSY already.
	}
	return dedupe(out)
}

func writableUnder(p string, writable []string) bool {
	for _, w := range writable {
		if within(p, w) {
			return true
		}
	}
	return false
}

// within: p is dir or below it.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// repository is dir's work tree and its git directories (the worktree's
// own and the common one), read from the files git keeps (no git process).
func repository(dir string) (top string, gitDirs []string) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for d := abs; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		fi, err := os.Stat(g)
		if err == nil {
			if fi.IsDir() {
				return d, []string{g}
			}
			data, err := os.ReadFile(g)
			if err == nil {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
					gd := strings.TrimSpace(rest)
					if !filepath.IsAbs(gd) {
						gd = filepath.Join(d, gd)
					}
					gitDirs = append(gitDirs, filepath.Clean(gd))
					if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
						cd := strings.TrimSpace(string(c))
						if !filepath.IsAbs(cd) {
							cd = filepath.Join(gd, cd)
						}
						gitDirs = append(gitDirs, filepath.Clean(cd))
					}
				}
			}
			return d, gitDirs
		}
		if d == "/" || d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// Wrap makes cmd run through the setup step: self (this laserbrain) is
// run with HelperArg in a new mount namespace (and, when not root, a user
// namespace mapping the user to itself), and execs cmd's program with its
// arguments and environment once the mounts and Landlock are in place.
func Wrap(cmd *exec.Cmd, self string, spec Spec) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		if path, err = exec.LookPath(path); err != nil {
			return err
		}
	}
	args := append([]string{self, HelperArg, path}, cmd.Args...)
	cmd.Path, cmd.Args = self, args
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clone(env), envSpec+"="+string(data))
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	if spec.Root {
		attr.Unshareflags |= syscall.CLONE_NEWNS
	} else {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		attr.AmbientCaps = append(attr.AmbientCaps, capSysAdmin)
	}
	cmd.SysProcAttr = attr
	return nil
}

const capSysAdmin = 21

// ErrUnavailable wraps why the kernel's confinement cannot be used here.
var ErrUnavailable = errors.New("the kernel's confinement is not available")

// Check says whether the confinement works here: it runs the setup step
// for a probe (the mounts and Landlock, then exit) and reports why not.
func Check(self string) error {
	if os.Getenv(EnvOff) == "0" || os.Getenv(EnvOff) == "off" {
		return fmt.Errorf("%w: %s=%s", ErrUnavailable, EnvOff, os.Getenv(EnvOff))
	}
	dir, err := os.MkdirTemp("", Marker+"probe-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer os.RemoveAll(dir)
	spec := Spec{ReadOnly: []string{dir}, Writable: []string{os.TempDir()}, Root: os.Geteuid() == 0}
	cmd := exec.Command("/bin/true")
	if err := Wrap(cmd, self, spec); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	cmd.Args = append(cmd.Args[:2], "--probe")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%w: %s", ErrUnavailable, msg)
	}
	return nil
}

// Sorted is paths shortest first (outer mounts before inner ones).
func sorted(paths []string) []string {
	out := slices.Clone(paths)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i], "/") < strings.Count(out[j], "/")
	})
	return out
}
