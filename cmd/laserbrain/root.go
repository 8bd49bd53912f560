package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/cli/versioncmd"
)

// The root help's command groups.
const (
	groupDrift    = "drift"
	groupAgents   = "agents"
	groupGate     = "gate"
	groupGrammar  = "grammar"
	groupSettings = "settings"
)

// commands are laserbrain's commands, by group, in the help's order: each
// one's name (the first word of its Use) and how it is built. The tree is
// built from this table alone, whole or (newRootCmdFor) in part.
var commands = []struct {
	group, name string
	build       func(*Factory) *cobra.Command
}{
	{groupDrift, "check", cmdOf(newCheckCmd)},
	{groupDrift, "history", cmdOf(newHistoryCmd)},
	{groupDrift, "verify", cmdOf(newVerifyCmd)},
	{groupDrift, "judge-run", cmdOf(newJudgeRunCmd)},
	{groupDrift, "runs", cmdOf(newRunsCmd)},
	{groupDrift, "coverage", cmdOf(newCoverageCmd)},
	{groupDrift, "report", cmdOf(newReportCmd)},
	{groupDrift, "read", cmdOf(newReadCmd)},
	{groupDrift, "demo", cmdOf(newDemoCmd)},
	{groupAgents, "run", cmdOf(newRunCmd)},
	{groupAgents, "loop", cmdOf(newLoopCmd)},
	{groupAgents, "supervise", cmdOf(newSuperviseCmd)},
	{groupAgents, "undo", cmdOf(newUndoCmd)},
	{groupAgents, "authorize", cmdOf(newAuthorizeCmd)},
	{groupAgents, "act", cmdOf(newActCmd)},
	{groupAgents, "ui", cmdOf(newUICmd)},
	{groupAgents, "hook", newHookCmd},
	{groupAgents, "mcp", cmdOf(newMCPCmd)},
	{groupAgents, "attention", cmdOf(newAttentionCmd)},
	{groupAgents, "ponder", cmdOf(newPonderCmd)},
	{groupGate, "classify", cmdOf(newClassifyCmd)},
	{groupGate, "lint", cmdOf(newLintCmd)},
	{groupGate, "shelf", cmdOf(newShelfCmd)},
	{groupGrammar, "grammar", newGrammarCmd},
	{groupGrammar, "vectors", newVectorsCmd},
	{groupSettings, "install", func(f *Factory) *cobra.Command { return newInstallCmd(f, false, nil) }},
	{groupSettings, "uninstall", func(f *Factory) *cobra.Command { return newInstallCmd(f, true, nil) }},
	{groupSettings, "doctor", cmdOf(newDoctorCmd)},
	{groupSettings, "store", newStoreCmd},
}

// cmdOf is a command as the tree holds it: running its own run function.
// (A test passes a run function of its own, to read the options parsed.)
func cmdOf[O any](build func(*Factory, func(*O) error) *cobra.Command) func(*Factory) *cobra.Command {
	return func(f *Factory) *cobra.Command { return build(f, nil) }
}

// newRootCmd is the whole tree: what help, completion and every command
// but the fast ones below run in.
func newRootCmd(f *Factory) *cobra.Command {
	return newRootCmdFor(f, nil)
}

// newRootCmdFor is the tree a call with args runs in. A client's hook
// (`laserbrain hook EVENT`, a process per tool call) and `--version` get
// the root with only the command they run: building the other two dozen
// commands, their flags and help texts is most of what such a call would
// otherwise do. The command they get is the same one the whole tree holds
// (TestFastTreeAgreesWithWholeTree), and the same cli.Run maps its errors.
func newRootCmdFor(f *Factory, args []string) *cobra.Command {
	only, fast := fastCommand(args)
	root := &cobra.Command{
		Use:   "laserbrain",
		Short: "Measure agent drift against a frozen ground, and gate irreversible actions",
		Long: `laserbrain reads an agent's spelled state (goal, progress, distance),
writes its laserscore, measures drift (Φ) against the run's frozen ground
and returns one of nine verdicts. It supervises agents through their
clients' hooks (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, Cline,
Copilot CLI) and its MCP server, watches the agents and ponder sessions working on
one repository (supervise), runs the verified fixpoint loop, gates
irreversible and outward shell commands, lints workflow methods and checks
test vectors against the Python reference.

Runs live in $LASERBRAIN_HOME (default: the user config directory's
laserbrain/), or in the PostgreSQL database LASERBRAIN_STORE names (one
fleet across machines; see 'laserbrain store'). Every command's help lists
its exit codes; 'laserbrain help exit-codes' prints the table laserbrain
and ponder share.`,
		Example: `  laserbrain check --goal "add a CSV importer" --distance 7
  laserbrain install claude
  laserbrain run -- claude "fix the flaky test"
  laserbrain classify -- git push --force origin main`,
		Args: cli.NoArgs,
		// Without a subcommand, print help (exit 0) rather than guess.
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.AddGroup(
		&cobra.Group{ID: groupDrift, Title: "Drift checks:"},
		&cobra.Group{ID: groupAgents, Title: "Supervising agents:"},
		&cobra.Group{ID: groupGate, Title: "The gate and methods:"},
		&cobra.Group{ID: groupGrammar, Title: "Grammar and test vectors:"},
		&cobra.Group{ID: groupSettings, Title: "Set-up:"},
		&cobra.Group{ID: cli.GroupMore, Title: "More:"},
	)
	for _, c := range commands {
		if !fast || c.name == only {
			cli.AddToGroup(root, c.group, c.build(f))
		}
	}
	versioncmd.Add(root, f.IOStreams, versioncmd.SnakeCase)
	cli.SetExits(root)
	return root
}

// fastCommand says whether args are a call that starts fast, and the one
// command it runs ("" for the root's own --version): exactly `--version`
// or `-V`, or `hook` and its arguments.
func fastCommand(args []string) (only string, fast bool) {
	switch {
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-V"):
		return "", true
	case len(args) > 0 && args[0] == "hook":
		return "hook", true
	}
	return "", false
}
