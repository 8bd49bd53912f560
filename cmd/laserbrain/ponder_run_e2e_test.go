package main

// A ponder agent under laserbrain run: behind the kernel's boundary the
// laserbrain home (and, with it, the fleet's messages) is read-only to the
// agent's tree, so its ponder hands each command to the run's broker. The
// broker hands out what the supervisor said to the session and runs ponder
// confined as the agent is, but for .ponder.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// TestPonderUnderRunReadsTheSupervisor: a message the supervisor queued
// for ponder:<slug> is shown by the agent's first ponder command, once,
// and marked delivered in the store; no command warns of a read-only file
// system; the session takes the agent's records (written by the
// ponder the broker ran); and neither the agent nor the ponder the broker
// runs for it (report --html aimed at it) can overwrite the ponder the run
// holds: the kernel refuses both.
func TestPonderUnderRunReadsTheSupervisor(t *testing.T) {
	lb, _ := confinedBinaries(t)
	pdata, err := os.ReadFile(filepath.Join(ponderBinary(t), "ponder"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(lb)
	if err := os.WriteFile(filepath.Join(bin, "ponder"), pdata, 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	for _, d := range []string{repo, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lbHome := filepath.Join(home, "lb")
	env := append(os.Environ(), "HOME="+home, "LASERBRAIN_HOME="+lbHome, "PATH="+bin+":"+os.Getenv("PATH"),
		"PONDER_OCA=off", "LASERBRAIN_FLEET=", "LASERBRAIN_RUN=", "PONDER_SLUG=", "LASERBRAIN_BROKER=")
	run := func(name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = repo, env
		return proctest.Run(t, cmd)
	}
	if _, e, code := run("git", "init", "-q"); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := run("git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "start"); code != 0 {
		t.Fatal(e)
	}
	out, errOut, code := run(filepath.Join(bin, "ponder"), "start", "audit the parser", "--json")
	var started struct{ Slug string }
	if code != 0 || json.Unmarshal([]byte(out), &started) != nil || started.Slug == "" {
		t.Fatalf("ponder start: exit %d\n%s\n%s", code, out, errOut)
	}
	slug := started.Slug

	// The supervisor's message, queued in the repository's fleet.
	ctx := context.Background()
	fid, err := fleet.ID(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fleet.OpenLocal(filepath.Join(lbHome, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const said = "PROBE-PONDER-9: keep to the parser"
	if _, err := st.Say(ctx, fleet.Message{ID: "probe", Fleet: fid, Agent: fleet.PonderAgent(slug), Kind: fleet.MessageAnswer,
		Round: 1, Text: said, At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}

	script := `ponder status; echo "status=$?"; ponder metacognize --type stuck_state --description 'the agent wrote this'; echo "meta=$?"; ponder status; ` +
		`(echo x > "$1/ponder") 2>/dev/null; echo "bin=$?"; ponder report --html "$1/ponder" 2>/dev/null; echo "html=$?"`
	out, errOut, code = run(lb, "run", "--agent", "pondering", "--ponder", slug, "--", "sh", "-c", script, "sh", bin)
	if code != 0 {
		t.Fatalf("laserbrain run: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "not confined") {
		t.Fatalf("the run was not confined: %s", errOut)
	}
	for _, want := range []string{"status=0", "meta=0", "bin="} {
		if !strings.Contains(out, want) {
			t.Errorf("the agent's commands: %q lacks %s\nstderr: %s", out, want, errOut)
		}
	}
	if strings.Contains(out, "bin=0") || strings.Contains(out, "html=0") || !strings.Contains(out, "html=") {
		t.Errorf("the agent, or the ponder the broker ran for it, overwrote the ponder the run holds: %q", out)
	}
	if n := strings.Count(errOut, said); n != 1 {
		t.Errorf("the supervisor's message is %d times in what the agent's ponder said; want once\n%s", n, errOut)
	}
	if strings.Contains(strings.ToLower(errOut), "read-only file system") || strings.Contains(errOut, "warning") {
		t.Errorf("ponder warned under the run:\n%s", errOut)
	}
	msgs, err := st.Messages(ctx, fid, fleet.PonderAgent(slug))
	if err != nil || len(msgs) != 1 || msgs[0].Delivered == nil || msgs[0].Delivered.Via != "ponder" {
		t.Errorf("the message in the store: %+v %v; want it delivered to ponder", msgs, err)
	}
	obs, err := os.ReadFile(filepath.Join(repo, ".ponder", slug, "observations.jsonl"))
	if err != nil || !bytes.Contains(obs, []byte("the agent wrote this")) {
		t.Errorf("the session lacks the agent's observation: %v\n%s", err, obs)
	}
	if b, err := os.ReadFile(filepath.Join(bin, "ponder")); err != nil || !bytes.Equal(b, pdata) {
		t.Error("the agent overwrote the ponder the run holds")
	}
}

// The ponder a broker runs is confined as the agent is, but for .ponder:
// nothing else held is let go, and .ponder is writable.
func TestPonderSpecLetsOnlyPonderGo(t *testing.T) {
	dot := filepath.Join(t.TempDir(), ".ponder")
	if err := os.Mkdir(dot, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := confine.Spec{ReadOnly: []string{"/home/u/.laserbrain", dot, filepath.Join(dot, "s", "ledger.jsonl"), dot + "-other"},
		Writable: []string{"/home/u/repo", "/tmp"}, Created: []string{"/home/u/repo/.claude"}, Ensure: []string{"/home/u/repo/.claude"}, Root: true}
	got := ponderSpec(spec, dot)
	if strings.Join(got.ReadOnly, " ") != "/home/u/.laserbrain "+dot+"-other" {
		t.Errorf("held: %q", got.ReadOnly)
	}
	if strings.Join(got.Writable, " ") != "/home/u/repo /tmp "+dot {
		t.Errorf("writable: %q", got.Writable)
	}
	if got.Created != nil || got.Ensure != nil || !got.Root {
		t.Errorf("the rest: %+v", got)
	}
	if strings.Join(spec.Writable, " ") != "/home/u/repo /tmp" {
		t.Errorf("the agent's own spec changed: %q", spec.Writable)
	}
}
