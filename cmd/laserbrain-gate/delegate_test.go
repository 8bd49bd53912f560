package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/proctest"
)

// With LASERBRAIN_STORE naming a database, the lean gate decides what it
// can from the command alone and hands an event that needs the run to the
// laserbrain binary beside it (which links the driver): here the database
// is out of reach, so laserbrain's answer is the refusal with the reason —
// the gate alone could not have given it. Without laserbrain beside it,
// the gate refuses rather than read the wrong store.
func TestGateHandsDatabaseEventsToLaserbrain(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "laserbrain-gate")
	for out, pkg := range map[string]string{gate: ".", filepath.Join(dir, "laserbrain"): "../laserbrain"} {
		build := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, b)
		}
	}
	env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "LASERBRAIN_STORE=postgres://ann:s3cr3t@127.0.0.1:1/fleet?connect_timeout=2",
		"LASERBRAIN_RUN=", "LASERBRAIN_FLEET=f")
	answer := func(bin, command string) (string, string, int) {
		cmd := exec.Command(bin)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_input":{"command":"` + command + `"}}`)
		return proctest.Run(t, cmd)
	}
	if out, errOut, code := answer(gate, "ls -la"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("a reversible command: exit %d %q %q", code, out, errOut)
	}
	_, errOut, code := answer(gate, "git push --force origin main")
	if code != 2 || !strings.Contains(errOut, "laserbrain: cannot read the run: cannot reach the laserbrain store at postgres://ann:***@127.0.0.1:1/fleet") || strings.Contains(errOut, "s3cr3t") {
		t.Fatalf("force-push through the gate: exit %d, %s", code, errOut)
	}
	stopHookServer(t, filepath.Join(dir, "laserbrain"), env)
	os.Remove(filepath.Join(dir, "laserbrain"))
	_, errOut, code = answer(gate, "git push --force origin main")
	if code != 2 || !strings.Contains(errOut, "guard error: LASERBRAIN_STORE names a store this binary does not read, and there is no laserbrain beside") {
		t.Fatalf("without laserbrain beside the gate: exit %d, %s", code, errOut)
	}
}
