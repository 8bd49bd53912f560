package main

// A run's audit chain against the Python reference's verify_audit, both
// ways: the chain laserbrain exports verifies there, the chain the
// reference's Harness.export_audit writes verifies here, and a record
// altered after the fact breaks both at the same link.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/internal/testenv"
)

func referencePython(t *testing.T, script string, args ...string) string {
	t.Helper()
	sdk := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	py := testenv.LookPath(t, "python3")
	home := t.TempDir()
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+sdk, "HOME="+home, "LASERBRAIN_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 with the reference: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

const verifyWithReference = `import json, sys, laserbrain
print(laserbrain.verify_audit(json.load(open(sys.argv[1]))))`

// tamper rewrites record i's goal in an exported chain, through Python's
// json (which keeps every other value as it was read).
func tamper(t *testing.T, src, dst string, i int) {
	t.Helper()
	referencePython(t, `import json, sys
c = json.load(open(sys.argv[1]))
c[int(sys.argv[3])]["goal"] = "something else entirely"
json.dump(c, open(sys.argv[2], "w"), indent=2)`, src, dst, strconv.Itoa(i))
}

func TestAuditChainVerifiesWithTheReference(t *testing.T) {
	lb := laserbrainBinary(t)
	dir := t.TempDir()
	run := func(args ...string) (string, int) {
		cmd := exec.Command(lb, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "HOME="+dir)
		out, _, code := proctest.Run(t, cmd)
		return out, code
	}
	for _, c := range [][]string{
		{"--goal", "ship the sky billboard", "--distance", "5", "--new-run"},
		{"--goal", "ship the sky billboard — héllo ✓", "--distance", "unknown"},
		{"--goal", "ship the sky billboard", "--progress", "stuck", "--distance", "4"},
		{"--goal", "rewrite the about page", "--distance", "11"},
	} {
		run(append([]string{"check", "--run", "r1"}, c...)...)
	}
	out, code := run("history", "--run", "r1", "--audit")
	if code != 0 {
		t.Fatalf("history --audit: exit %d", code)
	}
	ours := filepath.Join(dir, "ours.json")
	if err := os.WriteFile(ours, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := referencePython(t, verifyWithReference, ours); got != "(True, -1)" {
		t.Fatalf("the reference's verify_audit on our export: %s\n%s", got, out)
	}
	if got, code := run("verify", ours); code != 0 || !strings.Contains(got, "✓ audit intact — 4 records") {
		t.Fatalf("verify: exit %d: %s", code, got)
	}
	bad := filepath.Join(dir, "ours-bad.json")
	tamper(t, ours, bad, 2)
	if got := referencePython(t, verifyWithReference, bad); got != "(False, 2)" {
		t.Fatalf("the reference on a tampered export: %s", got)
	}
	if got, code := run("verify", bad); code != 1 || !strings.Contains(got, "✗ audit BROKEN at link 2") {
		t.Fatalf("verify on a tampered export: exit %d: %s", code, got)
	}

	// The reference's own export, verified here.
	theirs := filepath.Join(dir, "theirs.json")
	referencePython(t, `import sys, laserbrain
h = laserbrain.Harness(run_id="ref")
h.check("build the parser — ünïcode", "advancing", 8)
h.check("build the parser", "stuck", None)
h.check("paint the shed", "circling", 3)
h.export_audit(sys.argv[1])`, theirs)
	if got, code := run("verify", theirs); code != 0 || !strings.Contains(got, "✓ audit intact — 3 records") {
		t.Fatalf("verify on the reference's export: exit %d: %s", code, got)
	}
	tamper(t, theirs, bad, 1)
	if got, code := run("verify", bad); code != 1 || !strings.Contains(got, "✗ audit BROKEN at link 1") {
		t.Fatalf("verify on the reference's tampered export: exit %d: %s", code, got)
	}
	if _, code := run("verify", filepath.Join(dir, "missing.json")); code != 2 {
		t.Fatalf("verify of a missing file: exit %d, want 2", code)
	}
}
