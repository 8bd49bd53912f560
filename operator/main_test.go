package operator

import (
	"os"
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
)

// TestMain widens the analysis's time budget: on a loaded machine a
// command that takes milliseconds of work can take longer than the budget
// in wall time, and a test of what the gate answers would see "analysis
// took too long" instead. The tests about the budget are the shell
// model's own.
func TestMain(m *testing.M) {
	shell.WidenBudgetForTest(shell.TestBudgetFactor)
	os.Exit(m.Run())
}
