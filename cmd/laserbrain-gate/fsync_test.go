package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/client"
)

// maxPostToolUseSyncs is how many times the run's process may wait for the
// disk answering one PostToolUse: the call's event in the run's history,
// and the run's record with the coverage counts the next PreToolUse reads.
// A session's first call binds the session to the run as well (the run's
// record and the session's entry, written once): maxFirstPostToolUseSyncs.
const (
	maxPostToolUseSyncs      = 2
	maxFirstPostToolUseSyncs = maxPostToolUseSyncs + 2
)

// TestHookPairSyncs counts, with strace, the fsync and fdatasync calls made
// while each of a tool call's two installed hooks runs under laserbrain
// run (the agent confined, its hooks answered by the run's process): a
// PostToolUse makes at most maxPostToolUseSyncs, every time after the
// session's first (maxFirstPostToolUseSyncs). The agent is
// the driver of BenchmarkHookPairUnderRun, marking each hook's start and
// end (hookMark) in the same trace.
func TestHookPairSyncs(t *testing.T) {
	strace := testenv.LookPath(t, "strace")
	dir := t.TempDir()
	lb := filepath.Join(dir, "laserbrain")
	copyExec(t, buildLaserbrain(t), lb)
	copyExec(t, buildGate(t), filepath.Join(dir, client.GateName))
	driver := filepath.Join(t.TempDir(), pairDriverName)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, driver); err != nil {
		t.Fatal(err)
	}
	repo, home := gitRepo(t), t.TempDir()
	const goal = "make the parser pass its tests"
	spec := pairSpec{Rounds: 7, Out: filepath.Join(repo, ".pair-times.json"), Mark: true, CheckEvery: 3,
		Check: []string{lb, "check", "--goal", goal, "--distance", "5"},
		Pairs: map[string][2]string{"laserbrain": {client.HookCommand(lb, client.Claude, client.PreToolUse), client.HookCommand(lb, client.Claude, client.PostToolUse)}}}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync,truncate", "-o", trace,
		lb, "run", "--agent", "syncs", "--goal", goal, "--", driver)
	cmd.Dir = repo
	cmd.Env = append(quietEnv(), "LASERBRAIN_HOME="+home, "HOME="+home, "LASERBRAIN_STORE=local", "LASERKIT_PAIR_SPEC="+string(raw))
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("laserbrain run: %v\n%s", err, o)
	} else if !strings.Contains(string(o), "confined by the kernel") && strings.Contains(string(o), "not confined") {
		testenv.SkipOrFail(t, "the agent is not confined here, so its hooks do not go through the run's process:\n%s", o)
	}
	syncs := hookSyncs(t, trace)
	if len(syncs["post"]) != spec.Rounds || len(syncs["pre"]) != spec.Rounds {
		t.Fatalf("the trace marks %d PreToolUse and %d PostToolUse hooks, want %d each", len(syncs["pre"]), len(syncs["post"]), spec.Rounds)
	}
	t.Logf("fsyncs per hook: PreToolUse %v, PostToolUse %v", syncs["pre"], syncs["post"])
	for i, n := range syncs["post"] {
		most := maxPostToolUseSyncs
		if i == 0 {
			most = maxFirstPostToolUseSyncs
		}
		if n > most {
			t.Errorf("PostToolUse %d made %d fsyncs, over %d", i+1, n, most)
		}
	}
}

// hookSyncs reads an strace -f trace with hookMark's marks: for "pre" and
// "post", the fsync and fdatasync calls begun between each hook's begin and
// end marks, one count per hook in order.
func hookSyncs(t *testing.T, trace string) map[string][]int {
	t.Helper()
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string][]int{}
	in := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, mark, ok := strings.Cut(line, hookMarkDir+"/"); ok {
			hook, what, _ := strings.Cut(mark[:strings.IndexByte(mark, '"')], "-")
			if what == "begin" {
				in = hook
				counts[hook] = append(counts[hook], 0)
			} else {
				in = ""
			}
			continue
		}
		if in != "" && (strings.Contains(line, " fsync(") || strings.Contains(line, " fdatasync(")) {
			counts[in][len(counts[in])-1]++
			t.Logf("%s %d: %s", in, len(counts[in]), line[strings.IndexByte(line, ' ')+1:])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}
