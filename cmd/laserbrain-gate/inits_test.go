package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxLaserkitInitBytes is what one of laserkit's own packages may allocate
// in its init in the gate. The gate runs as a process per tool call, so a
// table built at init (a map literal, a closure stored in a package var) is
// paid on every call whether or not the call looks at it; laserkit's tables
// are switches, static arrays or built on first use instead. GODEBUG
// counts the bytes exactly (its clock times are noise on a shared
// machine), so the budget can be tight: what is left is a handful of
// small values the runtime cannot lay out statically.
const maxLaserkitInitBytes = 1 << 10

var initAllocLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// TestGateInitsAllocateLittle runs the built gate (as make build builds
// it) on the calls an agent makes most, with GODEBUG=inittrace=1, and
// names every laserkit package whose init allocates over the budget.
func TestGateInitsAllocateLittle(t *testing.T) {
	bin := buildGate(t)
	over := map[string]string{}
	for _, command := range []string{"ls", "git status", "go test ./..."} {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "HOME="+t.TempDir(), "LASERBRAIN_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(`{"session_id":"s","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":` + strconv.Quote(command) + `}}`)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v\n%s", command, err, stderr.String())
		}
		laserkit := 0
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			m := initAllocLine.FindStringSubmatch(sc.Text())
			if m == nil || !strings.HasPrefix(m[1], "github.com/laserkit/laserkit/") {
				continue
			}
			laserkit++
			if n, _ := strconv.Atoi(m[2]); n > maxLaserkitInitBytes {
				over[m[1]] = m[2] + " bytes, " + m[3] + " allocs"
			}
		}
		// The gate links operator, hook, client and more: finding none
		// means the trace went unread, not that the inits are free.
		if laserkit < 3 {
			t.Fatalf("%q: %d laserkit package inits traced; GODEBUG=inittrace=1 unread?\n%s", command, laserkit, stderr.String())
		}
	}
	names := make([]string, 0, len(over))
	for name := range over {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Errorf("%s allocates %s at init, over %d bytes: build its tables on first use or as code", name, over[name], maxLaserkitInitBytes)
	}
}
