package shell

import (
	"os"
	"testing"
)

// TestMain widens the analysis's time budget for every test that is not
// about it: on a loaded machine a command that takes milliseconds of work
// can take longer than the 150 ms budget in wall time, and a test of what
// the gate reads would see "analysis took too long" instead. The tests
// and benchmarks about the budget run under productionLimits or cpuLimits
// (analyzeUnder), with the production match timeout.
func TestMain(m *testing.M) {
	WidenBudgetForTest(TestBudgetFactor)
	os.Exit(m.Run())
}
