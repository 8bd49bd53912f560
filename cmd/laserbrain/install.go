package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/install"
)

type installOptions struct {
	IO *cli.IOStreams
	// remove: uninstall; client is the CLIENT argument.
	remove bool
	client string

	scope  string
	dir    string
	dryRun bool
}

// verb is the command's name: install or uninstall.
func (o *installOptions) verb() string {
	if o.remove {
		return "uninstall"
	}
	return "install"
}

func newInstallCmd(f *Factory, remove bool, runF func(*installOptions) error) *cobra.Command {
	opts := &installOptions{IO: f.IOStreams, remove: remove}
	verb := opts.verb()
	short := "Put laserbrain's hooks and MCP server into an agent client's settings"
	if remove {
		short = "Take laserbrain's hooks and MCP server out of an agent client's settings"
	}
	cmd := &cobra.Command{
		Use:   verb + " CLIENT [--scope project|local|user] [--dry-run]",
		Short: short,
		Long: verb + ` CLIENT ` + map[bool]string{false: "merges", true: "removes"}[remove] + ` every laserbrain hook — run by this binary's
absolute path, guarded so that a moved binary denies the next tool call
(telling to run laserbrain doctor) instead of silently turning the gate off —
and the laserbrain MCP server ` + map[bool]string{false: "into", true: "from"}[remove] + ` an agent client's settings for a scope:

  claude    project: .claude/settings.json (hooks; enabledMcpjsonServers
            approves the server) and .mcp.json. local: .claude/settings.local.json
            and this project's entry in ~/.claude.json. user: ~/.claude/settings.json
            and ~/.claude.json
  codex     user (the default): hooks.json and config.toml ([mcp_servers.laserbrain]
            with env_vars, for Codex scrubs an MCP server's environment) in
            $CODEX_HOME (~/.codex). project: .codex/ (loaded only in a project
            the user trusts). The hooks are then trusted through codex
            app-server (hooks/list, config/batchWrite): codex must be on PATH
  gemini    project: .gemini/settings.json. user: ~/.gemini/settings.json
            (hooks under Gemini CLI's names: BeforeTool, AfterTool, …; the
            server with trust; our variables allowed past its redaction)
  qwen      project: .qwen/settings.json. user: ~/.qwen/settings.json
  opencode  project: .opencode/plugin/laserbrain.js (our plugin) and
            .opencode/opencode.json. user: the same under ~/.config/opencode
  cline     project: .clinerules/hooks/ (an executable per event). user:
            ~/.cline/hooks/. The server: Cline's cline_mcp_settings.json
  copilot   project: .github/hooks/laserbrain.json. user: ~/.copilot/settings.json.
            The server: ~/.copilot/mcp-config.json

For claude, the settings also get permissions.deny rules (Edit(//PATH),
Edit(//PATH/**)) keeping Claude Code's own file tools off what supervision
stands on: the laserbrain home, the installed binaries, the clients'
settings and hook files, .git/hooks, .git/config, .laserbrain/ (the list
laserbrain run denies; at the user scope without one project's paths).
They also turn on Claude Code's own sandbox for its Bash (sandbox.enabled,
and allowUnsandboxedCommands false, so the model cannot ask for a command
outside it) where neither this file nor a layer it overrides names a
sandbox choice: Bash then runs under bubblewrap, writing only the project
and its temporary directory, never a path the deny rules name. A sandbox
choice of the user's own is never replaced; install says which it found,
and whether bwrap and socat, which the sandbox needs, are on PATH.
For codex, a config.toml that names no sandbox_mode (nor, for a project,
the user's) gets Codex's own sandbox: sandbox_mode = "workspace-write", no
writable root beyond the workspace and the temporary directories, those
too left out when a protected path lies below them. A sandbox_mode of the
user's own is never replaced; install says which it found, and runs
/bin/true under that sandbox: when Codex's sandbox runs no command here
(a bwrap without --argv0 first on PATH and a CODEX_HOME under the temporary
directory), it says so, why, and what to do, and leaves the sandbox on.

Every key already in those files is kept, in its place; our own entries are
replaced in place, so running it again changes no byte. --dry-run prints the
diff and writes nothing. A file that cannot be read as what it should be
(JSON, TOML), or one of ours that someone else wrote, is refused, with
nothing written. Each file is reported created, updated, removed or
unchanged. --dir is the project (default: the current directory); it must
exist, and a warning says so when it is not the top of its git repository.
laserbrain doctor checks the result.`,
		Example: "  laserbrain " + verb + " claude\n  laserbrain " + verb + " codex\n  laserbrain " + verb + " gemini --scope user --dry-run\n  laserbrain " + verb + " claude --dir ~/src/shop --scope local",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("name the client: laserbrain %s CLIENT (%s)", verb, clientList())
			}
			return cli.ExactArgs(1)(cmd, args)
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return clientValues(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, args []string) error {
			opts.client = args[0]
			return nil
		}, runF, runInstall),
	}
	cmd.Flags().StringVar(&opts.scope, "scope", "", "project, local (claude only) or user (default: project; user for codex)")
	cmd.Flags().StringVar(&opts.dir, "dir", "", "the project directory (default: the current directory)")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the diff and write nothing")
	cli.CompleteFlag(cmd, "scope", cli.Values("project\tthe project's settings", "local\tClaude Code's .claude/settings.local.json", "user\tthe user's settings"))
	cli.CompleteFlag(cmd, "dir", cli.Dirs)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "not a client, a bad --scope, or a settings file that cannot be read as it should (nothing written)"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "a file could not be written, or Codex's hooks could not be trusted"})
	return cmd
}

// runInstall puts laserbrain's hooks and MCP server into the client's
// settings, or takes them out.
func runInstall(opts *installOptions) error {
	verb, remove, streams := opts.verb(), opts.remove, opts.IO
	if err := personOnly("laserbrain " + verb); err != nil {
		return err
	}
	n := client.Name(opts.client)
	if !n.Known() {
		return cli.Usagef("%s what? %q is not a client laserbrain supervises: %s", verb, opts.client, clientList())
	}
	scope := install.Scope(opts.scope)
	if scope == "" {
		scope = install.Scopes(n)[0]
	}
	self, err := selfPath()
	if err != nil {
		return cli.Failure(err)
	}
	dir, err := installDir(opts.dir)
	if err != nil {
		return err
	}
	if scope != install.User {
		warnNotTopLevel(streams, dir, n)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return cli.Failure(err)
	}
	o := install.Options{Client: n, Scope: scope, Dir: dir, Home: home, Self: self, Remove: remove, Getenv: os.Getenv}
	if n == client.Claude || n == client.Codex {
		// What supervision stands on, the list laserbrain run denies and
		// the kernel holds read-only there: kept off Claude Code's own
		// file tools (permissions.deny); for Codex, whether its sandbox
		// must leave /tmp out and which paths it holds read-only.
		o.Protect = protectedPaths(self, dir)
		// The places credentials are kept: unreadable to Claude Code's
		// Read tool and sandboxed Bash, and to Codex's sandboxed shell.
		o.Credentials = homeCredentials(home)
	}
	if n == client.Claude || n == client.Codex {
		o.Hosts = policyHosts(dir)
	}
	var here install.SandboxHere
	if n == client.Claude && !remove {
		// Claude Code's sandbox is turned on only where it can start.
		here = install.ClaudeSandboxHere(context.Background(), nil, os.Geteuid())
		o.NoClaudeSandbox = here.Why()
	}
	var codex string
	if n == client.Codex && !remove {
		// Trust needs codex itself: without it the hooks would be written
		// and skipped.
		if codex, err = exec.LookPath("codex"); err != nil {
			return cli.Failure(fmt.Errorf("codex is not on PATH: laserbrain trusts its hooks through codex app-server, and Codex skips hooks nobody trusted; put codex on PATH and run this again (nothing was changed)"))
		}
	}
	changes, err := install.Plan(o)
	if err != nil {
		// A bad scope, or a file that is not what it should be: refused,
		// nothing written.
		return cli.Usagef("%v", err)
	}
	if opts.dryRun {
		printDryRun(streams, changes, codex)
		return nil
	}
	if err := install.Apply(changes); err != nil {
		return cli.Failure(err)
	}
	for _, c := range changes {
		fmt.Fprintf(streams.Out, "%s: %s\n", c.Path, c.State())
	}
	if n == client.Codex && !remove {
		reportCodexSandbox(streams, changes)
	}
	if n == client.Claude && !remove {
		reportClaudeSandbox(streams, dir, home, here)
	}
	if !remove {
		reportContained(streams, n, dir, home, here)
	}
	if codex != "" {
		return trustCodexHooks(streams, codex, o)
	}
	return nil
}

// installDir is --dir made absolute: a mistyped one must not install hooks
// into a new, empty directory and report success.
func installDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", cli.Usagef("--dir: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", cli.Usagef("--dir %s: not an existing directory", flag)
	}
	return dir, nil
}

// printDryRun prints what install would change, and writes nothing.
func printDryRun(streams *cli.IOStreams, changes []install.Change, codex string) {
	changed := 0
	for _, c := range changes {
		if c.Changed() {
			changed++
			fmt.Fprint(streams.Out, c.Diff())
		}
	}
	if changed == 0 {
		fmt.Fprintln(streams.ErrOut, "nothing to change")
	}
	if codex != "" {
		fmt.Fprintf(streams.ErrOut, "then: laserbrain's hooks would be trusted through %s app-server\n", codex)
	}
}

// trustCodexHooks trusts the hooks just written through codex app-server:
// Codex skips hooks nobody trusted.
func trustCodexHooks(streams *cli.IOStreams, codex string, o install.Options) error {
	ctx := context.Background()
	trusted, err := install.TrustCodex(ctx, install.CodexOptions{Bin: codex, Env: os.Environ(), Dir: o.Dir})
	if err != nil {
		if o.Scope == install.Project {
			err = fmt.Errorf("%w; Codex loads a project's .codex/ only when the user trusts the project: trust it in codex, or install with --scope user", err)
		}
		return cli.Failure(fmt.Errorf("the hooks are written but not trusted, so Codex skips them: %w", err))
	}
	for _, h := range trusted {
		fmt.Fprintf(streams.Out, "%s: trusted (it was %s)\n", h.Key, h.TrustStatus)
	}
	if len(trusted) == 0 {
		fmt.Fprintln(streams.Out, "codex hooks: already trusted")
	}
	warnCodexSandbox(ctx, streams, codex, o)
	return nil
}

func clientList() string {
	names := make([]string, len(client.Names))
	for i, n := range client.Names {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// selfPath is this binary's absolute path, links resolved, for the hooks
// to run (LASERBRAIN_INSTALL_SELF in tests, which install a stable path
// rather than the test binary's).
func selfPath() (string, error) {
	if p := os.Getenv("LASERBRAIN_INSTALL_SELF"); p != "" {
		return p, nil
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find this binary's absolute path: %w", err)
	}
	return self, nil
}

// warnNotTopLevel warns when dir is inside a git repository but not its
// top level: the client started at the top would not read settings
// written here.
func warnNotTopLevel(streams *cli.IOStreams, dir string, n client.Name) {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return // not a repository (or no git): nothing to compare
	}
	top := strings.TrimSpace(string(out))
	same := top == dir
	if a, err := filepath.EvalSymlinks(top); err == nil {
		if b, err := filepath.EvalSymlinks(dir); err == nil {
			same = a == b
		}
	}
	if !same {
		fmt.Fprintf(streams.ErrOut, "laserbrain: warning: %s is not the top of its git repository (%s); %s started there will not read these project settings\n", dir, top, n.Title())
	}
}

// reportClaudeSandbox says what Claude Code's Bash runs under in dir after
// install: laserbrain's sandbox, the user's own choice, or none — and,
// where it cannot start here, the one command that makes it able.
func reportClaudeSandbox(streams *cli.IOStreams, dir, home string, here install.SandboxHere) {
	sb, err := install.ClaudeSandboxFor(dir, home)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "laserbrain: cannot read Claude Code's sandbox: %v\n", err)
		return
	}
	switch {
	case sb.Ours && sb.On() && sb.Closed() && here.OK():
		fmt.Fprintf(streams.Out, "claude sandbox: on (laserbrain's, in %s: Bash writes only the project and its temporary directory, never a protected path, and no command runs outside it)\n", sb.Path)
	case !sb.Named() && !here.OK():
		fmt.Fprintf(streams.Out, "claude sandbox: not turned on: it cannot start here (%s); Claude Code's Bash is held by the gate alone\n", here.Why())
	case !sb.Named():
		fmt.Fprintln(streams.Out, "claude sandbox: none named; Claude Code's Bash is held by the gate alone")
	case !sb.On():
		fmt.Fprintf(streams.Out, "claude sandbox: off, the user's own choice in %s, kept as it is: Claude Code's Bash is held by the gate alone\n", sb.Path)
	case !here.OK():
		fmt.Fprintf(streams.Out, "claude sandbox: on in %s, but it cannot start here (%s); Claude Code then runs Bash unsandboxed, held by the gate alone\n", sb.Path, here.Why())
	case !sb.Closed():
		fmt.Fprintf(streams.Out, "claude sandbox: on, the user's own choice in %s, kept as it is; the model may still ask to run a command outside it (dangerouslyDisableSandbox) unless sandbox.allowUnsandboxedCommands is false\n", sb.Path)
	default:
		fmt.Fprintf(streams.Out, "claude sandbox: on, the user's own choice in %s, kept as it is\n", sb.Path)
	}
	if !here.OK() && (sb.On() || !sb.Named()) {
		switch {
		case here.Fix == "":
			fmt.Fprintln(streams.Out, "claude sandbox: no command known here makes bwrap work; see laserbrain doctor")
		case sb.Named():
			fmt.Fprintf(streams.Out, "claude sandbox: to let it start: %s\n", here.Fix)
		default:
			fmt.Fprintf(streams.Out, "claude sandbox: to turn it on: %s && laserbrain install claude\n", here.Fix)
		}
		if here.Bundled != "" {
			fmt.Fprintf(streams.Out, "claude sandbox: the bwrap linked is Codex's own (%s), which serves Claude Code's sandbox and Codex's both\n", here.Bundled)
		}
	}
}

// reportContained says whether n's effects are held with the hooks alone
// after install: binding, by its own sandbox, or words only — and then,
// plainly, that laserbrain run is what binds.
func reportContained(streams *cli.IOStreams, n client.Name, dir, home string, here install.SandboxHere) {
	var st install.SandboxState
	switch n {
	case client.Claude:
		sb, err := install.ClaudeSandboxFor(dir, home)
		if err != nil {
			return // reportClaudeSandbox said why
		}
		st.Claude, st.ClaudeStarts = sb, here.OK()
	case client.Codex:
		st.CodexMode = install.CodexSandboxMode(install.Options{Dir: dir, Home: home, Getenv: os.Getenv})
	}
	ct := install.ContainmentOf(n, st)
	fmt.Fprintf(streams.Out, "%s effects, hooks alone: %s (%s)\n", n, ct.Word(), ct.Why)
}

// reportCodexSandbox says what install decided about Codex's own sandbox:
// workspace-write written by laserbrain, or the user's sandbox_mode kept.
func reportCodexSandbox(streams *cli.IOStreams, changes []install.Change) {
	for _, c := range changes {
		if filepath.Base(c.Path) != "config.toml" {
			continue
		}
		sb, err := install.CodexSandboxOf(c.Path)
		switch {
		case err != nil:
			fmt.Fprintf(streams.ErrOut, "laserbrain: cannot read Codex's sandbox from %s: %v\n", c.Path, err)
		case sb.Ours && sb.Profile != "":
			fmt.Fprintf(streams.Out, "codex sandbox: %s (laserbrain's, permissions profile %q: the agent's shell writes only the workspace and the temporary directories, never a protected path, and reads no place credentials are kept)\n", sb.Mode, sb.Profile)
		case sb.Ours:
			fmt.Fprintf(streams.Out, "codex sandbox: %s (laserbrain's: the agent's shell writes only the workspace and the temporary directories; it still reads the places credentials are kept, for the user's own [sandbox_workspace_write] keeps Codex on sandbox_mode, which hides no path)\n", sb.Mode)
		case sb.Mode != "":
			fmt.Fprintf(streams.Out, "codex sandbox: %s, the user's own choice, kept as it is\n", sb.Mode)
		}
	}
}

// warnCodexSandbox runs one harmless command under Codex's own sandbox, in
// the mode Codex will use for the project, and says plainly when it does
// not run: the sandbox is on (install never takes it off), and every shell
// call the agent makes would fail the same way until the cause is fixed.
func warnCodexSandbox(ctx context.Context, streams *cli.IOStreams, codex string, o install.Options) {
	mode := install.CodexSandboxMode(o)
	if mode == "danger-full-access" {
		return // no sandbox of Codex's to run
	}
	err := install.CodexSandboxRuns(ctx, install.CodexOptions{Bin: codex, Env: os.Environ(), Dir: o.Dir}, mode)
	var sb *install.CodexSandboxError
	switch {
	case err == nil:
		fmt.Fprintln(streams.Out, "codex sandbox: runs the agent's commands here (checked with /bin/true)")
	case errors.As(err, &sb):
		fmt.Fprintf(streams.ErrOut, "laserbrain: warning: %v\n", err)
		if sb.Fix != "" {
			fmt.Fprintf(streams.ErrOut, "laserbrain: to fix: %s\n", sb.Fix)
		}
	default:
		fmt.Fprintf(streams.ErrOut, "laserbrain: warning: could not check that Codex's sandbox runs commands: %v\n", err)
	}
}

// policyHosts are the endpoints the project policy at dir lets an agent
// reach (boundary.connect); none when it has no valid policy.
func policyHosts(dir string) []string {
	pol, err := agentrun.LoadPolicy(dir, policyschema.Validate)
	if err != nil || pol.Err != "" {
		return nil
	}
	var out []string
	for _, c := range pol.Boundary.Connect {
		out = append(out, c.Endpoint)
	}
	return out
}

// homeCredentials are the places in home where credentials are kept, as
// laserbrain run's boundary masks them (those its variables point to left
// out: install's rules must be the same on every install and uninstall).
func homeCredentials(home string) []string {
	var out []string
	for _, c := range confine.CredentialPaths(home, func(string) string { return "" }) {
		out = append(out, c.Path)
	}
	return out
}
