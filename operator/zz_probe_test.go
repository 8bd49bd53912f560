package operator

import (
	"os"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	b, _ := os.ReadFile("/tmp/gate-probe.txt")
	for _, c := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		an := Analyze(c, "")
		u := Decide(an, Unattended, RunState{Read: true}, Policy{})
		a := Decide(an, Attended, RunState{Read: true}, Policy{})
		note := ""
		if u.Context != "" { note = "+note" }
		t.Logf("%-5s%-6s %-5s %-60s %s", u.Action, note, a.Action, c, u.Rule)
	}
}
