package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A supervised agent's stream loses no check it was answered when
// laserbrain run itself is killed: the run's process answers the stream
// through its broker, and every verdict the agent read before the run was
// killed with SIGKILL (lines still coming, so in the middle of a batch) is
// a step on disk, counted on the run's record and recorded as its event.
func TestStreamUnderRunKilledLosesNoAnsweredCheck(t *testing.T) {
	lb := laserbrainBinary(t)
	for _, after := range []int{1, 700} {
		t.Run(fmt.Sprintf("after %d", after), func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			for _, name := range []string{"in.fifo", "out.fifo"} {
				if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			script := `echo "broker=${LASERBRAIN_BROKER:+set}" > broker.txt; exec ` + lb + ` check --stream < in.fifo > out.fifo`
			cmd := exec.Command(lb, "run", "--agent", "streamer", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", script)
			cmd.Dir, cmd.Env = dir, streamEnv(home)
			logf, err := os.Create(filepath.Join(t.TempDir(), "run.log"))
			if err != nil {
				t.Fatal(err)
			}
			defer logf.Close()
			cmd.Stdout, cmd.Stderr = logf, logf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			runLog := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
			// Opened read-write, the agent's input does not wait for it.
			w, err := os.OpenFile(filepath.Join(dir, "in.fifo"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			go feedStates(w)
			r := openAnswers(t, filepath.Join(dir, "out.fifo"), exited, runLog)
			defer r.Close()
			if err := r.SetReadDeadline(time.Now().Add(2 * time.Minute)); err != nil {
				t.Fatal(err)
			}
			printed := readAnswers(t, r, after, func() {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			})
			werr := <-exited
			if ee, ok := werr.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("laserbrain run was not killed by SIGKILL: %v\n%s", werr, runLog())
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "broker.txt")); !strings.Contains(string(b), "broker=set") {
				testenv.SkipOrFail(t, "the agent was not confined here (no broker), so nothing was handed over:\n%s", runLog())
			}
			b := openStores(t, "local", home)
			run, base, onDisk := checkPrinted(t, b, printed)
			if base != 1 {
				t.Errorf("the first answer is step %d: the run's ground (--goal) is step 1", base+1)
			}
			checkRecorded(t, b, run, run, base, len(printed), onDisk)
			t.Logf("%d answers read, %d steps on disk", len(printed), onDisk)
		})
	}
}

// openAnswers opens the agent's output for reading once the agent opened
// it for writing; it fails when the run ends first or a minute passes.
func openAnswers(t *testing.T, path string, exited <-chan error, runLog func() string) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		if f, err := os.Open(path); err == nil {
			opened <- f
		}
	}()
	select {
	case f := <-opened:
		return f
	case err := <-exited:
		t.Fatalf("laserbrain run ended before its agent streamed: %v\n%s", err, runLog())
	case <-time.After(time.Minute):
		t.Fatalf("the agent did not open its output within a minute:\n%s", runLog())
	}
	return nil
}
