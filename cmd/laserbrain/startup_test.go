package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/inittrace"
)

// The start-up budget of a laserbrain process, in what its package inits
// allocate (GODEBUG=inittrace=1 counts bytes exactly, unlike its clock
// times): a hook runs as a process per tool call, so work at init that a
// call does not need (a schema compiled, templates parsed, a table built)
// is paid on every one. The drafts' meta-schemas jsonschema v5 compiles at
// init (1 MB) and the report page's templates (150 KB) are each well over.
const (
	maxInitBytesPerPackage = 64 << 10
	maxInitBytes           = 512 << 10
)

// TestStartupInitsAllocateLittle runs the built binary as a client runs a
// hook, and as --version, and holds every package init to the budget.
func TestStartupInitsAllocateLittle(t *testing.T) {
	bin := laserbrainBinary(t)
	for _, args := range [][]string{{"--version"}, {"hook", "pre-tool-use"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(`{"session_id":"s","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"go test ./..."}}`)
		inits, stderr, err := inittrace.Run(cmd)
		if err != nil {
			t.Fatal(err)
		}
		total, packages := 0, len(inits)
		for _, in := range inits {
			total += in.Bytes
			if in.Bytes > maxInitBytesPerPackage {
				t.Errorf("%v: %s allocates %d bytes (%d allocations) at init, over %d: do it on first use", args, in.Package, in.Bytes, in.Allocs, maxInitBytesPerPackage)
			}
		}
		if over := inittrace.OverModuleBudget(inits); len(over) > 0 {
			t.Errorf("%v: %d of this module's packages allocate at init over %d bytes or %d allocations (generate the table as code, or build it on first use):\n\t%s",
				args, len(over), inittrace.MaxModuleBytes, inittrace.MaxModuleAllocs, strings.Join(over, "\n\t"))
		}
		if packages < 50 {
			t.Fatalf("%v: %d package inits traced; want laserbrain's (GODEBUG=inittrace=1 unread?)\n%s", args, packages, stderr)
		}
		if total > maxInitBytes {
			t.Errorf("%v: the package inits allocate %d bytes together, over %d", args, total, maxInitBytes)
		}
		t.Logf("%v: %d package inits, %d bytes", args, packages, total)
	}
}
