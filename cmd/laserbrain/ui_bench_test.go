package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// BenchmarkUI50Agents is the live view's load: fifty agents checking at once,
// every agent a check each round, a round every 200 ms (250 checks a
// second), while the real `laserbrain ui` process watches the fleet and a
// page's event stream reads every change. Each iteration is one round.
//
// Reported: latency-p50/p95/max-ms, from a check's write being done to the
// stream's first patch showing the agent's new count of checks; ui-cores,
// the server's CPU time over the wall time (from /proc, its user and
// system time); ui-idle-cores, the same server over as long a time with
// nothing changing (the baseline of the same run); and x-checks, the
// server's CPU per check over the writers' own CPU per check. It fails
// when the server uses a core or more, or the p95 latency reaches 2 s.
func BenchmarkUI50Agents(b *testing.B) {
	const agents = 50
	const every = 200 * time.Millisecond
	lb := buildLaserbrain(b)
	dir := b.TempDir()
	repo := filepath.Join(dir, "repo")
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	b.Setenv("LASERBRAIN_HOME", home)
	b.Setenv("LASERBRAIN_FLEET", "bench-ui")
	b.Setenv("LASERBRAIN_STORE", "")
	ctx := context.Background()
	st, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if err != nil {
		b.Fatal(err)
	}
	sup := &agentrun.Tracker{}
	defer sup.Close()
	names := make([]string, agents)
	goals := make([]string, agents)
	for i := range agents {
		id := fmt.Sprintf("bench%02d", i)
		if err := st.CreateRun(ctx, fleet.Run{ID: id, Agent: "agent", Fleet: "bench-ui", Dir: repo, Created: time.Now()}); err != nil {
			b.Fatal(err)
		}
		names[i] = "agent:" + id
		goals[i] = benchGoal(i)
	}
	check := func(i int) {
		_, err := sup.Check(ctx, fmt.Sprintf("bench%02d", i), agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: goals[i],
			Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}})
		if err != nil {
			b.Error(err)
		}
	}
	for i := range agents {
		check(i) // each agent grounded before the server starts
	}

	// The server, its link, and a page's stream.
	srv := exec.Command(lb, "ui", "--repo", repo)
	srv.Env = os.Environ()
	link, stop := startUI(b, srv)
	defer stop()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	if resp, err := client.Get(link); err != nil || resp.StatusCode != 200 {
		b.Fatalf("the link: %v %v", resp, err)
	}
	base := link[:strings.Index(link, "/?")]
	resp, err := client.Get(base + "/events")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()

	// The stream's view of each agent's checks, and when each count was
	// first shown.
	var mu sync.Mutex
	shown := map[string]int{}
	seen := map[string]time.Time{} // agent#count → when first shown
	rowRE := regexp.MustCompile(`data-agent="([^"]+)" data-status="[^"]*" data-steps="([0-9]+)"`)
	first := make(chan struct{})
	patched := make(chan struct{}, 1) // a patch of the agents came
	go func() {
		rd := bufio.NewReaderSize(resp.Body, 1<<20)
		once := sync.Once{}
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			now := time.Now()
			var m struct{ Sections map[string]string }
			if json.Unmarshal([]byte(data), &m) != nil {
				continue
			}
			if html, ok := m.Sections["agents"]; ok {
				mu.Lock()
				for _, r := range rowRE.FindAllStringSubmatch(html, -1) {
					n, _ := strconv.Atoi(r[2])
					for k := shown[r[1]] + 1; k <= n; k++ {
						seen[r[1]+"#"+strconv.Itoa(k)] = now
					}
					shown[r[1]] = max(shown[r[1]], n)
				}
				mu.Unlock()
				once.Do(func() { close(first) })
				select {
				case patched <- struct{}{}:
				default:
				}
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		b.Fatal("the stream sent no agents within 30 s")
	}

	idleFrom := procCPU(b, srv.Process.Pid)
	idleStart := time.Now()
	time.Sleep(time.Duration(b.N) * every) // nothing changes: the baseline
	idleCores := (procCPU(b, srv.Process.Pid) - idleFrom).Seconds() / time.Since(idleStart).Seconds()

	done := map[string]time.Time{}
	var dmu sync.Mutex
	var self0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	cpu0, start := procCPU(b, srv.Process.Pid), time.Now()
	next := start
	b.ResetTimer()
	for round := 0; round < b.N; round++ {
		var wg sync.WaitGroup
		for i := range agents {
			wg.Go(func() {
				check(i)
				dmu.Lock()
				done[names[i]+"#"+strconv.Itoa(round+2)] = time.Now()
				dmu.Unlock()
			})
		}
		wg.Wait()
		next = next.Add(every)
		time.Sleep(time.Until(next))
	}
	// Wait (at most 10 s) for the stream to show the last round.
	deadline := time.After(10 * time.Second)
	for waiting := true; waiting; {
		mu.Lock()
		all := true
		for _, n := range names {
			all = all && shown[n] >= b.N+1
		}
		mu.Unlock()
		if all {
			break
		}
		select {
		case <-patched:
		case <-deadline:
			waiting = false
		}
	}
	b.StopTimer()
	wall := time.Since(start)
	cpu := procCPU(b, srv.Process.Pid) - cpu0
	var self1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	writers := tv(self1.Utime) + tv(self1.Stime) - tv(self0.Utime) - tv(self0.Stime)

	mu.Lock()
	var lat []time.Duration
	missing := 0
	for key, at := range done {
		if s, ok := seen[key]; ok {
			lat = append(lat, max(0, s.Sub(at)))
		} else {
			missing++
		}
	}
	mu.Unlock()
	if missing > 0 {
		b.Fatalf("%d of %d checks never reached the page", missing, len(done))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	cores := cpu.Seconds() / wall.Seconds()
	b.ReportMetric(pct(0.5), "latency-p50-ms")
	b.ReportMetric(pct(0.95), "latency-p95-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "latency-max-ms")
	b.ReportMetric(cores, "ui-cores")
	b.ReportMetric(idleCores, "ui-idle-cores")
	if writers > 0 {
		b.ReportMetric(cpu.Seconds()/writers.Seconds(), "x-checks")
	}
	b.ReportMetric(float64(len(done))/wall.Seconds(), "checks/s")
	if cores >= 1 {
		b.Fatalf("the server used %.2f cores (at most one)", cores)
	}
	if p95 := pct(0.95); p95 >= 2000 {
		b.Fatalf("p95 latency %.0f ms (under 2 s)", p95)
	}
}

// benchGoal is a goal of its own for agent i: two words no other agent's
// goal has, so fifty grounds do not all collide.
func benchGoal(i int) string {
	words := strings.Fields(`acorn badge cable delta ember fable gravel harbor iris jasper kettle lantern meadow nectar orbit pepper quartz
raven saddle timber umber velvet walnut xenon yarrow zephyr anchor bramble cobalt dune falcon glacier hollow indigo juniper kelp
lichen marble nimbus onyx pebble quill ripple sorrel thistle urchin vortex willow yonder zinnia amber birch cedar dahlia elm fern
garnet hazel ivy jade kestrel lotus maple nutmeg olive poppy quince rosemary sage tulip umbra violet wren yew zest alder basil
clover daisy egret fennel ginger heron iceberg jasmine koala lemur mango nettle otter parsley quail reed spruce tansy upland
viper wasabi yucca zircon aspen beacon canyon delta2 estuary fjord grove heath inlet jetty knoll lagoon mesa nook oasis prairie
quarry ridge savanna tundra vale wharf yard zenith arbor bluff cove dell eddy ford glen hill isle`)
	return "implement the " + words[2*i] + " " + words[2*i+1] + " feature"
}

// procCPU is a process's user and system time, from /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th (clock ticks, 100 a second on Linux).
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stt) * (time.Second / 100)
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
