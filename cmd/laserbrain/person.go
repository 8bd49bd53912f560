package main

import (
	"fmt"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/confine"
)

// personOnly refuses a person's command — authorize, supervise release,
// install, uninstall, store init and migrate, loop cancel, ui — when this process runs
// inside a supervised agent's process tree, whatever this binary is called,
// wherever it was copied, however it was started (supercode/confine.Where:
// the kernel's confinement, or a supervising laserbrain run or loop among
// its ancestors). Nothing is done, and the message tells the agent to ask
// the user. It is the one place these commands check who runs them.
func personOnly(what string) error {
	where := confine.Where()
	if where == "" {
		return nil
	}
	return cli.Exit(cli.ExitUsage, fmt.Errorf("%s is a person's command, and this process runs inside %s: nothing was done. "+
		"An agent cannot authorize, release, install or change the store for itself; ask the user to run it in their own terminal", what, where))
}
