package client

import (
	"os"
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
)

// TestMain widens the gate's analysis budget (test binary only): these
// tests read what the gate decides, not how long it took, and on a loaded
// machine a command's analysis can run past 150 ms of wall time.
func TestMain(m *testing.M) {
	shell.WidenBudgetForTest(shell.TestBudgetFactor)
	os.Exit(m.Run())
}
