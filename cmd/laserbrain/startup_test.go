package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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

// This module's own packages are held much tighter: nothing a hook needs
// has to exist before main, so their inits should come to (almost) nothing.
// A table is generated as code or static data, or built on first use; a
// map literal, an init() filling a table, a sync.OnceValue package var or
// a fmt.Errorf at package level each allocate here, in every process. The
// margin is for an errors.New or two, which the linker cannot lay out.
const (
	laserkitPrefix        = "github.com/laserkit/laserkit/"
	maxLaserkitInitBytes  = 1 << 10
	maxLaserkitInitAllocs = 8
)

var inittraceLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// TestStartupInitsAllocateLittle runs the built binary as a client runs a
// hook, and as --version, and holds every package init to the budget.
func TestStartupInitsAllocateLittle(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "laserbrain")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"hook", "pre-tool-use"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "LASERBRAIN_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(`{"session_id":"s","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"go test ./..."}}`)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		total, packages := 0, 0
		var over []string // this module's packages over their budget
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			m := inittraceLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			packages++
			n, _ := strconv.Atoi(m[2])
			allocs, _ := strconv.Atoi(m[3])
			total += n
			if n > maxInitBytesPerPackage {
				t.Errorf("%v: %s allocates %d bytes (%d allocations) at init, over %d: do it on first use", args, m[1], n, allocs, maxInitBytesPerPackage)
			}
			if strings.HasPrefix(m[1], laserkitPrefix) && (n > maxLaserkitInitBytes || allocs > maxLaserkitInitAllocs) {
				over = append(over, fmt.Sprintf("%s: %d bytes, %d allocations", m[1], n, allocs))
			}
		}
		if len(over) > 0 {
			t.Errorf("%v: %d of this module's packages allocate at init over %d bytes or %d allocations (generate the table as code, or build it on first use):\n\t%s",
				args, len(over), maxLaserkitInitBytes, maxLaserkitInitAllocs, strings.Join(over, "\n\t"))
		}
		if packages < 50 {
			t.Fatalf("%v: %d package inits traced; want laserbrain's (GODEBUG=inittrace=1 unread?)\n%s", args, packages, stderr.String())
		}
		if total > maxInitBytes {
			t.Errorf("%v: the package inits allocate %d bytes together, over %d", args, total, maxInitBytes)
		}
		t.Logf("%v: %d package inits, %d bytes", args, packages, total)
	}
}
