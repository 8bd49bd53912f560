package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// An agent confined by laserbrain run streams its checks: the broker
// answers check --stream in the run's own process, a verdict per line on
// the agent's run, and a line naming another run is refused on its own
// line while the stream goes on. The run then holds the checks the stream
// answered after its ground, and no other run was made.
func TestStreamUnderRunChecksItsOwnRun(t *testing.T) {
	lb := laserbrainBinary(t)
	home := t.TempDir()
	dir := t.TempDir()
	lines := strings.Join([]string{
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":8}`,
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":6}`,
		`{"run":"someone-else","goal":"add a CSV importer to the admin panel","progress":"advancing","distance":5}`,
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":4}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `echo "broker=${LASERBRAIN_BROKER:+set}"; ` + lb + ` check --stream < in.jsonl > out.jsonl; echo "stream exit $?"`
	cmd := exec.Command(lb, "run", "--agent", "streamer", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = streamEnv(home)
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "broker=set") {
		testenv.SkipOrFail(t, "the agent was not confined here (no broker), so nothing was handed over:\n%s", out)
	}
	if err != nil {
		t.Fatalf("laserbrain run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stream exit 2") {
		t.Errorf("the stream with a refused line did not exit 2 (a bad line):\n%s", out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	answers := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(answers) != 4 {
		t.Fatalf("%d answers for 4 lines:\n%s", len(answers), got)
	}
	for i, a := range answers {
		refused := strings.Contains(a, `"error":`)
		if refused != (i == 2) {
			t.Errorf("line %d answered %s", i+1, a)
		}
	}
	if !strings.Contains(answers[2], "only its own run") || !strings.Contains(answers[2], `"line":3`) {
		t.Errorf("the line on another run: %s", answers[2])
	}
	// The run's --goal is its first check (its ground); the stream's
	// three answered checks follow.
	if m := regexp.MustCompile(`exit 0, (\d+) checks?`).FindStringSubmatch(string(out)); m == nil || m[1] != "4" {
		t.Errorf("the run does not hold its ground and the 3 checks answered:\n%s", out)
	}
	for _, name := range []string{"someone-else.run", "someone-else.json"} {
		if _, err := os.Stat(filepath.Join(home, "fleet", "runs", name)); err == nil {
			t.Errorf("the refused line made a run (%s)", name)
		}
	}
}
