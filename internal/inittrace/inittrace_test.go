package inittrace

import (
	"os/exec"
	"strings"
	"testing"
)

// Lines as Go 1.26 prints them under GODEBUG=inittrace=1, between a
// program's own output.
const trace = `init internal/bytealg @0.006 ms, 0 ms clock, 0 bytes, 0 allocs
hello
init github.com/laserkit/laserkit/operator @1.9 ms, 0.010 ms clock, 0 bytes, 0 allocs
init github.com/laserkit/laserkit/laserbrain @2.0 ms, 0.046 ms clock, 12160 bytes, 56 allocs
init github.com/laserkit/laserkit/supercode/hook @2.1 ms, 0 ms clock, 240 bytes, 9 allocs
init unicode @1.0 ms, 0.028 ms clock, 13280 bytes, 20 allocs
`

func TestParseAndBudget(t *testing.T) {
	inits, err := Parse(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if len(inits) != 5 || inits[2] != (Init{Package: "github.com/laserkit/laserkit/laserbrain", Bytes: 12160, Allocs: 56}) {
		t.Fatalf("parsed %+v", inits)
	}
	over := OverModuleBudget(inits)
	want := []string{"github.com/laserkit/laserkit/laserbrain: 12160 bytes, 56 allocations", "github.com/laserkit/laserkit/supercode/hook: 240 bytes, 9 allocations"}
	if strings.Join(over, "\n") != strings.Join(want, "\n") {
		t.Fatalf("over the budget: %q, want %q (unicode is not this module's)", over, want)
	}
}

// A command whose Env is unset keeps this process's environment: the
// trace's variable is added to it, not put in its place.
func TestRunKeepsTheEnvironment(t *testing.T) {
	t.Setenv("INITTRACE_KEPT", "yes")
	_, out, err := Run(exec.Command("/bin/sh", "-c", `[ "$INITTRACE_KEPT" = yes ] && [ "$GODEBUG" = inittrace=1 ] || { echo "env lost: $INITTRACE_KEPT $GODEBUG" >&2; exit 3; }`))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
