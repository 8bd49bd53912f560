package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/backend"
)

// Every command opens its stores through the factory it was built with:
// a check saved through one factory's stores is listed by that factory's
// runs and judged by its judge-run, not by another's, and the home the
// environment names is never touched.
func TestCommandsOpenTheFactorysStores(t *testing.T) {
	envHome := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", envHome)
	t.Setenv("LASERBRAIN_STORE", "")
	t.Setenv("LASERBRAIN_RUN", "")
	factoryAt := func(home string) (*Factory, *bytes.Buffer) {
		var out bytes.Buffer
		f := newFactory(&cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out})
		f.StoreConfig = func() (backend.Config, error) { return backend.Parse("local", home) }
		return f, &out
	}
	homeA, homeB := t.TempDir(), t.TempDir()
	a, outA := factoryAt(homeA)
	if code, _ := runCmd(a, []string{"check", "--run", "release-1", "--new-run", "--goal", "cut the release", "--distance", "4"}); code != 0 {
		t.Fatalf("check through factory A: exit %d\n%s", code, outA)
	}
	outA.Reset()
	if code, _ := runCmd(a, []string{"runs", "--all"}); code != 0 || !strings.Contains(outA.String(), "release-1") {
		t.Errorf("runs through factory A: exit %d, want release-1 listed:\n%s", code, outA)
	}
	b, outB := factoryAt(homeB)
	if code, _ := runCmd(b, []string{"judge-run", "--run", "release-1"}); code != int(cli.ExitUsage) {
		t.Errorf("judge-run through factory B found A's run: exit %d\n%s", code, outB)
	}
	if entries, _ := os.ReadDir(envHome); len(entries) != 0 {
		t.Errorf("the environment's home was written: %v", entries)
	}
	if entries, _ := os.ReadDir(homeB); len(entries) != 0 {
		t.Errorf("a reading command wrote factory B's home: %v", entries)
	}
	if entries, _ := os.ReadDir(homeA); len(entries) == 0 {
		t.Errorf("the check left nothing in factory A's home")
	}
}
