package testhome

import (
	"fmt"
	"os"
)

// Runner is what TestMain runs: a *testing.M, or a wrapper around one.
type Runner interface{ Run() int }

// M is m run by Main: for a TestMain that hands its tests to another
// runner (testscript.Main), which then runs them in a home of their own.
type M struct{ Runner }

// Run runs the tests through Main.
func (w M) Run() int { return Main(w.Runner) }

// Main runs m with LASERBRAIN_HOME at a fresh directory, removed after; a
// test that wants another home still sets its own. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
func Main(m Runner) int {
	dir, err := os.MkdirTemp("", "laserkit-testhome-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("LASERBRAIN_HOME", dir); err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	return m.Run()
}
