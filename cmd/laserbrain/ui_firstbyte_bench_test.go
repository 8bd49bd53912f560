package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkUIFirstByte100x1000: how long a person who starts `laserbrain
// ui` on a fleet of 100 agents × 1,000 checks waits for the page — from
// the process's start to the first byte of the page (its top: the
// stylesheet and header, sent before the fleet is read), and to the
// page's last byte (every section, once the fleet is read) — medians
// over the benchmark's rounds, a fresh server each. The target is a first
// byte within 100 ms; the benchmark reports, and fails only past a second
// (a loaded machine's wait for a core is not the view's).
func BenchmarkUIFirstByte100x1000(b *testing.B) {
	bin := buildLaserbrain(b)
	_, repo, env := reportFleet100x1000(b, b.TempDir())
	benchUIFirstByte(b, bin, repo, env, "100 agents × 1,000 checks", time.Second)
}

// clusterWords name the 22 jobs of the clustered fleets.
var clusterWords = []string{"lexer", "parser", "linker", "loader", "scheduler", "allocator", "tokenizer", "renderer", "compiler", "resolver",
	"indexer", "planner", "router", "encoder", "decoder", "mapper", "reducer", "sampler", "watcher", "builder", "archiver", "validator"}

// BenchmarkUIFirstByte1000Agents: the same wait on 1,000 agents × 100
// checks (recorded as the 100 × 1,000 fleet's are), in two shapes: goals that overlap in 22 clusters (each agent's
// shares six of its eight words with its cluster's: they collide), and 22
// clusters of identical goals. The target is a first byte within 300 ms;
// it fails past three seconds.
func BenchmarkUIFirstByte1000Agents(b *testing.B) {
	bin := buildLaserbrain(b)
	shapes := []struct {
		name string
		goal func(int) string
	}{
		{"overlapping", func(a int) string {
			return fmt.Sprintf("build the %s feature for release %d", clusterWords[a%len(clusterWords)], a)
		}},
		{"identical", func(a int) string { return "build the " + clusterWords[a%len(clusterWords)] + " feature" }},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			dir := b.TempDir()
			home, repo := filepath.Join(dir, "home"), filepath.Join(dir, "repo")
			if err := os.MkdirAll(repo, 0o755); err != nil {
				b.Fatal(err)
			}
			buildReportFleet(b, home, repo, 1000, 100, sh.goal)
			env := append(streamEnv(home), "LASERBRAIN_FLEET=bench")
			benchUIFirstByte(b, bin, repo, env, "1,000 agents × 100 checks, goals "+sh.name, 3*time.Second)
		})
	}
}

// benchUIFirstByte measures laserbrain ui on repo each round and reports
// the medians: the page's first byte, and its last.
func benchUIFirstByte(b *testing.B, bin, repo string, env []string, fleet string, bound time.Duration) {
	var first, whole []time.Duration
	for b.Loop() {
		f, w := uiFirstByte(b, bin, repo, env)
		first, whole = append(first, f), append(whole, w)
	}
	fm, wm := medianOf(first), medianOf(whole)
	b.ReportMetric(float64(fm.Microseconds())/1000, "first-byte-ms")
	b.ReportMetric(float64(wm.Microseconds())/1000, "page-ms")
	b.Logf("laserbrain ui on %s: the page's first byte %v (%v–%v), its last %v (%v–%v) after the start (medians of %d, and their spread)",
		fleet, fm, slices.Min(first), slices.Max(first), wm, slices.Min(whole), slices.Max(whole), len(first))
	if fm > bound {
		b.Errorf("the page's first byte came %v after the start, over %v", fm, bound)
	}
}

// uiFirstByte starts laserbrain ui on repo, opens its link as a browser
// does (the link sets the session and sends the browser on to the page),
// and returns how long after the start the page began and ended.
func uiFirstByte(b *testing.B, bin, repo string, env []string) (time.Duration, time.Duration) {
	srv := exec.Command(bin, "ui", "--repo", repo)
	srv.Env = env
	start := time.Now()
	link, stop := startUI(b, srv)
	defer stop()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(link)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("the link: %s", resp.Status)
	}
	page, err := resp.Location()
	if err != nil {
		b.Fatal(err)
	}
	var firstByte time.Duration
	req, err := http.NewRequest(http.MethodGet, page.String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { firstByte = time.Since(start) },
	}))
	resp, err = c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	whole := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `<section id="agents"`) {
		b.Fatalf("the page: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	return firstByte, whole
}

// startUI starts srv, a laserbrain ui, and returns the link it prints
// first (within a minute; its further output is read and dropped) and
// stop, which interrupts it and waits for its end.
func startUI(b *testing.B, srv *exec.Cmd) (link string, stop func()) {
	b.Helper()
	out, err := srv.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }
	links := make(chan string, 1)
	go func() {
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); !sent && strings.HasPrefix(l, "http://") {
				links <- l
				sent = true
			}
		}
		close(links)
	}()
	select {
	case link = <-links:
	case <-time.After(time.Minute):
	}
	if link == "" {
		stop()
		b.Fatal("laserbrain ui printed no link")
	}
	return link, stop
}
