package loop

import (
	"testing"

	"github.com/laserkit/laserkit/internal/cli"
)

// The statuses SCRIPT sees and the loop ends with are the ones the
// project's exit-code table lists for laserbrain loop, row by row: the
// loop passes SCRIPT's status through as its own.
func TestStatusesAreTheTables(t *testing.T) {
	want := map[string]int{
		"escalated": statusEscalated, "exhausted": statusExhausted, "transport": statusTransport,
		"malformed": statusMalformed, "config": statusConfig, "failure": statusInternal, "refused": statusRefused,
	}
	for name, status := range want {
		found := false
		for _, row := range cli.ExitCodes {
			if row.Name == name && (row.Scope == "" || row.Scope == "laserbrain loop" || row.Scope == "laserbrain loop, laserbrain run") {
				found = true
				if int(row.Code) != status {
					t.Errorf("%s: the loop uses %d, the table says %d", name, status, row.Code)
				}
			}
		}
		if !found {
			t.Errorf("%s: no row of the table for laserbrain loop", name)
		}
	}
}
