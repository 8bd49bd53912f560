package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/pgtest"
)

// storeEvents are the gate's answers BenchmarkGateStore times on each
// store: an allow (a reversible command: the halts are read) and a deny
// (a force-push: the run, its task and the authorizations are read too).
var storeEvents = []struct{ name, event string }{
	{"allow", `{"hook_event_name":"PreToolUse","session_id":"bench-s","tool_use_id":"a","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls -la"}}`},
	{"deny", `{"hook_event_name":"PreToolUse","session_id":"bench-s","tool_use_id":"d","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git push --force origin main"}}`},
}

// BenchmarkGateStore is the gate on PostgreSQL against the gate on the
// local store (make bench-store): laserbrain-gate as Claude Code runs it,
// whole processes, medians of interleaved rounds, each on a registered
// run of its store. On PostgreSQL (a durable private cluster over its
// Unix socket) the gate hands the event to the hook server beside it,
// started in the warm-up; laserbrain hook pre-tool-use on PostgreSQL (a
// process and a connection of its own per call, what the gate did
// before) is timed beside them. x-local is each answer's median on
// PostgreSQL over the same answer on the local store.
func BenchmarkGateStore(b *testing.B) {
	dir := b.TempDir()
	gate := filepath.Join(dir, "laserbrain-gate")
	lb := filepath.Join(dir, "laserbrain")
	copyExec(b, buildGate(b), gate)
	copyExec(b, buildLaserbrain(b), lb)
	c := pgtest.StartCluster(b)
	c.Durable(b)
	dsn := pgtest.URL(b, c.NewDatabase(b))
	envs := map[string][]string{}
	for _, store := range []string{"local", "postgres"} {
		env := append(quietEnv(), "LASERBRAIN_HOME="+filepath.Join(dir, store), "LASERBRAIN_FLEET=bench", "LASERBRAIN_AGENT=")
		if store == "postgres" {
			env = append(env, "LASERBRAIN_STORE="+dsn)
			lbRun(b, lb, env, "store", "init")
		} else {
			env = append(env, "LASERBRAIN_STORE=local")
		}
		run := lbRun(b, lb, env, "run", "--agent", "bench", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", "echo $LASERBRAIN_RUN")
		envs[store] = append(env, "LASERBRAIN_RUN="+run)
	}
	var cs []*contender
	for _, e := range storeEvents {
		want := map[string]int{"allow": 0, "deny": 2}[e.name]
		for _, store := range []string{"local", "postgres"} {
			cs = append(cs, &contender{name: "gate-" + e.name + "-" + store, argv: []string{gate}, event: e.event, env: envs[store], wantExit: want})
		}
	}
	cs = append(cs, &contender{name: "laserbrain-hook-allow-postgres", argv: []string{lb, "hook", "pre-tool-use"}, event: storeEvents[0].event, env: envs["postgres"]})
	eventFiles(b, cs)
	b.Cleanup(func() { stopHookServer(b, lb, envs["postgres"]) })
	for range 3 { // the warm-up: the hook server starts
		for _, c := range cs {
			if code, err := c.runOnce(b); code != c.wantExit {
				b.Fatalf("%s: exit %d (%v), want %d", c.name, code, err, c.wantExit)
			}
			c.times = c.times[:0]
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range cs {
			c := cs[(i+k)%len(cs)]
			if code, err := c.runOnce(b); code != c.wantExit {
				b.Fatalf("%s: exit %d (%v), want %d", c.name, code, err, c.wantExit)
			}
		}
	}
	b.StopTimer()
	report := "medians:\n"
	for _, c := range cs {
		m := median(c.times)
		b.ReportMetric(float64(m.Microseconds())/1000, c.name+"-ms")
		report += fmt.Sprintf("  %-32s %8.3f ms\n", c.name, float64(m.Microseconds())/1000)
	}
	b.Log(report)
	for k := 0; k+1 < 4; k += 2 {
		local, pg := median(cs[k].times), median(cs[k+1].times)
		b.ReportMetric(float64(pg)/float64(local), storeEvents[k/2].name+"-x-local")
	}
	b.ReportMetric(float64(median(cs[4].times))/float64(median(cs[0].times)), "process-allow-x-local")
}

// lbRun runs laserbrain with env and returns its output, trimmed.
func lbRun(b testing.TB, lb string, env []string, args ...string) string {
	b.Helper()
	cmd := exec.Command(lb, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		b.Fatalf("laserbrain %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// stopHookServer ends the hook server laserbrain lb runs for env, if one
// listens (it would otherwise live until idle).
func stopHookServer(t testing.TB, lb string, env []string) {
	if pid := hookServerPid(t, lb, env); pid > 0 {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}
