// Package versioncmd gives a binary its version command. It stands apart
// from cli because the build it prints names the grammar the laserbrain
// tables were generated from: cli itself must not import generated code, so
// that the generator (gen) can end through cli even while those tables are
// being rewritten.
package versioncmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/version"
)

// KeyStyle is how a binary spells JSON keys: laserbrain keeps the Python
// reference's snake_case, ponder camelCase (deltaVoices, findingId), the
// keys its users and other ports already read.
type KeyStyle int

const (
	SnakeCase KeyStyle = iota
	CamelCase
)

// Add gives root a version command and a --version (-V) flag, both
// printing the build (internal/version); `version --json` prints it as
// JSON in the binary's key style.
func Add(root *cobra.Command, streams *cli.IOStreams, style KeyStyle) {
	var asJSON bool
	printVersion := func() error {
		info := version.Get(root.Name())
		if !asJSON {
			fmt.Fprint(streams.Out, info.Text())
			return nil
		}
		if style == CamelCase {
			return cli.WriteJSON(streams.Out, info.Camel())
		}
		return cli.WriteJSON(streams.Out, info.Snake())
	}
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the version, commit, Go release and grammar of this build",
		Long: `version says which build this is: the module version (stamped by make build,
else what the Go toolchain recorded, else "devel"), the commit it was built
from and whether the tree had uncommitted changes, the Go release and
platform, and the laserbrain grammar (version and content_hash) the
binary's tables were generated from. --version prints the same.`,
		Example: "  " + root.Name() + " version\n  " + root.Name() + " version --json\n  " + root.Name() + " --version",
		Args:    cli.NoArgs,
		GroupID: groupIf(root, cli.GroupMore),
		RunE:    func(*cobra.Command, []string) error { return printVersion() },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build as JSON")
	cli.SetExits(cmd)
	root.AddCommand(cmd)

	var flag bool
	root.Flags().BoolVarP(&flag, "version", "V", false, "print the version (see the version command)")
	next := root.RunE
	root.RunE = func(c *cobra.Command, args []string) error {
		if flag {
			return printVersion()
		}
		return next(c, args)
	}
}

func groupIf(root *cobra.Command, id string) string {
	if root.ContainsGroup(id) {
		return id
	}
	return ""
}
