package inittrace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Init is one package's init as traced.
type Init struct {
	Package       string
	Bytes, Allocs int
}

var line = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// Run runs cmd, whose Stderr is not set, with GODEBUG=inittrace=1 added
// to its environment (its Env, else this process's), and returns the inits it
// traced and all it wrote to standard error (to show where the trace is
// too thin to trust). A program that fails is an error, with that output.
func Run(cmd *exec.Cmd) ([]Init, string, error) {
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, stderr.String(), fmt.Errorf("%v: %w\n%s", cmd.Args, err, stderr.String())
	}
	out := stderr.String()
	inits, err := Parse(&stderr)
	return inits, out, err
}

// Parse reads the traced inits from r, skipping every other line (the
// program's own output).
func Parse(r io.Reader) ([]Init, error) {
	var out []Init
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		bytes, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("inittrace: %q: %w", sc.Text(), err)
		}
		allocs, err := strconv.Atoi(m[3])
		if err != nil {
			return nil, fmt.Errorf("inittrace: %q: %w", sc.Text(), err)
		}
		out = append(out, Init{Package: m[1], Bytes: bytes, Allocs: allocs})
	}
	return out, sc.Err()
}

// The budget of this module's own packages. Nothing a hook needs has to
// exist before main, so their inits should come to (almost) nothing: a
// table is generated as code or static data, or built on first use. A map
// literal, an init() filling a table, a sync.OnceValue package var or a
// fmt.Errorf at package level each allocate here, in every process; the
// margin is for an errors.New or two, which the linker cannot lay out.
const (
	ModulePrefix    = "github.com/laserkit/laserkit/"
	MaxModuleBytes  = 1 << 10
	MaxModuleAllocs = 8
)

// OverModuleBudget describes each of this module's packages among inits
// whose init allocates over the budget, one line each.
func OverModuleBudget(inits []Init) []string {
	var over []string
	for _, in := range inits {
		if strings.HasPrefix(in.Package, ModulePrefix) && (in.Bytes > MaxModuleBytes || in.Allocs > MaxModuleAllocs) {
			over = append(over, fmt.Sprintf("%s: %d bytes, %d allocations", in.Package, in.Bytes, in.Allocs))
		}
	}
	return over
}
