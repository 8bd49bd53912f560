// Package skipper is make test's subject in internal/testenv's tests: one
// test that skips for a missing tool, one that passes, and one that fails
// when SKIPPER_FAIL is set. It lives under testdata, so ./... leaves it out.
package skipper

import (
	"os"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

func TestNeedsTheFrobnicator(t *testing.T) {
	testenv.SkipOrFail(t, "the frobnicator is not on PATH (apt-get install frobnicator)")
}

func TestAlsoNeedsIt(t *testing.T) {
	testenv.SkipOrFail(t, "the frobnicator is not on PATH (apt-get install frobnicator)")
}

func TestNeedsAServer(t *testing.T) {
	t.Run("case", func(t *testing.T) { testenv.SkipOrFail(t, "no server") })
}

func TestRuns(t *testing.T) {
	if os.Getenv("SKIPPER_FAIL") != "" {
		t.Fatal("failing as asked")
	}
}
