package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgtest"
)

// BenchmarkHookStore: the hooks' latency as Claude Code sees it (a fresh
// process, the event on stdin, until the answer) with the local store and
// with PostgreSQL on the same machine (a durable private cluster over its
// Unix socket), side by side in one run. post-tool-use records a call
// (the run's event, the machine's evidence, the task's corroboration);
// pre-tool-use/irreversible reads the run, its task and the authorizations
// to refuse a force-push; pre-tool-use/reversible decides from the command
// alone and touches no store. x-local is the PostgreSQL time over the
// local one for the same event; x-true is over /bin/true started the same
// way.
func BenchmarkHookStore(b *testing.B) {
	bin := laserbrainBinary(b)
	c := pgtest.StartCluster(b)
	c.Durable(b)
	dsn := pgtest.URL(b, c.NewDatabase(b))
	var trueNs float64
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
		trueNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	local := map[string]float64{}
	for _, store := range []string{"local", "postgres"} {
		home := filepath.Join(b.TempDir(), "home")
		env := append(os.Environ(), "LASERBRAIN_HOME="+home, "LASERBRAIN_FLEET=bench", "LASERBRAIN_AGENT=", "LASERBRAIN_RUN=")
		if store == "postgres" {
			env = append(env, "LASERBRAIN_STORE="+dsn)
			init := exec.Command(bin, "store", "init")
			init.Env = env
			if out, err := init.CombinedOutput(); err != nil {
				b.Fatalf("store init: %v %s", err, out)
			}
		} else {
			env = append(env, "LASERBRAIN_STORE=local")
		}
		reg := exec.Command(bin, "run", "--agent", "bench", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", "echo $LASERBRAIN_RUN")
		reg.Env = env
		out, err := reg.Output()
		if err != nil {
			b.Fatalf("laserbrain run: %v", err)
		}
		env = append(env, "LASERBRAIN_RUN="+strings.TrimSpace(string(out)))
		events := []struct{ name, hook, payload string }{
			{"post-tool-use", "post-tool-use", `{"hook_event_name":"PostToolUse","session_id":"s1","tool_name":"Bash","tool_use_id":"t%d","tool_input":{"command":"make test"},"tool_response":{"stdout":"ok"}}`},
			{"pre-tool-use/irreversible", "pre-tool-use", `{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_use_id":"g%d","tool_input":{"command":"git push --force origin main"}}`},
			{"pre-tool-use/reversible", "pre-tool-use", `{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_use_id":"r%d","tool_input":{"command":"ls -la"}}`},
		}
		for _, ev := range events {
			b.Run(ev.name+"/"+store, func(b *testing.B) {
				i := 0
				for b.Loop() {
					cmd := exec.Command(bin, "hook", ev.hook)
					cmd.Env = env
					cmd.Stdin = strings.NewReader(fmt.Sprintf(ev.payload, i))
					err := cmd.Run()
					if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 2) {
						b.Fatal(err)
					}
					i++
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if trueNs > 0 {
					b.ReportMetric(ns/trueNs, "x-true")
				}
				if store == "local" {
					local[ev.name] = ns
				} else if local[ev.name] > 0 {
					b.ReportMetric(ns/local[ev.name], "x-local")
				}
			})
		}
	}
}

// BenchmarkCheckStreamFresh200Stores is `check --stream` on 10,000 lines
// over 200 new runs of 50 checks each (new names every iteration), the real
// binary, on the local store and on PostgreSQL (a durable private cluster
// over its Unix socket) one after the other in each iteration: x-local is
// PostgreSQL's wall time over the local store's, cpu-x-local the same for
// the process's CPU time (the server's own is not counted).
func BenchmarkCheckStreamFresh200Stores(b *testing.B) {
	bin := laserbrainBinary(b)
	c := pgtest.StartCluster(b)
	c.Durable(b)
	dsn := pgtest.URL(b, c.NewDatabase(b))
	dir := b.TempDir()
	envs := map[string][]string{}
	for _, store := range []string{"local", "postgres"} {
		env := append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, store), "LASERBRAIN_FLEET=", "LASERBRAIN_AGENT=", "LASERBRAIN_RUN=")
		if store == "postgres" {
			env = append(env, "LASERBRAIN_STORE="+dsn)
			init := exec.Command(bin, "store", "init")
			init.Env = env
			if out, err := init.CombinedOutput(); err != nil {
				b.Fatalf("store init: %v %s", err, out)
			}
		} else {
			env = append(env, "LASERBRAIN_STORE=local")
		}
		envs[store] = env
	}
	inPath := filepath.Join(dir, "in.jsonl")
	wall := map[string]time.Duration{}
	cpu := map[string]time.Duration{}
	iter := 0
	for b.Loop() {
		for _, store := range []string{"local", "postgres"} {
			b.StopTimer()
			iter++
			if err := os.WriteFile(inPath, streamInputRuns(10_000, func(i int) string { return fmt.Sprintf("f%d-%d", iter, i/50) }), 0o644); err != nil {
				b.Fatal(err)
			}
			in, err := os.Open(inPath)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			cmd := exec.Command(bin, "check", "--stream")
			cmd.Env, cmd.Stdin = envs[store], in
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			err = cmd.Run()
			wall[store] += time.Since(start)
			in.Close()
			// Exit 2: a line's verdict said drift; anything else is a failure.
			if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 2) {
				b.Fatalf("%s: %v %s", store, err, stderr.String())
			}
			cpu[store] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall["local"].Milliseconds())/n, "local-ms")
	b.ReportMetric(float64(wall["postgres"].Milliseconds())/n, "postgres-ms")
	b.ReportMetric(float64(wall["postgres"])/float64(wall["local"]), "x-local")
	b.ReportMetric(float64(cpu["postgres"])/float64(cpu["local"]), "cpu-x-local")
}
