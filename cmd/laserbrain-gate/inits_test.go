package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/inittrace"
)

// TestGateInitsAllocateLittle runs the built gate (as make build builds
// it) on the calls an agent makes most, with GODEBUG=inittrace=1, and
// names every laserkit package whose init allocates over the module's
// budget (inittrace.OverModuleBudget). The gate runs as a process per tool
// call, so a table built at init is paid on every call whether or not the
// call looks at it.
func TestGateInitsAllocateLittle(t *testing.T) {
	bin := buildGate(t)
	for _, command := range []string{"ls", "git status", "go test ./..."} {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "LASERBRAIN_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(`{"session_id":"s","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":` + strconv.Quote(command) + `}}`)
		inits, stderr, err := inittrace.Run(cmd)
		if err != nil {
			t.Fatalf("%q: %v", command, err)
		}
		// The gate links operator, hook, client and more: finding none
		// means the trace went unread, not that the inits are free.
		laserkit := 0
		for _, in := range inits {
			if strings.HasPrefix(in.Package, inittrace.ModulePrefix) {
				laserkit++
			}
		}
		if laserkit < 3 {
			t.Fatalf("%q: %d laserkit package inits traced; GODEBUG=inittrace=1 unread?\n%s", command, laserkit, stderr)
		}
		if over := inittrace.OverModuleBudget(inits); len(over) > 0 {
			t.Errorf("%q: %d of this module's packages allocate at init over %d bytes or %d allocations (build the table on first use or as code):\n\t%s",
				command, len(over), inittrace.MaxModuleBytes, inittrace.MaxModuleAllocs, strings.Join(over, "\n\t"))
		}
	}
}

// TestProgramsLinkNoTestHooks reads the symbols of laserbrain-gate and
// laserbrain, as built (go tool nm): neither holds the gate's test-only
// budget widening (only tests call it, so nothing a program runs can
// widen the budget), nor anything of the testing package, whose init and
// flags a process per tool call would pay for nothing.
func TestProgramsLinkNoTestHooks(t *testing.T) {
	for _, bin := range []string{buildGate(t), buildLaserbrain(t)} {
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		found, symbols := []string{}, 0
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			symbols++
			if name := f[len(f)-1]; strings.HasPrefix(name, "testing.") || strings.HasSuffix(name, "operator/shell.WidenBudgetForTest") {
				found = append(found, name)
			}
		}
		if symbols < 1000 {
			t.Fatalf("go tool nm %s listed %d symbols: unread?", bin, symbols)
		}
		if len(found) > 0 {
			t.Errorf("%s links what only tests may use:\n\t%s", filepath.Base(bin), strings.Join(found, "\n\t"))
		}
	}
}
