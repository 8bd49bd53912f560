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
