// Package doctor checks that every agent client here is supervised: for
// each client found on PATH or configured in the project or the user's
// settings, that laserbrain's hooks are installed and guarded, their
// programs exist and the gate answers a probe with a denial in the
// client's form, Codex trusts them, the MCP server is registered with the
// variables it needs, the store is reachable and the binaries the hooks
// run are this laserbrain's build. Each problem comes with the command
// that fixes it. It reads and probes; it changes nothing.
package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/install"
)

// Check is one thing doctor looked at.
type Check struct {
	Client client.Name `json:"client,omitempty"`
	Scope  string      `json:"scope,omitempty"`
	What   string      `json:"check"`
	OK     bool        `json:"ok"`
	Detail string      `json:"detail,omitempty"`
	// Fix is the command that fixes a problem.
	Fix string `json:"fix,omitempty"`
	// Contained is, on an "effects contained" check, "binding" or "words
	// only": whether the client's effects are held with the hooks alone.
	Contained string `json:"contained,omitempty"`
}

// Report is everything doctor found.
type Report struct {
	OK       bool    `json:"ok"`
	Problems int     `json:"problems"`
	Checks   []Check `json:"checks"`
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	if !c.OK {
		r.Problems++
	}
}

// Options say where to look and how.
type Options struct {
	Dir  string // the project
	Home string // the user's home
	// Self is this laserbrain's absolute path; Version its version text
	// (version.Info.Text without the name), which the programs the hooks
	// run must report too.
	Self    string
	Version string
	// Getenv reads this process's environment (CODEX_HOME, …); Environ
	// is the environment the probes and codex run with.
	Getenv  func(string) string
	Environ []string
	// LookPath finds a client's program (nil: exec.LookPath).
	LookPath func(string) (string, error)
	// Store reads the store once; an error is reported as unreachable
	// (nil: not checked).
	Store func(context.Context) error
	// Timeout bounds each probe and each codex conversation.
	Timeout time.Duration
	// Confinement says whether laserbrain run can confine an agent here
	// (nil error), and what the confinement holds for an agent working in
	// Dir; nil: not checked.
	Confinement func() (held []string, err error)
	// Protect are the paths supervision stands on (what install keeps
	// off Claude Code's file tools); nil: the client sandbox not checked.
	Protect []string
	// Credentials are where credentials are kept in the home (what install
	// keeps Claude Code from reading).
	Credentials []string
	// Unwitnessed names the fleet's records changed outside a person's
	// command (fleet.Unwitnessed); nil: not checked.
	Unwitnessed func(context.Context) ([]string, error)
	// Undo says what the undo checkpoints take on disk; nil: not checked.
	Undo func() (string, error)
}

func (o Options) lookPath(name string) (string, error) {
	if o.LookPath != nil {
		return o.LookPath(name)
	}
	return exec.LookPath(name)
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 20 * time.Second
}

// Run checks every client found on PATH or configured, and the store.
func Run(ctx context.Context, o Options) Report {
	r := Report{}
	programs := map[string][]client.Name{}
	var held []string
	var confErr error
	if o.Confinement != nil {
		held, confErr = o.Confinement()
	}
	var claudeHere *install.SandboxHere
	for _, n := range client.Names {
		bin, pathErr := o.lookPath(client.Binary(n))
		onPath := pathErr == nil
		any := false
		mcpFiles := map[string]int{}
		for _, scope := range install.Scopes(n) {
			if f, err := install.Locate(install.Options{Client: n, Scope: scope, Dir: o.Dir, Home: o.Home, Getenv: o.Getenv}); err == nil {
				mcpFiles[f.MCP]++
			}
		}
		for _, scope := range install.Scopes(n) {
			io := install.Options{Client: n, Scope: scope, Dir: o.Dir, Home: o.Home, Self: o.Self, Getenv: o.Getenv}
			f, err := install.Locate(io)
			if err != nil {
				continue
			}
			// The MCP server alone says a scope is configured only when
			// no other scope shares its file (Cline's and Copilot CLI's
			// servers live in the user's file for both).
			in := inspect(n, f, mcpFiles[f.MCP] == 1)
			if !in.found {
				continue
			}
			any = true
			checkInstall(ctx, o, &r, n, scope, f, in, programs)
		}
		if !any {
			if onPath {
				r.add(Check{Client: n, What: "installed", OK: false,
					Detail: fmt.Sprintf("%s (%s) is on PATH, and laserbrain is installed for it in neither this project nor the user's settings: it runs unsupervised", n.Title(), bin),
					Fix:    "laserbrain install " + string(n)})
			}
			continue
		}
		if n == client.Codex {
			checkCodexTrust(ctx, o, &r, bin, pathErr)
			if pathErr == nil {
				checkCodexSandboxRuns(ctx, o, &r, bin)
			}
		}
		if n == client.Claude && claudeHere == nil {
			h := install.ClaudeSandboxHere(ctx, o.lookPath, os.Geteuid())
			claudeHere = &h
		}
		if n == client.Claude && o.Protect != nil {
			checkClaudeBash(o, &r, *claudeHere)
		}
		checkContained(o, &r, n, claudeHere, o.Confinement != nil, confErr)
	}
	checkVersions(ctx, o, &r, programs)
	if o.Confinement != nil {
		checkConfined(&r, held, confErr)
	}
	if o.Unwitnessed != nil {
		bad, err := o.Unwitnessed(ctx)
		c := Check{What: "records witnessed", OK: err == nil && len(bad) == 0,
			Detail: "every authorization and release of this fleet is one the journal witnesses"}
		switch {
		case err != nil:
			c.Detail = "the fleet's records could not be checked: " + err.Error()
		case len(bad) > 0:
			c.Detail = strings.Join(bad, "; ")
			c.Fix = "laserbrain supervise verify (then move the files it names aside, and authorize or release again with laserbrain)"
		}
		r.add(c)
	}
	if o.Undo != nil {
		use, err := o.Undo()
		c := Check{What: "undo checkpoints", OK: err == nil, Detail: use}
		if err != nil {
			c.Detail = "the undo checkpoints could not be measured: " + err.Error()
		}
		r.add(c)
	}
	if o.Store != nil {
		sctx, cancel := context.WithTimeout(ctx, o.timeout())
		err := o.Store(sctx)
		cancel()
		c := Check{What: "store reachable", OK: err == nil, Detail: "the store LASERBRAIN_STORE names (the local files when unset) answers"}
		if err != nil {
			c.Detail = err.Error()
			c.Fix = "laserbrain store status (then start the database, or set LASERBRAIN_STORE to one that answers)"
		}
		r.add(c)
	}
	r.OK = r.Problems == 0
	return r
}

// checkConfined says whether laserbrain run and loop can confine an agent
// here (err nil), and when not, what stands unprotected (held).
func checkConfined(r *Report, held []string, err error) {
	c := Check{What: "agents confined", OK: err == nil,
		Detail: fmt.Sprintf("laserbrain run and loop confine an agent by the kernel (Landlock and a mount namespace): %d paths read-only to it", len(held))}
	if err != nil {
		c.Detail = fmt.Sprintf("%v: under laserbrain run the gate alone supervises an agent, and it is unprotected against a process that writes these: %s",
			err, strings.Join(held, ", "))
		c.Fix = "run on Linux with Landlock enabled (lsm=landlock) and mount namespaces allowed (user namespaces, when not root)"
	}
	r.add(c)
}

// installed is what one scope of one client has of ours.
type installed struct {
	found bool
	// hooks: the command each of our events runs ("" when missing); for
	// opencode the plugin's argv, joined.
	hooks map[client.EventName]string
	argv  map[client.EventName][]string
	// problems reading the files.
	problems []string
}

// inspect reads a client's settings for one scope.
func inspect(n client.Name, f install.Files, mcpAlone bool) installed {
	in := installed{hooks: map[client.EventName]string{}, argv: map[client.EventName][]string{}}
	switch n {
	case client.Cline:
		for _, h := range client.Hooks(n) {
			data, err := os.ReadFile(filepath.Join(f.Hooks, h.ClientEvent))
			if err != nil {
				continue
			}
			if cmd, ok := install.IsClineHook(data); ok {
				in.found = true
				in.hooks[h.Event] = cmd
			}
		}
	case client.OpenCode:
		data, err := os.ReadFile(f.Hooks)
		if err == nil && install.IsPlugin(data) {
			in.found = true
			argv, ok := install.PluginArgv(data)
			if !ok {
				in.problems = append(in.problems, f.Hooks+": the plugin's programs cannot be read")
			}
			for ev, a := range argv {
				in.argv[ev] = a
				in.hooks[ev] = strings.Join(a, " ")
			}
		}
	default:
		data, err := os.ReadFile(f.Hooks)
		if err != nil {
			break
		}
		var v struct {
			Hooks map[string][]map[string]any `json:"hooks"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			in.problems = append(in.problems, f.Hooks+": "+err.Error())
			break
		}
		for _, h := range client.Hooks(n) {
			for _, g := range v.Hooks[h.ClientEvent] {
				var cmds []string
				if n == client.Copilot {
					c, _ := g["bash"].(string)
					cmds = append(cmds, c)
				} else {
					inner, _ := g["hooks"].([]any)
					for _, x := range inner {
						if m, ok := x.(map[string]any); ok {
							c, _ := m["command"].(string)
							cmds = append(cmds, c)
						}
					}
				}
				for _, c := range cmds {
					if p, ok := client.ParseCommand(c, ""); ok && p.Event == h.Event {
						in.found = true
						in.hooks[h.Event] = c
					}
				}
			}
		}
	}
	if !in.found && mcpAlone {
		// The MCP server alone still counts as configured.
		if cmd, _ := mcpCommand(n, f); cmd != "" {
			in.found = true
		}
	}
	return in
}

func checkInstall(ctx context.Context, o Options, r *Report, n client.Name, scope install.Scope, f install.Files, in installed, programs map[string][]client.Name) {
	fix := "laserbrain install " + string(n)
	if scope != install.Scopes(n)[0] {
		fix += " --scope " + string(scope)
	}
	add := func(what string, ok bool, detail string) {
		c := Check{Client: n, Scope: string(scope), What: what, OK: ok, Detail: detail}
		if !ok {
			c.Fix = fix
		}
		r.add(c)
	}
	for _, p := range in.problems {
		add("settings readable", false, p)
	}
	var missing, unguarded, wrong, gone []string
	anyAnswer := false // a pre-tool-use command that takes any exit 0 for the gate's
	for _, h := range client.Hooks(n) {
		cmd := in.hooks[h.Event]
		if cmd == "" {
			missing = append(missing, h.ClientEvent)
			continue
		}
		var prog string
		if a := in.argv[h.Event]; len(a) > 0 {
			prog = a[0]
			if !slices.Contains(a, "--client") || !slices.Contains(a, string(n)) {
				wrong = append(wrong, h.ClientEvent)
			}
		} else {
			p, _ := client.ParseCommand(cmd, "")
			prog = p.Program
			if !p.Guarded {
				unguarded = append(unguarded, h.ClientEvent)
			} else if h.Event == client.PreToolUse && !p.Answered {
				anyAnswer = true
			}
			if p.Client != n {
				wrong = append(wrong, h.ClientEvent+" (reads "+string(p.Client)+")")
			}
		}
		if err := executable(prog); err != nil {
			gone = append(gone, h.ClientEvent+": "+err.Error())
		} else if !slices.Contains(programs[prog], n) {
			programs[prog] = append(programs[prog], n)
		}
	}
	where := f.Hooks
	add("hooks installed", len(missing) == 0, detail(where, "every event hooked", "no hook for "+strings.Join(missing, ", "), len(missing) == 0))
	if len(unguarded) > 0 {
		add("hooks guarded", false, where+": "+strings.Join(unguarded, ", ")+" would exit 127 if the binary moved — a non-blocking error, the gate silently off")
	}
	if anyAnswer {
		add("hooks know their gate", false, where+": "+string(client.PreToolUse)+" takes any program's exit 0 for the gate's answer (installed by an earlier laserbrain): /bin/true put in the gate's place would let every call through")
	}
	if len(wrong) > 0 {
		add("hooks read this client", false, where+": "+strings.Join(wrong, ", ")+": the hook would refuse every payload (wrong --client)")
	}
	add("hook programs exist", len(gone) == 0, detail(where, "every hook's program is there and executable", strings.Join(gone, "; "), len(gone) == 0))
	if cmd := in.hooks[client.PreToolUse]; cmd != "" && len(gone) == 0 {
		ok, d := probe(ctx, o, n, f, in)
		add("gate answers", ok, d)
	}
	checkMCP(o, r, n, scope, f, fix, programs)
	checkClientSandbox(o, r, n, scope, f, fix)
}

// checkClientSandbox reports the client's own protection as install sets
// it: Claude Code's permissions.deny rules for the protected paths, Codex's
// sandbox_mode.
func checkClientSandbox(o Options, r *Report, n client.Name, scope install.Scope, f install.Files, fix string) {
	switch {
	case n == client.Claude && o.Protect != nil:
		want := install.ClaudeDenyFor(install.Options{Scope: scope, Dir: o.Dir, Protect: o.Protect, Credentials: o.Credentials})
		have := map[string]bool{}
		if data, err := os.ReadFile(f.Hooks); err == nil {
			var v struct {
				Permissions struct {
					Deny []string `json:"deny"`
				} `json:"permissions"`
			}
			_ = json.Unmarshal(data, &v)
			for _, d := range v.Permissions.Deny {
				have[d] = true
			}
		}
		var missing []string
		for _, w := range want {
			if !have[w] {
				missing = append(missing, w)
			}
		}
		c := Check{Client: n, Scope: string(scope), What: "client sandbox", OK: len(missing) == 0,
			Detail: detail(f.Hooks, fmt.Sprintf("permissions.deny keeps Claude Code's file tools off the %d protected and credential paths", len(want)/2),
				"Claude Code's own file tools may write what supervision stands on; no rule "+strings.Join(missing, ", "), len(missing) == 0)}
		if !c.OK {
			c.Fix = fix
		}
		r.add(c)
	case n == client.Codex:
		sb, err := install.CodexSandboxOf(f.MCP)
		c := Check{Client: n, Scope: string(scope), What: "client sandbox", OK: true}
		switch {
		case err != nil:
			return // the MCP check reports an unreadable config
		case sb.Mode == "" && scope == install.Project:
			// The user's layer below names it (install writes none here
			// then).
			if uf, err := install.Locate(install.Options{Client: n, Scope: install.User, Home: o.Home, Getenv: o.Getenv}); err == nil {
				if us, err := install.CodexSandboxOf(uf.MCP); err == nil && us.Mode != "" {
					c.Detail = f.MCP + ": names no sandbox_mode; the user's " + uf.MCP + " names " + us.Mode
					break
				}
			}
			c.OK, c.Fix = false, fix
			c.Detail = f.MCP + ": names no sandbox_mode, nor does the user's config: install again to turn Codex's workspace-write sandbox on"
		case sb.Ours:
			c.Detail = f.MCP + ": sandbox_mode = " + sb.Mode + " (laserbrain's): the agent's shell writes only the workspace and the temporary directories"
		case sb.Mode == "danger-full-access":
			c.Detail = f.MCP + ": sandbox_mode = danger-full-access, the user's own choice: Codex does not confine the agent's shell; the gate (and, under laserbrain run, the kernel) alone holds the protected paths"
		case sb.Mode != "":
			c.Detail = f.MCP + ": sandbox_mode = " + sb.Mode + ", the user's own choice"
		default:
			c.OK, c.Fix = false, fix
			c.Detail = f.MCP + ": names no sandbox_mode: install again to turn Codex's workspace-write sandbox on"
		}
		r.add(c)
	}
}

// checkClaudeBash reports what Claude Code's Bash runs under in the
// project, by the three settings layers: the sandbox install turns on
// (bubblewrap, writes only in the project, the protected paths denied, no
// command let out), the user's own choice, or none — and whether the
// sandbox can start here (Claude Code needs bwrap and socat on PATH, and
// without them runs Bash unsandboxed with a warning). Where it cannot, the
// fix is the one command that makes it able (and, where no sandbox is
// named, install again after it: install turns it on only where it can
// start).
func checkClaudeBash(o Options, r *Report, here install.SandboxHere) {
	c := Check{Client: client.Claude, What: "client sandbox (Bash)", OK: true}
	sb, err := install.ClaudeSandboxFor(o.Dir, o.Home)
	if err != nil {
		return // the settings check reports an unreadable file
	}
	switch {
	case !sb.Named() && !here.OK():
		c.OK, c.Fix = false, joinFix(here.Fix, "laserbrain install claude")
		c.Detail = "no settings layer names Claude Code's sandbox, and it cannot start here (" + here.Why() + "): its Bash is unconfined, held by the gate alone" + bundledNote(here)
	case !sb.Named():
		c.OK, c.Fix = false, "laserbrain install claude"
		c.Detail = "no settings layer names Claude Code's sandbox: its Bash is unconfined, held by the gate alone; install again to turn the sandbox on"
	case !sb.On():
		c.Detail = sb.Path + ": sandbox off, the user's own choice: Claude Code's Bash is unconfined, held by the gate alone (and, under laserbrain run, the kernel)"
	case !here.OK():
		c.OK, c.Fix = false, here.Fix
		c.Detail = sb.Path + ": the sandbox is on but cannot start here (" + here.Why() + "): Claude Code runs Bash unsandboxed, unconfined, held by the gate alone" + bundledNote(here)
	case !sb.Closed():
		c.Detail = sb.Path + ": sandbox on, the user's own choice; the model may ask to run a command outside it (dangerouslyDisableSandbox) unless sandbox.allowUnsandboxedCommands is false"
	case sb.Ours:
		c.Detail = sb.Path + ": sandbox on (laserbrain's): Bash runs under bubblewrap, writes only the project and its temporary directory, never a protected path, and no command runs outside it"
	default:
		c.Detail = sb.Path + ": sandbox on, the user's own choice, no command let outside it"
	}
	r.add(c)
}

// checkContained says whether client n's effects are held with the hooks
// alone — binding, by its own sandbox, or words only — and under
// laserbrain run, by the kernel's boundary (when kernelChecked: confErr
// nil where it binds here). It is information, not a problem: the fixes
// are the client sandbox checks' and "agents confined".
func checkContained(o Options, r *Report, n client.Name, claudeHere *install.SandboxHere, kernelChecked bool, confErr error) {
	var st install.SandboxState
	switch n {
	case client.Claude:
		sb, err := install.ClaudeSandboxFor(o.Dir, o.Home)
		if err != nil {
			return // the settings check reports an unreadable file
		}
		st.Claude, st.ClaudeStarts = sb, claudeHere != nil && claudeHere.OK()
	case client.Codex:
		st.CodexMode = install.CodexSandboxMode(install.Options{Dir: o.Dir, Home: o.Home, Getenv: o.Getenv})
	}
	ct := install.ContainmentOf(n, st)
	detail := "hooks alone: " + ct.Word() + " (" + ct.Why + ")"
	switch {
	case !kernelChecked:
	case confErr == nil:
		detail += "; under laserbrain run: binding (the kernel's boundary: credentials unreadable, a network of its own, writes only where an agent works)"
	default:
		detail += "; under laserbrain run: words only too, the kernel cannot confine here (" + confErr.Error() + ")"
	}
	r.add(Check{Client: n, What: "effects contained", OK: true, Detail: detail, Contained: ct.Word()})
}

// joinFix chains two commands ("" when the first is unknown: then no
// command fixes it).
func joinFix(first, then string) string {
	if first == "" {
		return ""
	}
	return first + " && " + then
}

// bundledNote says where the bwrap of the fix comes from.
func bundledNote(h install.SandboxHere) string {
	if h.Bundled == "" {
		return ""
	}
	return "; Codex's own bubblewrap (" + h.Bundled + ") runs it, linked onto PATH"
}

func detail(where, good, bad string, ok bool) string {
	if ok {
		return where + ": " + good
	}
	return where + ": " + bad
}

// executable says what is wrong with a program a hook runs.
func executable(prog string) error {
	if prog == "" {
		return errors.New("no program")
	}
	if !filepath.IsAbs(prog) {
		return fmt.Errorf("%s is not an absolute path (a PATH without it would switch the hook off)", prog)
	}
	fi, err := os.Stat(prog)
	if err != nil {
		return fmt.Errorf("%s is missing", prog)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", prog)
	}
	return nil
}

// probePayload is a shell command (push) as client n's pre-tool-use hook
// receives it, with no session (the probe is recorded on no run).
func probePayload(n client.Name, cwd, push string) []byte {
	var v any
	switch n {
	case client.Gemini:
		v = map[string]any{"hook_event_name": "BeforeTool", "cwd": cwd, "tool_name": "run_shell_command", "tool_input": map[string]string{"command": push}}
	case client.Copilot:
		v = map[string]any{"cwd": cwd, "timestamp": 0, "toolName": "bash", "toolArgs": map[string]string{"command": push}}
	case client.Cline:
		v = map[string]any{"hookName": "tool_call", "workspaceRoots": []string{cwd},
			"tool_call": map[string]any{"id": "doctor", "name": "run_commands", "input": map[string]any{"commands": []string{push}}}}
	case client.OpenCode:
		v = map[string]any{"hook_event_name": "tool.execute.before", "callID": "doctor", "tool": "bash", "args": map[string]string{"command": push}, "directory": cwd}
	default:
		v = map[string]any{"hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash", "tool_input": map[string]string{"command": push}}
	}
	b, _ := json.Marshal(v)
	return b
}

// probeEnv is the environment a probe runs in: no run, no session, no
// word on who is there.
func probeEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LASERBRAIN_RUN" || k == "LASERBRAIN_AGENT" || k == "LASERBRAIN_ATTENDED" || k == "LASERBRAIN_LOOP_RUN" ||
			strings.HasPrefix(k, "CLAUDE_CODE_") || k == "CLAUDE_PROJECT_DIR" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// probe runs the installed pre-tool-use hook the way the client would: a
// force push must come back as the client's denial, in time, and ls must
// be let through — which another program put in the gate's place is not
// (the installed command takes only the gate's own answer).
func probe(ctx context.Context, o Options, n client.Name, f install.Files, in installed) (bool, string) {
	cwd, err := os.MkdirTemp("", "laserbrain-doctor-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(cwd)
	push, took, failed := probeRun(ctx, o, n, f, in, cwd, "git push --force origin main")
	if failed != "" {
		return false, failed
	}
	if !client.Denied(n, push) {
		return false, fmt.Sprintf("a probe force push was not denied: exit %d, stdout %q, stderr %q", push.Exit, strings.TrimSpace(push.Stdout), strings.TrimSpace(push.Stderr))
	}
	ls, _, failed := probeRun(ctx, o, n, f, in, cwd, "ls")
	if failed != "" {
		return false, failed
	}
	var answer map[string]any
	if client.Denied(n, ls) || (n == client.OpenCode && json.Unmarshal([]byte(ls.Stdout), &answer) != nil) {
		return false, fmt.Sprintf("a probe ls was refused (exit %d, stdout %q, stderr %q): the hook's program did not answer as laserbrain's gate — another program in its place, or a gate that refuses everything — and every call is refused until it is repaired",
			ls.Exit, strings.TrimSpace(ls.Stdout), strings.TrimSpace(ls.Stderr))
	}
	return true, fmt.Sprintf("a probe force push was denied in %s's form in %v, and ls let through", n.Title(), took.Round(time.Millisecond))
}

// probeRun runs the installed pre-tool-use hook on one shell command; failed
// says why there is no answer.
func probeRun(ctx context.Context, o Options, n client.Name, f install.Files, in installed, cwd, command string) (reply client.Output, took time.Duration, failed string) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	var cmd *exec.Cmd
	switch n {
	case client.Cline:
		cmd = exec.CommandContext(ctx, filepath.Join(f.Hooks, "PreToolUse"))
	case client.OpenCode:
		a := in.argv[client.PreToolUse]
		cmd = exec.CommandContext(ctx, a[0], a[1:]...)
	default:
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", in.hooks[client.PreToolUse])
	}
	cmd.Dir, cmd.Env = cwd, probeEnv(o.Environ)
	cmd.Stdin = bytes.NewReader(probePayload(n, cwd, command))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	reply = client.Output{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return reply, took, fmt.Sprintf("the pre-tool-use hook gave no answer within %v", o.timeout())
	case errors.As(err, &ee):
		reply.Exit = ee.ExitCode()
	case err != nil:
		return reply, took, err.Error()
	}
	return reply, took, ""
}

// mcpCommand is the program our MCP server entry runs ("" when there is
// none), and for Codex the variables it passes.
func mcpCommand(n client.Name, f install.Files) (string, []string) {
	data, err := os.ReadFile(f.MCP)
	if err != nil {
		return "", nil
	}
	if n == client.Codex {
		cmd, vars, ok, err := install.CodexServerVars(data)
		if err != nil || !ok {
			return "", nil
		}
		return cmd, vars
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return "", nil
	}
	for _, k := range f.MCPKeys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	entry, _ := m[client.ServerName].(map[string]any)
	switch c := entry["command"].(type) {
	case string:
		return c, nil
	case []any:
		if len(c) > 0 {
			s, _ := c[0].(string)
			return s, nil
		}
	}
	return "", nil
}

func checkMCP(o Options, r *Report, n client.Name, scope install.Scope, f install.Files, fix string, programs map[string][]client.Name) {
	cmd, vars := mcpCommand(n, f)
	c := Check{Client: n, Scope: string(scope), What: "MCP server registered", OK: cmd != "", Detail: f.MCP + ": " + client.ServerName + " runs " + cmd}
	if cmd == "" {
		c.Detail = f.MCP + ": no " + client.ServerName + " server (check_state and the other tools are out of the agent's reach)"
		c.Fix = fix
		r.add(c)
		return
	}
	if err := executable(cmd); err != nil {
		c.OK, c.Detail, c.Fix = false, f.MCP+": "+err.Error(), fix
	} else if !slices.Contains(programs[cmd], n) {
		programs[cmd] = append(programs[cmd], n)
	}
	r.add(c)
	switch n {
	case client.Codex:
		r.add(mcpVarsCheck(n, scope, f.MCP+": env_vars", "passes", vars, "Codex starts MCP servers with a scrubbed environment, so the server would check the wrong run or store", fix))
	case client.Gemini:
		data, _ := os.ReadFile(f.MCP)
		var v struct {
			Security struct {
				Redaction struct {
					Allowed []string `json:"allowed"`
				} `json:"environmentVariableRedaction"`
			} `json:"security"`
		}
		_ = json.Unmarshal(data, &v)
		r.add(mcpVarsCheck(n, scope, f.MCP+": security.environmentVariableRedaction.allowed", "keeps", v.Security.Redaction.Allowed,
			"with redaction on (always under GitHub Actions) hooks and the server would lose them", fix))
	}
}

// mcpVarsCheck checks that setting (a file's, named with it) lets every
// variable the MCP server needs through: listed is what it lists, keeps
// the word for doing so, why what a variable it lacks costs.
func mcpVarsCheck(n client.Name, scope install.Scope, setting, keeps string, listed []string, why, fix string) Check {
	var lacking []string
	for _, v := range client.MCPEnv {
		if !slices.Contains(listed, v) {
			lacking = append(lacking, v)
		}
	}
	c := Check{Client: n, Scope: string(scope), What: "MCP server's variables", OK: len(lacking) == 0,
		Detail: setting + " " + keeps + " " + strings.Join(client.MCPEnv, ", ")}
	if len(lacking) > 0 {
		c.Detail, c.Fix = setting+" lacks "+strings.Join(lacking, ", ")+": "+why, fix
	}
	return c
}

// checkCodexTrust asks codex itself whether it trusts our hooks.
func checkCodexTrust(ctx context.Context, o Options, r *Report, bin string, pathErr error) {
	c := Check{Client: client.Codex, What: "hooks trusted"}
	if pathErr != nil {
		c.Detail = "codex is not on PATH, so its trust in the hooks cannot be read; Codex skips untrusted hooks without a word"
		c.Fix = "put codex on PATH and run laserbrain doctor again"
		r.add(c)
		return
	}
	hooks, problems, err := install.CodexHooks(ctx, install.CodexOptions{Bin: bin, Env: o.Environ, Dir: o.Dir})
	if err != nil {
		c.Detail, c.Fix = err.Error(), "laserbrain install codex"
		r.add(c)
		return
	}
	var bad, good []string
	for _, h := range hooks {
		if !h.Ours() {
			continue
		}
		if h.TrustStatus == "trusted" || h.TrustStatus == "managed" {
			good = append(good, h.Key)
		} else {
			bad = append(bad, h.Key+" ("+h.TrustStatus+")")
		}
	}
	switch {
	case len(bad) > 0:
		c.Detail = "codex skips these without a word: " + strings.Join(bad, ", ")
		c.Fix = "laserbrain install codex (it trusts them through codex app-server)"
	case len(good) == 0:
		c.Detail = "codex lists none of laserbrain's hooks for " + o.Dir
		if len(problems) > 0 {
			c.Detail += " (" + strings.Join(problems, "; ") + ")"
		}
		c.Detail += "; a project's .codex/ loads only when the user trusts the project"
		c.Fix = "laserbrain install codex"
	default:
		c.OK, c.Detail = true, fmt.Sprintf("codex trusts all %d of laserbrain's hooks", len(good))
	}
	r.add(c)
}

// checkCodexSandboxRuns runs a harmless command under Codex's own sandbox,
// in the mode Codex will use for the project: a sandbox that is on and
// runs nothing leaves the agent a shell that fails every call.
func checkCodexSandboxRuns(ctx context.Context, o Options, r *Report, bin string) {
	mode := install.CodexSandboxMode(install.Options{Dir: o.Dir, Home: o.Home, Getenv: o.Getenv})
	if mode == "danger-full-access" {
		return // Codex runs the shell unconfined: the client sandbox check says so
	}
	named := mode
	if named == "" {
		named = "Codex's default"
	}
	c := Check{Client: client.Codex, What: "client sandbox runs", OK: true,
		Detail: "Codex's sandbox (" + named + ") runs a command here (/bin/true)"}
	err := install.CodexSandboxRuns(ctx, install.CodexOptions{Bin: bin, Env: o.Environ, Dir: o.Dir}, mode)
	var sb *install.CodexSandboxError
	switch {
	case err == nil:
	case errors.As(err, &sb):
		c.OK, c.Detail = false, "Codex's sandbox ("+named+") is on and runs no command, so every shell call of the agent fails: "+sb.Said
		if sb.Cause != "" {
			c.Detail += "; " + sb.Cause
		}
		c.Fix = sb.Fix
		if c.Fix == "" {
			c.Fix = bin + " sandbox -- /bin/true (see what Codex says)"
		}
	default:
		c.OK, c.Detail = false, "cannot ask codex to run a command in its sandbox: "+err.Error()
		c.Fix = "put a working codex on PATH and run laserbrain doctor again"
	}
	r.add(c)
}

// checkVersions: every program the hooks and servers run reports this
// laserbrain's version.
func checkVersions(ctx context.Context, o Options, r *Report, programs map[string][]client.Name) {
	if o.Version == "" || len(programs) == 0 {
		return
	}
	var progs []string
	for p := range programs {
		progs = append(progs, p)
	}
	slices.Sort(progs)
	for _, p := range progs {
		cctx, cancel := context.WithTimeout(ctx, o.timeout())
		out, err := exec.CommandContext(cctx, p, "--version").Output()
		cancel()
		got := ""
		if err == nil {
			_, got, _ = strings.Cut(string(out), " ")
		}
		c := Check{What: "versions agree", OK: err == nil && strings.TrimSpace(got) == strings.TrimSpace(o.Version),
			Detail: fmt.Sprintf("%s (run by %s) is this laserbrain's build", p, names(programs[p]))}
		if !c.OK {
			first := strings.SplitN(strings.TrimSpace(got), "\n", 2)[0]
			if err != nil {
				first = err.Error()
			}
			c.Detail = fmt.Sprintf("%s (run by %s) reports %q; this laserbrain is %q", p, names(programs[p]), first, strings.SplitN(o.Version, "\n", 2)[0])
			c.Fix = "laserbrain install " + string(programs[p][0]) + " (run by the build you mean the hooks to run)"
		}
		r.add(c)
	}
}

func names(ns []client.Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
