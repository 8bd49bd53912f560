package main

import (
	"bufio"
	"bytes"
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
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			m := inittraceLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			packages++
			n, _ := strconv.Atoi(m[2])
			total += n
			if n > maxInitBytesPerPackage {
				t.Errorf("%v: %s allocates %d bytes (%s allocations) at init, over %d: do it on first use", args, m[1], n, m[3], maxInitBytesPerPackage)
			}
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
