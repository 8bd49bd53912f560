package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/supercode/client"
)

// BenchmarkGuardedHook is `make bench-guard`: what the fail-closed guard
// around the installed hook command costs (client.HookCommand: run the
// program with --ok-status, take only that status for its answer, deny
// otherwise). Whole processes, medians, interleaved in a fresh order each
// round: /bin/true; the bare gate, as a client that runs the program
// itself would; the unguarded command line through sh -c, as clients run
// hook commands; the guarded one; and the guarded one with the gate gone
// (the denial). It fails when the guard costs more than 20% over the
// unguarded command line: it adds one shell builtin and the shell's wait
// for the program, the processes the same.
func BenchmarkGuardedHook(b *testing.B) {
	gate := buildGate(b)
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	self := filepath.Join(filepath.Dir(gate), "laserbrain") // beside the gate: the guard targets the gate
	gone := filepath.Join(b.TempDir(), "laserbrain")        // no gate beside it
	guarded := client.HookCommand(self, client.Claude, client.PreToolUse)
	cs := []*contender{
		{name: "true", argv: []string{"/bin/true"}},
		{name: "gate-bare", argv: []string{gate}},
		{name: "sh-gate-unguarded", argv: []string{"/bin/sh", "-c", shellquote.Word(gate)}},
		{name: "sh-gate-guarded", argv: []string{"/bin/sh", "-c", guarded}},
		{name: "sh-guard-gate-missing", argv: []string{"/bin/sh", "-c", client.HookCommand(gone, client.Claude, client.PreToolUse)}},
	}
	env := quietEnv()
	for _, c := range cs {
		c.event, c.env = hookEvents[0].event, env
	}
	eventFiles(b, cs)
	rounds(b, cs, 3, func(c *contender, _ int) {
		_, _ = c.runOnce(b) // the missing gate denies: exit 2
	})
	report := medians(b, cs, fmt.Sprintf("medians over %d runs each:", len(cs[0].times)))
	bare, unguarded, withGuard := median(cs[1].times), median(cs[2].times), median(cs[3].times)
	report += fmt.Sprintf("  the guard: %.2f× the unguarded command line, %.2f× the bare gate\n",
		float64(withGuard)/float64(unguarded), float64(withGuard)/float64(bare))
	b.ReportMetric(float64(withGuard)/float64(unguarded), "x-unguarded")
	b.ReportMetric(float64(withGuard)/float64(bare), "x-bare")
	b.Log(report)
	if float64(withGuard) > 1.2*float64(unguarded) {
		b.Errorf("the guarded hook's median %v is over 1.2× the unguarded command line's %v", withGuard, unguarded)
	}
}
