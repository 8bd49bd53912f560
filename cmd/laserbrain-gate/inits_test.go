package main

import (
	"bytes"
	"os"
	"os/exec"
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
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "HOME="+t.TempDir(), "LASERBRAIN_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(`{"session_id":"s","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":` + strconv.Quote(command) + `}}`)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v\n%s", command, err, stderr.String())
		}
		inits, err := inittrace.Parse(&stderr)
		if err != nil {
			t.Fatal(err)
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
			t.Fatalf("%q: %d laserkit package inits traced; GODEBUG=inittrace=1 unread?\n%s", command, laserkit, stderr.String())
		}
		if over := inittrace.OverModuleBudget(inits); len(over) > 0 {
			t.Errorf("%q: %d of this module's packages allocate at init over %d bytes or %d allocations (build the table on first use or as code):\n\t%s",
				command, len(over), inittrace.MaxModuleBytes, inittrace.MaxModuleAllocs, strings.Join(over, "\n\t"))
		}
	}
}
