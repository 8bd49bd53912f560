package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionStamp builds the gate the way make build does (-ldflags -X)
// and reads the stamped version and commit back from --version.
func TestVersionStamp(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "laserbrain-gate")
	const pkg = "github.com/laserkit/laserkit/internal/version"
	build := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-X "+pkg+".stamp=v9.8.7-test -X "+pkg+".commitStamp=0123456789abcdef", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building laserbrain-gate: %v", err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"laserbrain-gate v9.8.7-test\n", "commit:  0123456789abcdef\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version printed %q, want a line %q", out, want)
		}
	}
}
