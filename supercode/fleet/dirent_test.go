package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnyHaltInForceReadsTheWholeDirectory checks the halts directory read
// on real directories: none, only names being written (a leading dot),
// such names filling many reads before one halt, and a file where the
// directory should be (an error, not "no halt": the gate refuses then).
func TestAnyHaltInForceReadsTheWholeDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := OpenLocalReader(dir)
	active := filepath.Join(dir, "halts", "active")
	check := func(what string, want bool) {
		t.Helper()
		got, err := l.AnyHaltInForce(ctx)
		if err != nil || got != want {
			t.Fatalf("%s: AnyHaltInForce = %v, %v; want %v", what, got, err, want)
		}
	}
	check("no directory", false)
	if err := os.MkdirAll(active, 0o755); err != nil {
		t.Fatal(err)
	}
	check("empty", false)
	// Names long enough that they take many directory reads.
	for i := range 300 {
		name := fmt.Sprintf(".%03d-%s", i, strings.Repeat("w", 200))
		if err := os.WriteFile(filepath.Join(active, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check("only names being written", false)
	if err := os.WriteFile(filepath.Join(active, "zz-"+strings.Repeat("h", 200)), []byte("halt"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("a halt among them", true)

	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "halts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "halts", "active"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := OpenLocalReader(other).AnyHaltInForce(ctx); err == nil {
		t.Fatalf("halts/active a file: AnyHaltInForce = %v, nil; want an error", got)
	}
}
