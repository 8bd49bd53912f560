package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkBoundary is what laserbrain run's boundary costs, each figure a
// ratio against its baseline measured in the same run:
//
//   - git-status: one `git status` in a repository, by a shell that stays
//     up, inside the boundary against the same shell outside (x-outside);
//   - hook-pair: a tool call's pre-tool-use and post-tool-use hooks, run as
//     a client runs them (a process each, the event on stdin), from inside
//     the boundary (handed to the run's broker) against outside
//     (x-outside);
//   - run-true: `laserbrain run -- true` against the same with the network
//     part off (LASERBRAIN_CONFINE_NET=off; x-no-network).
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
		var outside float64
		for _, where := range []string{"outside", "inside"} {
			b.Run(name+"/"+where, func(b *testing.B) {
				args := []string{"sh", "-c", server}
				if where == "inside" {
					args = append([]string{lb, "run", "--unattended", "--agent", "bench", "--"}, args...)
				}
				ask := startServer(b, repo, env, args)
				ask(lines[name]) // warm
				b.ResetTimer()
				for b.Loop() {
					ask(lines[name])
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if where == "outside" {
					outside = per
				} else if outside > 0 {
					b.ReportMetric(per/outside, "x-outside")
				}
			})
		}
	}
	var noNet float64
	for _, net := range []string{"off", "on"} {
		b.Run("run-true/network-"+net, func(b *testing.B) {
			e := append(env[:len(env):len(env)], "LASERBRAIN_CONFINE_NET="+map[string]string{"off": "off", "on": ""}[net])
			for b.Loop() {
				c := exec.Command(lb, "run", "--unattended", "--agent", "bench", "--", "true")
				c.Dir, c.Env = repo, e
				if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "not confined") {
					b.Fatalf("laserbrain run -- true: %v\n%s", err, out)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if net == "off" {
				noNet = per
			} else if noNet > 0 {
				b.ReportMetric(per/noNet, "x-no-network")
			}
		})
	}
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
