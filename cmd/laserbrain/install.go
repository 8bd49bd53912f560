package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/install"
)

type installOptions struct {
	scope  string
	dir    string
	dryRun bool
}

func newInstallCmd(streams *cli.IOStreams, remove bool) *cobra.Command {
	opts := &installOptions{}
	verb, use := "install", "install claude [--scope project|local|user] [--dry-run]"
	short := "Put laserbrain's hooks and MCP server into Claude Code's settings"
	if remove {
		verb, use = "uninstall", "uninstall claude [--scope project|local|user] [--dry-run]"
		short = "Take laserbrain's hooks and MCP server out of Claude Code's settings"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: verb + ` claude merges (or removes) every laserbrain hook — run by this binary's
absolute path, so a PATH without laserbrain cannot silently disable the gate —
and the laserbrain MCP server into Claude Code's settings for a scope:

  project  .claude/settings.json (hooks; enabledMcpjsonServers approves the
           server) and .mcp.json — shared with everyone using the repository
  local    .claude/settings.local.json, and this project's entry in ~/.claude.json
  user     ~/.claude/settings.json, and ~/.claude.json (every project)

Every key already in those files is kept, in its place; our own entries are
replaced in place, so running it again changes no byte. --dry-run prints the
diff and writes nothing. A file that is not a JSON object is refused, with
nothing written. Each file is reported created, updated, removed or
unchanged: uninstall removes a project's .mcp.json left with no servers and
a project settings file left as {} (it configures nothing; ~/.claude.json
and the user's settings stay). --dir is the project (default: the current
directory); it must exist, and a warning says so when it is not the top of
its git repository (Claude Code reads the project settings there).

Only Claude Code is supported: codex and gemini are refused (see the README
for what their documentation shows and why it is not installed yet).`,
		Example: "  laserbrain " + verb + " claude\n  laserbrain " + verb + " claude --scope user --dry-run\n  laserbrain " + verb + " claude --dir ~/src/shop --scope local",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("name the client: laserbrain %s claude", verb)
			}
			return cli.ExactArgs(1)(cmd, args)
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"claude\tClaude Code"}, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "claude":
			case "codex", "gemini":
				return cli.Usagef("%s %s: not supported — laserbrain has not verified that CLI's hook payloads against the real client; see the README", verb, args[0])
			default:
				return cli.Usagef("%s what? Only claude is supported, not %q", verb, args[0])
			}
			self, err := os.Executable()
			if err == nil {
				self, err = filepath.EvalSymlinks(self)
			}
			if err != nil {
				return cli.Failure(fmt.Errorf("cannot find this binary's absolute path: %w", err))
			}
			if p := os.Getenv("LASERBRAIN_INSTALL_SELF"); p != "" {
				self = p // tests install a stable path rather than the test binary's
			}
			dir := opts.dir
			if dir == "" {
				dir = "."
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return cli.Usagef("--dir: %v", err)
			}
			// A mistyped --dir must not install hooks into a new, empty
			// directory and report success.
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return cli.Usagef("--dir %s: not an existing directory", opts.dir)
			}
			if opts.scope != string(install.User) {
				warnNotTopLevel(streams, dir)
			}
			home, err := os.UserHomeDir()
			if err != nil {
				return cli.Failure(err)
			}
			changes, err := install.Claude(install.Options{Scope: install.Scope(opts.scope), Dir: dir, Home: home, Self: self, Remove: remove})
			if err != nil {
				// A bad scope, or a settings file that is not a JSON object:
				// refused, nothing written.
				return cli.Usagef("%v", err)
			}
			changed := 0
			for _, c := range changes {
				if !c.Changed() {
					continue
				}
				changed++
				if opts.dryRun {
					fmt.Fprint(streams.Out, c.Diff())
				}
			}
			if opts.dryRun {
				if changed == 0 {
					fmt.Fprintln(streams.ErrOut, "nothing to change")
				}
				return nil
			}
			if err := install.Apply(changes); err != nil {
				return cli.Failure(err)
			}
			for _, c := range changes {
				fmt.Fprintf(streams.Out, "%s: %s\n", c.Path, c.State())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.scope, "scope", "project", "project, local or user")
	cmd.Flags().StringVar(&opts.dir, "dir", "", "the project directory (default: the current directory)")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the diff and write nothing")
	cli.CompleteFlag(cmd, "scope", cli.Values("project\t.claude/settings.json and .mcp.json", "local\t.claude/settings.local.json", "user\t~/.claude/settings.json"))
	cli.CompleteFlag(cmd, "dir", cli.Dirs)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "not claude, a bad --scope, or a settings file that is not a JSON object (nothing written)"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

// warnNotTopLevel warns when dir is inside a git repository but not its
// top level: Claude Code started at the top would not read settings
// written here.
func warnNotTopLevel(streams *cli.IOStreams, dir string) {
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
		fmt.Fprintf(streams.ErrOut, "laserbrain: warning: %s is not the top of its git repository (%s); Claude Code started there will not read these project settings\n", dir, top)
	}
}
