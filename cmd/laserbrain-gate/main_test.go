package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testhome"
	"github.com/laserkit/laserkit/operator/shell"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as laserbrain-gate inside the txtar
// scripts of testdata/script, so they drive the real command.
func TestMain(m *testing.M) {
	// In every process of the test binary, the scripts' laserbrain too: a
	// script not about the analysis budget must not meet it on a loaded
	// machine (operator.WidenBudgetForTest).
	shell.WidenBudgetForTest(shell.TestBudgetFactor)
	testscript.Main(testhome.M{Runner: m}, map[string]func(){
		"laserbrain-gate": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		pairDriverName:    func() { os.Exit(pairDriver()) },
		undoDriverName:    func() { os.Exit(undoDriver()) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// Each script gets its own laserbrain home, never the user's.
			env.Setenv("LASERBRAIN_HOME", env.WorkDir+"/.laserbrain")
			return nil
		},
	})
}

// heavyPackages must never be linked into the gate: each costs milliseconds
// of package initialisation on every tool call an agent makes.
var heavyPackages = []string{
	"github.com/santhosh-tekuri/jsonschema", "github.com/spf13/cobra", "github.com/jackc/pgx",
	"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go", "github.com/laserkit/laserkit/grammar/schema",
	"github.com/laserkit/laserkit/supercode/mcpserver", "github.com/laserkit/laserkit/ponder", "net/http", "encoding/gob",
	"text/template", "html/template", "database/sql",
}

// maxMappedBytes bounds what the built gate maps from its file at each
// start (its loadable segments: code, read-only data and pclntab, data):
// the pages a tool call's process faults in grow with it, and symbols and
// debug information, which make build strips (-s -w), are not counted.
const maxMappedBytes = 8 << 20

// TestGateBinaryStaysSmall builds the gate as the tests do and sums its
// loadable segments: a package that joins the gate's link shows here as
// megabytes before it shows in a whole-process benchmark.
func TestGateBinaryStaysSmall(t *testing.T) {
	f, err := elf.Open(buildGate(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mapped uint64
	loads := 0
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			mapped += p.Filesz
			loads++
		}
	}
	if loads == 0 {
		t.Fatal("the built gate has no loadable segment: not an ELF program?")
	}
	t.Logf("laserbrain-gate maps %.2f MB from its file at start (%d segments)", float64(mapped)/(1<<20), loads)
	if mapped > maxMappedBytes {
		t.Errorf("laserbrain-gate maps %.2f MB from its file, over %d MB: something large joined the gate's link (go list -deps ./cmd/laserbrain-gate; go tool nm -size -sort size)",
			float64(mapped)/(1<<20), maxMappedBytes>>20)
	}
}

// TestGateLinksLean guards the gate's start-up: it links none of the heavy
// packages, and the package initialisation of the built binary
// (GODEBUG=inittrace=1, the fastest of several runs) stays under 1 ms.
func TestGateLinksLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range heavyPackages {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("laserbrain-gate links %s: keep the hook's binary lean (see main.go)", dep)
			}
		}
	}
	bin := buildGate(t)
	best, worst := initCost(t, bin)
	t.Logf("package init of laserbrain-gate: %v (fastest of 7 runs); slowest package: %s", best, worst)
	if best > time.Millisecond {
		t.Errorf("package initialisation takes %v (over 1 ms); slowest: %s — make it lazy", best, worst)
	}
}

var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock`)

// initCost runs the binary with inittrace and sums the init clock times;
// it returns the smallest sum of several runs and the slowest package of
// that run.
func initCost(t testing.TB, bin string) (time.Duration, string) {
	best := time.Hour
	slowest := ""
	for i := 0; i < 7; i++ {
		c := exec.Command(bin)
		c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		c.Stdin = strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		var sum time.Duration
		var top time.Duration
		name := ""
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			m := initLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			ms, _ := strconv.ParseFloat(m[2], 64)
			d := time.Duration(ms * float64(time.Millisecond))
			sum += d
			if d > top {
				top, name = d, m[1]
			}
		}
		if sum < best {
			best, slowest = sum, name+" "+top.String()
		}
	}
	return best, slowest
}

// buildGate builds the binary as `make build` does (static, trimmed).
func buildGate(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "laserbrain-gate")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building laserbrain-gate: %v", err)
	}
	return bin
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
