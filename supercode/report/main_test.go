package report

import (
	"os"
	"testing"

	"github.com/laserkit/laserkit/internal/testhome"
)

// TestMain keeps what the tests' supervisors write (the machine's halts,
// the link) out of the user's laserbrain home.
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
