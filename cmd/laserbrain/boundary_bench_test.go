package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkBoundary is what laserbrain run's boundary costs, each figure a
// ratio against its baseline measured in the same run:
//
//   - git-status: one `git status` in a repository, by a shell laserbrain
//     run started that stays up, inside the boundary against the same run
//     with the boundary off (LASERBRAIN_CONFINE=off; x-outside);
//   - hook-pair: a tool call's pre-tool-use and post-tool-use hooks, run as
//     a client runs them (a process each, the event on stdin, recorded on
//     the run), from inside the boundary (handed to the run's broker)
//     against the same with the boundary off (x-outside);
//   - run-true: `laserbrain run -- true` against the same with the network
//     part off (LASERBRAIN_CONFINE_NET=off; x-no-network).
//
// Each pair is timed alternately, and the ratio is of the medians.
func BenchmarkBoundary(b *testing.B) {
	lb := buildLaserbrain(b)
	if err := exec.Command(lb, "__laserbrain-confine", "--probe").Run(); err == nil {
		b.Fatal("the setup step ran without a spec")
	}
	repo := b.TempDir()
	home := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "one"}} {
		c := exec.Command("git", args...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(repo, "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt"), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+home, "LASERBRAIN_HOME="+filepath.Join(home, "lb"), "LASERBRAIN_FLEET=bench", "LASERBRAIN_STORE=",
		"LASERBRAIN_RUN=", "LASERBRAIN_CONFINE=", "LASERBRAIN_CONFINE_NET=", "PATH="+filepath.Dir(lb)+":"+os.Getenv("PATH"))
	// A shell that runs one line per request and answers "ok".
	server := `while read -r line; do eval "$line" >/dev/null 2>&1; echo ok; done`
	pre := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"t1","cwd":"` + repo + `"}`
	post := `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"t1","tool_response":{"stdout":"x"},"cwd":"` + repo + `"}`
	hookPair := "printf '%s' '" + pre + "' | laserbrain hook pre-tool-use; printf '%s' '" + post + "' | laserbrain hook post-tool-use"
	lines := map[string]string{"git-status": "git status", "hook-pair": hookPair}
	for _, name := range []string{"git-status", "hook-pair"} {
		b.Run(name, func(b *testing.B) {
			// Both under laserbrain run, with their hooks recording on a
			// run: outside with the kernel's boundary off (the hooks alone).
			run := []string{lb, "run", "--unattended", "--agent", "bench", "--", "sh", "-c", server}
			outside := startServer(b, repo, append(env[:len(env):len(env)], "LASERBRAIN_CONFINE=off"), run)
			inside := startServer(b, repo, env, run)
			outside(lines[name]) // warm both
			inside(lines[name])
			interleaved(b, "x-outside", func() { outside(lines[name]) }, func() { inside(lines[name]) })
		})
	}
	b.Run("run-true", func(b *testing.B) {
		run := func(net string) func() {
			e := append(env[:len(env):len(env)], "LASERBRAIN_CONFINE_NET="+net)
			return func() {
				c := exec.Command(lb, "run", "--unattended", "--agent", "bench", "--", "true")
				c.Dir, c.Env = repo, e
				if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "not confined") {
					b.Fatalf("laserbrain run -- true: %v\n%s", err, out)
				}
			}
		}
		interleaved(b, "x-no-network", run("off"), run(""))
	})
}

// interleaved times base and subject alternately, b.N times each, and
// reports the median of subject over the median of base as unit, and each
// median: what the machine's load does to one it does to the other.
func interleaved(b *testing.B, unit string, base, subject func()) {
	var bs, ss []float64
	for i := 0; b.Loop(); i++ {
		first, second, fs, ssp := base, subject, &bs, &ss
		if i%2 == 1 {
			first, second, fs, ssp = subject, base, &ss, &bs
		}
		t := time.Now()
		first()
		*fs = append(*fs, float64(time.Since(t).Nanoseconds()))
		t = time.Now()
		second()
		*ssp = append(*ssp, float64(time.Since(t).Nanoseconds()))
	}
	mb, ms := median(bs), median(ss)
	b.ReportMetric(mb, "base-ns")
	b.ReportMetric(ms, "subject-ns")
	if mb > 0 {
		b.ReportMetric(ms/mb, unit)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// startServer starts args (a shell reading one line per request) in dir
// and returns the function that sends it a line and waits for its "ok".
func startServer(b *testing.B, dir string, env, args []string) func(string) {
	b.Helper()
	c := exec.Command(args[0], args[1:]...)
	c.Dir, c.Env = dir, env
	in, err := c.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = c.Wait() })
	r := bufio.NewReader(out)
	return func(line string) {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			b.Fatal(err)
		}
		for {
			got, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("the shell ended: %v", err)
			}
			if got == "ok\n" {
				return
			}
		}
	}
}
