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
	"time"

	"github.com/laserkit/laserkit/internal/gitindex"
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

// EnvNetOff, set to off, leaves the tree on the host's network (the other
// parts of the boundary hold); laserbrain run records it. It is how the
// network part's cost is measured apart.
const EnvNetOff = "LASERBRAIN_CONFINE_NET"

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
	// not), and the pins above them short of the repository (ensurePins):
	// the setup step makes one again when it is gone by the time it binds
	// it — another run on the repository that made it removes it when its
	// agent is done — rather than fail, or leave it unheld.
	Ensure []string `json:"ensure,omitempty"`
	// Mask are the places credentials are kept: each is covered, as
	// container runtimes mask paths — a file by /dev/null, a directory by
	// an empty file system —, read-only, so that nothing inside reads
	// what they hold.
	Mask []string `json:"mask,omitempty"`
	// Carve are directories bound read-only although they lie in a
	// writable place (a home under /tmp): the writable places inside one
	// are bound writable again.
	Carve []string `json:"carve,omitempty"`
	// Net, when set, gives the tree a network of its own (Net).
	Net *Net `json:"net,omitempty"`
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
	// Files are the clients' settings and hook files (install.HeldFiles),
	// held whether or not they exist yet.
	Files []Protected
	// State are the directories the agent's client keeps its own state in
	// (~/.claude, ~/.codex, …) and caches: writable, made when missing.
	State []string
	// Writable adds places the agent may write.
	Writable []string
	// Credentials are the places credentials are kept (CredentialPaths):
	// those that exist are masked, but for Pass, which a person passes
	// through on purpose.
	Credentials []Protected
	Pass        []string
	// DenyTCP are ports the agent may not connect to.
	DenyTCP []uint16
	// Net gives the tree a network of its own (nil: the host's).
	Net *Net
	// Create makes what holding an absent path needs: the project's
	// .laserbrain directory and each client's project directory (.claude,
	// .codex, …) when missing, so that they can be bound read-only — an
	// agent that could create .laserbrain/policy.json or
	// .codex/config.toml would write its own policy or switch its hooks
	// off —, a placeholder for each absent settings file the agent could
	// otherwise create in a writable place (~/.claude/settings.json
	// holding {}), and the client's state directories. The caller
	// removes the directories afterwards (Created, when still empty and
	// no other run holds them); placeholders stay.
	Create bool
}

// Report says what Plan holds, and how.
type Report struct {
	// Held are bound read-only: existing paths, directories made to hold
	// an absent file, and placeholders (Placeholders lists those).
	Held         []Protected
	Placeholders []Protected
	// Within are absent paths held with the directory they would be made
	// in.
	Within []Protected
	// Unwritable are absent paths outside every writable place: the
	// kernel refuses to create them.
	Unwritable []Protected
	// Absent are absent paths nothing holds: the gate alone guards them.
	Absent []Protected
	// Masked are the places credentials are kept, covered by empty ones;
	// Passed those a person passed through.
	Masked, Passed []Protected
	// Writable are where the agent may write.
	Writable []string
}

// Created are the directories Plan made (Options.Create), for the caller
// to remove when the agent is done and they are still empty.
func Created(spec Spec) []string { return spec.Created }

// Plan is the Spec for o, and the report of what it holds.
func Plan(o Options) (Spec, Report) {
	p := &planner{o: o}
	return p.plan()
}

type planner struct {
	o        Options
	spec     Spec
	rep      Report
	repo     string
	writable []string
}

// abs is p absolute, with its symbolic links resolved as far as they
// exist.
func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	// The nearest existing ancestor's links resolved, the rest kept.
	if d := filepath.Dir(a); d != a {
		if r := abs(d); r != "" {
			return filepath.Join(r, filepath.Base(a))
		}
	}
	return a
}

func (p *planner) isHeld(path string) bool {
	for _, h := range p.rep.Held {
		if h.Path == path {
			return true
		}
	}
	return false
}

// hold binds path read-only when it exists, and otherwise makes what
// holds it (hold's absent).
func (p *planner) hold(path, what string) {
	if path == "" {
		return
	}
	path = abs(path)
	if path == "" || p.isHeld(path) || slices.Contains(p.spec.Mask, path) {
		return
	}
	fi, err := os.Lstat(path)
	if err != nil {
		p.absent(path, what)
		return
	}
	if p.o.Create && fi.IsDir() && p.repo != "" && within(path, p.repo) && path != p.repo {
		// Another run on the project may have made it (a directory of
		// hooks, or a placeholder named like the file it stands for) and
		// remove it when its agent is done: the setup step makes it again.
		p.spec.Ensure = append(p.spec.Ensure, path)
	}
	p.rep.Held = append(p.rep.Held, Protected{path, what})
}

// holdThere holds path when it exists; absent, it is reported so (git
// reads a worktree's configuration only when its configuration, held,
// says so).
func (p *planner) holdThere(path, what string) {
	if _, err := os.Lstat(path); err != nil {
		if !p.creatable(abs(path)) {
			p.rep.Unwritable = append(p.rep.Unwritable, Protected{abs(path), what})
		} else {
			p.rep.Absent = append(p.rep.Absent, Protected{abs(path), what})
		}
		return
	}
	p.hold(path, what)
}

// absent holds a path that does not exist yet. Outside every writable
// place the kernel already refuses to make it. In the repository the
// directory it would be made in is made (empty, so nothing shows to git)
// and held; a file at the repository's top is held by an empty directory
// of its name, where its client reads that as no file. Elsewhere (a
// client's state directory, a home under /tmp) a placeholder with neutral
// content is made and held.
func (p *planner) absent(path, what string) {
	for _, h := range p.rep.Held {
		if within(path, h.Path) {
			p.rep.Within = append(p.rep.Within, Protected{path, what})
			return
		}
	}
	if !p.creatable(path) {
		p.rep.Unwritable = append(p.rep.Unwritable, Protected{path, what})
		return
	}
	if !p.o.Create {
		p.rep.Absent = append(p.rep.Absent, Protected{path, what})
		return
	}
	if p.repo != "" && within(path, p.repo) && path != p.repo {
		dir := path
		if !dirName(path) {
			dir = filepath.Dir(path)
		}
		if dir == p.repo {
			if !slices.Contains(topPlaceholderDirs, filepath.Base(path)) {
				p.rep.Absent = append(p.rep.Absent, Protected{path, what})
				return
			}
			dir = path
		}
		p.makeDir(dir)
		p.hold(dir, what)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.rep.Absent = append(p.rep.Absent, Protected{path, what})
		return
	}
	if dirName(path) {
		// A directory of hooks (Cline's): an empty one.
		if err := os.Mkdir(path, 0o755); err != nil && !os.IsExist(err) {
			p.rep.Absent = append(p.rep.Absent, Protected{path, what})
			return
		}
	} else {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.WriteString(neutral(path))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !os.IsExist(err) {
			p.rep.Absent = append(p.rep.Absent, Protected{path, what})
			return
		}
	}
	p.rep.Placeholders = append(p.rep.Placeholders, Protected{path, what})
	p.rep.Held = append(p.rep.Held, Protected{path, what + " (a placeholder)"})
}

// dirName says whether a held path names a directory: a name with no dot
// but a leading one (.claude, .codex, hooks), where settings files have
// an extension (settings.json, .mcp.json, config.toml).
func dirName(path string) bool {
	return !strings.Contains(strings.TrimPrefix(filepath.Base(path), "."), ".")
}

// topPlaceholderDirs are the settings files at a repository's top whose
// client reads an empty directory of that name as no file (Claude Code's
// .mcp.json). Others there (opencode.json) would stop their client: the
// gate alone guards them while they are absent.
var topPlaceholderDirs = []string{".mcp.json"}

// neutral is what a placeholder settings file holds: no settings.
func neutral(path string) string {
	switch filepath.Ext(path) {
	case ".json", ".jsonc":
		return "{}\n"
	}
	return ""
}

// makeDir makes dir (and its missing parents) in the repository, noting
// each it made for the caller to remove, and that the setup step makes
// again when another run removed it meanwhile.
func (p *planner) makeDir(dir string) {
	var missing []string
	for d := dir; d != p.repo && d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if os.Mkdir(missing[i], 0o755) == nil {
			p.spec.Created = append(p.spec.Created, missing[i])
		}
	}
	p.spec.Ensure = append(p.spec.Ensure, dir)
}

// creatable says whether the agent could make path: the deepest
// writable place or carved directory it lies in is a writable place.
func (p *planner) creatable(path string) bool {
	best, ok := "", false
	for _, w := range p.writable {
		if within(path, w) && len(w) > len(best) {
			best, ok = w, true
		}
	}
	for _, c := range p.spec.Carve {
		if within(path, c) && len(c) > len(best) {
			best, ok = c, false
		}
	}
	return ok
}

func (p *planner) plan() (Spec, Report) {
	o := p.o
	repo, gitDirs := repository(o.Dir)
	// The project's files are held the same way in a directory that is
	// no repository.
	p.repo = repo
	if p.repo == "" && o.Dir != "" {
		p.repo = abs(o.Dir)
	}
	if o.Create {
		for _, d := range o.State {
			if d != "" && filepath.IsAbs(d) {
				_ = os.MkdirAll(d, 0o755)
			}
		}
	}
	p.writable = p.writablePlaces(repo, gitDirs)
	if h := abs(o.UserHome); h != "" && writableUnder(h, p.writable) && !slices.Contains(p.writable, h) {
		// A home inside a writable place (/tmp) is not one itself.
		p.spec.Carve = []string{h}
	}
	p.mask()
	p.hold(o.Home, "the laserbrain home (halts, authorizations, journal, runs, queue)")
	if o.FleetDir != "" && !within(o.FleetDir, o.Home) {
		p.hold(o.FleetDir, "the fleet store")
	}
	for _, b := range o.Binaries {
		p.hold(b, "an installed binary")
	}
	p.hold(o.RunDir, "the run's settings and the supervisor's socket")
	for _, g := range gitDirs {
		hooks := filepath.Join(g, "hooks")
		if o.Create {
			// git makes it in every repository; one removed would take
			// hooks an agent wrote there.
			_ = os.Mkdir(hooks, 0o755)
		}
		p.holdThere(hooks, "the repository's git hooks")
		p.holdThere(filepath.Join(g, "config"), "the repository's git configuration")
		if _, err := os.Lstat(filepath.Join(g, "config.worktree")); err == nil {
			// Absent, git reads none unless the configuration (held) says.
			p.hold(filepath.Join(g, "config.worktree"), "the worktree's git configuration")
		}
	}
	if repo != "" {
		p.hold(filepath.Join(repo, ".laserbrain"), "the project's laserbrain policy")
		// ponder's writes go through the broker (laserbrain ponder).
		p.hold(filepath.Join(repo, ".ponder"), "ponder's sessions and ledgers")
	}
	for _, f := range o.Files {
		p.hold(f.Path, f.What)
	}
	if o.UserHome != "" {
		p.hold(filepath.Join(o.UserHome, ".gitconfig"), "the user's git configuration (core.hooksPath)")
		p.hold(filepath.Join(o.UserHome, ".config", "git"), "the user's git configuration (core.hooksPath)")
		p.hold(filepath.Join(o.UserHome, ".ssh"), "the user's ssh keys (a login to this machine would leave the confinement)")
	}
	spec := &p.spec
	spec.Writable = p.writable
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"} {
		if _, err := os.Stat(d); err == nil {
			spec.Devices = append(spec.Devices, d)
		}
	}
	for _, h := range p.rep.Held {
		spec.ReadOnly = append(spec.ReadOnly, h.Path)
	}
	spec.Pin = pins(spec.ReadOnly, spec.Writable)
	ensurePins(spec, p.repo)
	spec.DenyTCP = o.DenyTCP
	spec.Net = o.Net
	spec.Root = os.Geteuid() == 0
	p.rep.Writable = spec.Writable
	return p.spec, p.rep
}

// writablePlaces are where the agent works: its repository (and the git
// directories a worktree writes in), its directory, the temporary
// directories, its client's state, and what the caller adds — each that
// exists, its links resolved. The user's home is not one.
func (p *planner) writablePlaces(repo string, gitDirs []string) []string {
	o := p.o
	var writable []string
	places := append([]string{repo, o.Dir, "/tmp", os.TempDir(), "/var/tmp", "/dev/shm",
		fmt.Sprintf("/run/user/%d", os.Getuid())}, o.State...)
	for _, w := range append(places, o.Writable...) {
		if w == "" {
			continue
		}
		if fi, err := os.Stat(w); err == nil && fi.IsDir() {
			writable = append(writable, abs(w))
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
	return dedupe(writable)
}

// mask covers each place credentials are kept that exists, but those
// passed through.
func (p *planner) mask() {
	if len(p.o.Credentials) == 0 {
		return
	}
	passed := map[string]bool{}
	for _, x := range p.o.Pass {
		passed[abs(x)] = true
	}
	for _, c := range p.o.Credentials {
		path := abs(c.Path)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if passed[path] {
			p.rep.Passed = append(p.rep.Passed, Protected{path, c.What})
			continue
		}
		if slices.Contains(p.spec.Mask, path) {
			continue
		}
		p.spec.Mask = append(p.spec.Mask, path)
		p.rep.Masked = append(p.rep.Masked, Protected{path, c.What})
	}
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

// ensurePins makes the setup step make again the pins above a directory
// it makes again: the run that made that directory made them with it, and
// removes them with it. The repository and what holds it, pins when they
// lie in a writable directory, are not among them: gone, they were not
// another run's to remove.
func ensurePins(spec *Spec, repo string) {
	for _, pin := range spec.Pin {
		if (repo == "" || !within(repo, pin)) && !slices.Contains(spec.Ensure, pin) &&
			slices.ContainsFunc(spec.Ensure, func(e string) bool { return within(e, pin) }) {
			spec.Ensure = append(spec.Ensure, pin)
		}
	}
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
		if err == nil && fi.IsDir() && !gitindex.IsGitDir(g) {
			// Not a repository to git (no HEAD): a directory named .git
			// left behind, e.g. a run's placeholders. git looks further up.
			err = os.ErrNotExist
		}
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
// namespace mapping the user to itself; with spec.Net, a network
// namespace too), and execs cmd's program with its arguments and
// environment once the mounts and Landlock are in place. With spec.Net
// the Handoff gives the listeners the setup step opened (nil without);
// the caller closes it once the agent has exited.
func Wrap(cmd *exec.Cmd, self string, spec Spec) (*Handoff, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		if path, err = exec.LookPath(path); err != nil {
			return nil, err
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
	var ns uintptr = syscall.CLONE_NEWNS
	if spec.Net != nil {
		ns |= syscall.CLONE_NEWNET
	}
	if spec.Root {
		attr.Unshareflags |= ns
	} else {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER | ns
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// What the setup step needs in the user namespace: mounts, and
		// dropping from the bounding set what it drops.
		attr.AmbientCaps = append(attr.AmbientCaps, capSysAdmin, capSetPCap)
		if spec.Net != nil {
			attr.AmbientCaps = append(attr.AmbientCaps, capNetAdmin)
		}
	}
	cmd.SysProcAttr = attr
	if spec.Net == nil {
		return nil, nil
	}
	h, err := newHandoff()
	if err != nil {
		return nil, err
	}
	if len(cmd.ExtraFiles) != 0 {
		h.Close()
		return nil, errors.New("the agent's command already passes descriptors beyond its standard ones")
	}
	cmd.ExtraFiles = []*os.File{h.child}
	return h, nil
}

const (
	capSysAdmin = 21
	capNetAdmin = 12
	capSetPCap  = 8
)

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
	if _, err := Wrap(cmd, self, spec); err != nil {
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

// CheckNet says whether the tree can have a network of its own here: it
// runs the setup step for a probe in a network namespace, which brings its
// loopback up and hands over no listener.
func CheckNet(self string) error {
	spec := Spec{Writable: []string{os.TempDir()}, Root: os.Geteuid() == 0, Net: &Net{}}
	cmd := exec.Command("/bin/true")
	h, err := Wrap(cmd, self, spec)
	if err != nil {
		return fmt.Errorf("a network of its own: %v", err)
	}
	defer h.Close()
	cmd.Args = append(cmd.Args[:2], "--probe")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("a network of its own: %v", err)
	}
	_, herr := h.Listeners(10 * time.Second)
	werr := cmd.Wait()
	if werr != nil || herr != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" && werr != nil {
			msg = werr.Error()
		} else if msg == "" {
			msg = herr.Error()
		}
		return fmt.Errorf("a network of its own: %s", msg)
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

// Release removes the directories Plan made to hold absent paths, deepest
// first, each only when it is empty and no other confined tree holds it:
// removed, it would come off that tree's mounts too, and its agent could
// make there what the directory held off.
func Release(spec Spec) {
	created := slices.Clone(spec.Created)
	sort.SliceStable(created, func(i, j int) bool { return len(created[i]) > len(created[j]) })
	var held map[string]bool
	for _, d := range created {
		if held == nil {
			held = mountedElsewhere()
		}
		if held[d] || held[filepath.Dir(d)] {
			continue
		}
		_ = os.Remove(d) // only when the agent left it empty
	}
}

// mountedElsewhere are the mount points of every other mount namespace
// this user's processes are in (their mountinfo), as far as it can read.
func mountedElsewhere() map[string]bool {
	out := map[string]bool{}
	self, _ := os.Readlink("/proc/self/ns/mnt")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	seen := map[string]bool{self: true}
	for _, p := range procs {
		ns, err := os.Readlink(filepath.Join(p, "ns", "mnt"))
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		data, err := os.ReadFile(filepath.Join(p, "mountinfo"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 {
				out[unescapeMount(f[4])] = true
			}
		}
	}
	return out
}
