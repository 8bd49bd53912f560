package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// verdictLine is what the crash tests read of a stream's answer.
type verdictLine struct {
	Reason string `json:"reason"`
	Run    string `json:"run"`
	Step   int    `json:"step"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// killedStream starts check --stream in env, feeds it lines as fast as it
// takes them, reads its answers, and kills it with SIGKILL once it has
// answered after lines; then it reads what reached the pipe before the
// kill. It returns every answer printed.
func killedStream(t *testing.T, bin string, env []string, after int) []verdictLine {
	t.Helper()
	cmd := exec.Command(bin, "check", "--stream")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go feedStates(stdin)
	got := readAnswers(t, stdout, after, func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	})
	werr := cmd.Wait()
	if ee, ok := werr.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the stream was not killed by SIGKILL: %v\n%s", werr, stderr.String())
	}
	return got
}

// feedStates writes check lines to w as fast as they are taken, until a
// write fails: lines keep coming while a stream is killed, so it dies in
// the middle of a batch, not at a pause.
func feedStates(w io.Writer) {
	states := []string{
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":8}`,
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":6,"doing":"editing importer.py"}`,
		`{"goal":"refactor the ORM base class","progress":"advancing","distance":5}`,
	}
	bw := bufio.NewWriter(w)
	for i := 0; ; i++ {
		if _, err := bw.WriteString(states[i%len(states)] + "\n"); err != nil {
			return
		}
		if i%7 == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}

// readAnswers reads a stream's answers from r until its end, calling kill
// once after of them were read; a last line cut off by the kill is not an
// answer. It returns every answer read.
func readAnswers(t *testing.T, r io.Reader, after int, kill func()) []verdictLine {
	t.Helper()
	var got []verdictLine
	br := bufio.NewReader(r)
	killed := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var v verdictLine
			if jerr := json.Unmarshal(line, &v); jerr != nil {
				t.Fatalf("answer %d is not JSON: %q", len(got)+1, line)
			}
			got = append(got, v)
		}
		if !killed && len(got) >= after {
			kill()
			killed = true
		}
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkPrinted holds the printed answers to what is on disk: the verdicts
// are consecutive steps of one run (after the base steps it had), each
// printed once, and every one of them is in the run's history with the
// reason that was printed (the history may hold more: a batch made durable
// whose answers the kill cut off).
func checkPrinted(t *testing.T, b *backend.Backend, printed []verdictLine) (run string, base, onDisk int) {
	t.Helper()
	if len(printed) == 0 {
		t.Fatal("nothing was printed before the kill")
	}
	base = printed[0].Step - 1
	for i, v := range printed {
		if v.Error != nil {
			t.Fatalf("answer %d is an error: %s", i+1, v.Error.Message)
		}
		if v.Step != base+i+1 || v.Run != printed[0].Run {
			t.Fatalf("answer %d is step %d of run %s: a verdict lost, duplicated or out of order", i+1, v.Step, v.Run)
		}
	}
	store, err := b.Runs()
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.ReadRun(context.Background(), printed[0].Run)
	if err != nil {
		t.Fatalf("the run whose verdicts were printed: %v", err)
	}
	steps := r.Steps()
	if len(steps) < base+len(printed) {
		t.Fatalf("%d verdicts printed after %d steps, %d steps on disk: %d printed verdicts lost", len(printed), base, len(steps), base+len(printed)-len(steps))
	}
	for i, v := range printed {
		if st := steps[base+i]; st.N != base+i+1 || st.Reason != v.Reason {
			t.Fatalf("step %d on disk is %d %q, printed %q", base+i+1, st.N, st.Reason, v.Reason)
		}
	}
	return printed[0].Run, base, len(steps)
}

// A stream killed with SIGKILL in the middle of a batch loses no verdict it
// printed and prints none twice: every printed verdict's step is on disk,
// and the run goes on after the last step on disk. It counts, for a run
// laserbrain run registered (the fleet record and the run's events as
// well) and for a run of laserbrain's store alone, at several points of
// the stream, on the local store.
func TestStreamKilledLosesNoPrintedVerdict(t *testing.T) {
	for _, registered := range []bool{true, false} {
		for _, after := range []int{1, 300, 2500} {
			t.Run(fmt.Sprintf("registered=%v/after %d", registered, after), func(t *testing.T) {
				killAndCount(t, "local", registered, after)
			})
		}
	}
}

// The same on PostgreSQL: a batch is a transaction of each store, and what
// was answered was committed.
func TestStreamKilledLosesNoPrintedVerdictPostgres(t *testing.T) {
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	for _, registered := range []bool{true, false} {
		t.Run(fmt.Sprintf("registered=%v", registered), func(t *testing.T) {
			killAndCount(t, dsn, registered, 300)
		})
	}
}

// killAndCount kills a stream on the store named by spec (local, or a
// PostgreSQL URL) after it answered after lines, and counts.
func killAndCount(t *testing.T, spec string, registered bool, after int) {
	t.Helper()
	bin := laserbrainBinary(t)
	home := filepath.Join(t.TempDir(), "home")
	env := streamEnv(home)
	if spec != "local" {
		env = append(env, "LASERBRAIN_STORE="+spec)
		init := exec.Command(bin, "store", "init")
		init.Env = env
		if out, err := init.CombinedOutput(); err != nil {
			t.Fatalf("store init: %v\n%s", err, out)
		}
	}
	var id string
	if registered {
		id = registerRun(t, bin, env)
		env = append(env, "LASERBRAIN_RUN="+id)
	}
	printed := killedStream(t, bin, env, after)
	b := openStores(t, spec, home)
	run, base, onDisk := checkPrinted(t, b, printed)
	if registered {
		checkRecorded(t, b, id, run, base, len(printed), onDisk)
	}
	// The run goes on from the last step on disk: no step number is given
	// twice.
	next := exec.Command(bin, "check", "--stream", "--run", run)
	next.Env = env
	next.Stdin = strings.NewReader(`{"goal":"add a CSV importer to the admin panel","distance":4}` + "\n")
	out, err := next.Output()
	if err != nil {
		t.Fatalf("the next stream: %v", err)
	}
	var v verdictLine
	if err := json.Unmarshal(out, &v); err != nil || v.Step != onDisk+1 {
		t.Fatalf("the next check is step %d (%s), want %d", v.Step, out, onDisk+1)
	}
}

// checkRecorded holds registered run id's fleet record and events to the
// verdicts printed on it (run is theirs): the record is written after the
// steps and before the answers, so it counts every answered check and none
// that is not on disk, and each answered check has its event.
func checkRecorded(t *testing.T, b *backend.Backend, id, run string, base, printed, onDisk int) {
	t.Helper()
	if run != id {
		t.Fatalf("the verdicts are of run %s, not the registered %s", run, id)
	}
	fl, err := b.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	r, err := fl.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checks < base+printed || r.Checks > onDisk {
		t.Fatalf("the fleet record counts %d checks: %d before, %d printed, %d on disk", r.Checks, base, printed, onDisk)
	}
	evs, err := fl.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	checks := 0
	for _, e := range evs {
		if e.Kind == fleet.KindCheck {
			checks++
		}
	}
	if checks < base+printed {
		t.Fatalf("%d check events for %d printed verdicts after %d", checks, printed, base)
	}
}

// SIGTERM ends a stream as the end of its input would: what it read is
// committed and answered before it goes, killed by the signal.
func TestStreamTermCommits(t *testing.T) {
	bin := laserbrainBinary(t)
	home := filepath.Join(t.TempDir(), "home")
	env := streamEnv(home)
	id := registerRun(t, bin, env)
	env = append(env, "LASERBRAIN_RUN="+id)
	cmd := exec.Command(bin, "check", "--stream")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	var first verdictLine
	for i := 0; i < 3; i++ {
		fmt.Fprintf(stdin, `{"goal":"add a CSV importer to the admin panel","distance":%d}`+"\n", 8-i)
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			_ = json.Unmarshal(line, &first)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("after SIGTERM: %v (output %q)", err, rest)
	}
	if len(rest) != 0 {
		t.Fatalf("answers after the signal with nothing pending: %q", rest)
	}
	fl, _ := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if rec, err := fl.Run(context.Background(), id); err != nil || rec.Checks != first.Step+2 {
		t.Fatalf("the record after SIGTERM: %d checks, want %d (%v)", rec.Checks, first.Step+2, err)
	}
}
