// Package testhome keeps a test binary's laserbrain state out of the
// user's. A hook a test answers, a halt it reads or a fleet it opens
// without naming a home would otherwise write under the user's config
// directory (machine.json, hook-errors.log, runs), or read what is there.
package testhome

import (
	"fmt"
	"os"
	"testing"
)

// Main runs m with LASERBRAIN_HOME at a fresh directory, removed after; a
// test that wants another home still sets its own. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
func Main(m *testing.M) int {
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
