package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

// The stream answers each line as soon as it is read: the test writes one
// line, reads its verdict with stdin still open, then writes the next. A
// stream that buffered its output until EOF would time out here. Drives
// the real binary (testscript.Main put it on PATH).
func TestStreamFlushesPerLine(t *testing.T) {
	cmd := exec.Command("laserbrain", "check", "--stream", "--run", "live", "--new-run")
	cmd.Env = append(cmd.Environ(), "LASERBRAIN_HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	// Upstream seq 0: the Φ ramp.
	for i, want := range []string{`"reason":"grounded","phi":0,`, `"reason":"advancing","phi":0.03,`, `"reason":"advancing","phi":0.06,`} {
		fmt.Fprintf(stdin, `{"goal":"ship the sky billboard","progress":"advancing","distance":%d}`+"\n", 5-i)
		got := make(chan string, 1)
		go func() { l, _ := out.ReadString('\n'); got <- l }()
		select {
		case l := <-got:
			if !strings.Contains(l, want) {
				t.Fatalf("line %d: %s, want %s", i+1, l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no verdict for line %d while the stream stays open", i+1)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// streamOnce runs the stream reader over input on a fresh in-memory store.
func streamOnce(t testing.TB, input []byte) (out []byte, bad int) {
	var buf bytes.Buffer
	s := newStreamer(laserbrain.NewMemStore(), "", agentrun.NewChecks(&agentrun.Tracker{}))
	bad, err := s.run(bytes.NewReader(input), &buf)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), bad
}

// expectedOutputs counts the lines the stream must answer: every line that
// is not blank (the last one may lack its newline).
func expectedOutputs(input []byte) int {
	n := 0
	lines := bytes.Split(input, []byte("\n"))
	for i, l := range lines {
		if i == len(lines)-1 && len(l) == 0 {
			break
		}
		if len(l) > maxStreamLine || len(bytes.TrimSpace(bytes.TrimSuffix(l, []byte("\r")))) > 0 {
			n++
		}
	}
	return n
}

// FuzzStream: whatever comes in, the stream writes exactly one JSON object
// per non-blank line, each a verdict or an error naming its line, with the
// line numbers in order; bad lines are counted; nothing panics.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		`{"goal":"ship the sky billboard","progress":"advancing","distance":5}` + "\n" + `{"goal":"ship","distance":4}`,
		"not json\n\n{}\n",
		`{"goal":5}` + "\n" + `{"goal":"x","distance":[1]}` + "\r\n" + `{"goal":"x"} {"goal":"y"}`,
		`{"goal":"a","run":"bad id!"}` + "\n" + `{"goal":"İstanbul","progress":null,"distance":"1e1","user_turn":true}`,
		`{"goal":"read auth.py","parent_goal":"","doing":"since i ran it","run":"r-1"}`,
		"\n\n   \n\t\n",
		`{"goal":"\u0000","distance":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		out, bad := streamOnce(t, input)
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		if len(out) == 0 {
			lines = nil
		}
		if want := expectedOutputs(input); len(lines) != want {
			t.Fatalf("%d output lines for %d non-blank input lines\ninput: %q\noutput: %s", len(lines), want, input, out)
		}
		errors, lastLine := 0, 0
		for _, l := range lines {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(l, &obj); err != nil {
				t.Fatalf("output line is not a JSON object: %s", l)
			}
			if raw, isErr := obj["error"]; isErr {
				var n int
				var env struct {
					Code    int    `json:"code"`
					Kind    string `json:"kind"`
					Message string `json:"message"`
				}
				if json.Unmarshal(obj["line"], &n) != nil || n <= lastLine || json.Unmarshal(raw, &env) != nil ||
					env.Code != 2 && env.Code != 8 || env.Kind == "" || env.Message == "" {
					t.Fatalf("bad error object %s after line %d", l, lastLine)
				}
				lastLine = n
				errors++
				continue
			}
			for _, k := range []string{"drifting", "reason", "phi", "laserscore", "advice", "run", "step"} {
				if _, ok := obj[k]; !ok {
					t.Fatalf("verdict without %q: %s", k, l)
				}
			}
		}
		if errors != bad {
			t.Fatalf("%d error lines but %d counted bad", errors, bad)
		}
	})
}

// A line longer than the limit is reported and skipped; the next line is
// read normally.
func TestStreamLongLine(t *testing.T) {
	long := `{"goal":"` + strings.Repeat("x", maxStreamLine) + `"}`
	out, bad := streamOnce(t, []byte(long+"\n"+`{"goal":"ship it"}`+"\n"))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if bad != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], `{"error":{"code":2,"kind":"usage","message":"line is longer than`) || !strings.Contains(lines[1], `"reason":"grounded"`) {
		t.Errorf("bad %d, output %q", bad, out)
	}
}

// streamInput is n lines cycling through upstream-like states on one run.
func streamInput(n int) []byte { return streamInputRuns(n, nil) }

// streamInputRuns is streamInput with each line's run named by run(i)
// ("" for none).
func streamInputRuns(n int, run func(i int) string) []byte {
	states := []string{
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":8}`,
		`{"goal":"validate CSV columns before import","progress":"advancing","distance":6,"parent_goal":"add a CSV importer to the admin panel"}`,
		`{"goal":"add a CSV importer to the admin panel","progress":"advancing","distance":5}`,
		`{"goal":"refactor the ORM base class","progress":"advancing","distance":5}`,
		`{"goal":"add a CSV importer to the admin panel","progress":"stuck","distance":5}`,
		`{"goal":"add the CSV importer to the admin panel","progress":"advancing","distance":4}`,
	}
	var b bytes.Buffer
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		line := states[i%len(states)]
		if run != nil {
			if id := run(i); id != "" {
				extra := `,"run":"` + id + `"`
				if !seen[id] {
					extra += `,"new_run":true` // a run's first line starts it
					seen[id] = true
				}
				line = strings.TrimSuffix(line, "}") + extra + "}"
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// pythonStepNs is the reference's stated cost of one check (0.7 ms). The
// reference cannot be run here (PyPI is unreachable), so it is a constant,
// not a measurement.
const pythonStepNs = 700_000

// BenchmarkCheckStream10k times the real binary checking 10,000 streamed
// lines (one run, the store in a temp dir), as `laserbrain check --stream
// <in >out` runs it, and reports ns/step (process start included), CPU
// ns/step, and the throughput ratio against the reference's 0.7 ms a step.
func BenchmarkCheckStream10k(b *testing.B) { benchCheckStream(b, false, nil) }

// BenchmarkCheckStream10kPipe is the same with both ends pipes to this
// process, as when another program drives the stream.
func BenchmarkCheckStream10kPipe(b *testing.B) { benchCheckStream(b, true, nil) }

// BenchmarkCheckStream10kFresh200 is the same 10,000 lines as 200 fresh
// runs of 50 checks each, one after the other (a new run every 50 lines,
// new in every iteration): what creating runs adds to a stream.
func BenchmarkCheckStream10kFresh200(b *testing.B) {
	iter := 0
	benchCheckStream(b, false, func() func(int) string {
		iter++
		return func(i int) string { return fmt.Sprintf("f%d-%d", iter, i/50) }
	})
}

// BenchmarkCheckStream10kInterleaved8 is the same 10,000 lines as an
// interleaved fleet of 8 agents (line i goes to run i mod 8).
func BenchmarkCheckStream10kInterleaved8(b *testing.B) {
	iter := 0
	benchCheckStream(b, false, func() func(int) string {
		iter++
		return func(i int) string { return fmt.Sprintf("a%d-%d", iter, i%8) }
	})
}

// benchCheckStream times the binary on 10,000 lines; runs, when set, names
// each iteration's runs.
func benchCheckStream(b *testing.B, pipes bool, runs func() func(int) string) {
	const steps = 10_000
	dir := b.TempDir()
	inPath := filepath.Join(dir, "in.jsonl")
	write := func() {
		var name func(int) string
		if runs != nil {
			name = runs()
		}
		if err := os.WriteFile(inPath, streamInputRuns(steps, name), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	bin := buildLaserbrain(b)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		write()
		b.StartTimer()
		cmd := exec.Command(bin, "check", "--stream")
		cmd.Env = append(cmd.Environ(), "LASERBRAIN_HOME="+home)
		in, _ := os.Open(inPath)
		out, _ := os.Create(filepath.Join(dir, "out.jsonl"))
		if pipes {
			cmd.Stdin, cmd.Stdout = bufio.NewReader(in), io.Discard // os/exec puts pipes between
		} else {
			cmd.Stdin, cmd.Stdout = in, out
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	perStep := float64(b.Elapsed().Nanoseconds()) / float64(b.N*steps)
	b.ReportMetric(perStep, "ns/step")
	b.ReportMetric(pythonStepNs/perStep, "x-reference")
	// CPU time of the process, less sensitive to a busy machine than the
	// wall clock.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
}

// BenchmarkStreamInProcess is the same stream without the process and the
// disk: the baseline the CLI figure is compared with.
func BenchmarkStreamInProcess10k(b *testing.B) {
	const steps = 10_000
	input := streamInput(steps)
	for b.Loop() {
		s := newStreamer(laserbrain.NewMemStore(), "", agentrun.NewChecks(&agentrun.Tracker{}))
		if _, err := s.run(bytes.NewReader(input), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}

// parseStreamLineRef is the stream line read with encoding/json, key by key:
// the reference the hand-written reader is fuzzed against.
func parseStreamLineRef(line []byte) (laserbrain.StepInput, lineRun, bool) {
	in := laserbrain.StepInput{Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}
	dec := json.NewDecoder(bytes.NewReader(line))
	var obj map[string]json.RawMessage
	if dec.Decode(&obj) != nil || obj == nil {
		return in, lineRun{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return in, lineRun{}, false
	}
	// A map keeps exact keys, and the last of repeated ones, as the reader must.
	str := func(raw json.RawMessage, dst *string) bool {
		var p *string
		if json.Unmarshal(raw, &p) != nil {
			return false
		}
		*dst = ""
		if p != nil {
			*dst = *p
		}
		return true
	}
	var run lineRun
	for k, raw := range obj {
		ok := true
		switch k {
		case "goal":
			ok = str(raw, &in.Goal)
		case "parent_goal":
			ok = str(raw, &in.ParentGoal)
		case "doing":
			ok = str(raw, &in.Doing)
		case "next":
			ok = str(raw, &in.Next)
		case "blocked":
			ok = str(raw, &in.Blocked)
		case "run":
			ok = str(raw, &run.ID)
		case "progress":
			ok = str(raw, &in.Progress)
		case "distance":
			// A whole number from 0 to 10, or null (unknown).
			var d *float64
			if json.Unmarshal(raw, &d) != nil {
				return in, lineRun{}, false
			}
			in.Distance = laserbrain.NoDistance
			if d != nil {
				if *d < 0 || *d > 10 || *d != math.Trunc(*d) {
					return in, lineRun{}, false
				}
				in.Distance = laserbrain.Dist(int(*d))
			}
		case "user_turn", "new_run":
			var b *bool
			ok = json.Unmarshal(raw, &b) == nil
			if k == "user_turn" {
				in.UserTurn = b != nil && *b
			} else {
				run.New = b != nil && *b
			}
		default:
			return in, lineRun{}, false
		}
		if !ok {
			return in, lineRun{}, false
		}
	}
	if run.ID != "" && laserbrain.ValidateRunID(run.ID) != nil {
		return in, lineRun{}, false
	}
	return in, run, true
}

// FuzzStreamLine: the hand-written line reader accepts exactly the lines
// the encoding/json reading accepts, and reads them the same.
func FuzzStreamLine(f *testing.F) {
	for _, s := range []string{
		`{"goal":"ship the sky billboard","progress":"advancing","distance":5}`,
		`{"goal":"x","goal":null,"progress":"stuck","progress":null}`,
		` { "goal" : "a\u00e9\ud83d\ude00\"" , "distance" : -0.5e1 , "user_turn" : true , "run" : "r.1" } `,
		`{"goal":"\xff\xfe","distance":"7.9","parent_goal":"","doing":"a","next":"b","blocked":null}`,
		`{"goal":[1]}`, `{"distance":{"a":1}}`, `{"distance":01}`, `{"distance":1.}`, `{"goal":"x",}`,
		`{}`, `[]`, `"x"`, `{"GOAL":"x"}`, `{"goal":"x"}}`, `{"goal":"\u0000"}`, `{"goal":"a` + "\t" + `b"}`,
		`{"user_turn":null,"run":null}`, `{"run":"bad id"}`, `{"distance":true}`, `{"distance":1e999}`,
		`{"distance":11}`, `{"distance":-1}`, `{"distance":3.5}`, `{"distance":"three"}`, `{"distance":3.0}`, `{"distance":-0}`,
		`{"run":"r1","new_run":true}`, `{"new_run":"yes"}`, `{"new_run":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gotRun, err := parseStreamLine(line)
		want, wantRun, ok := parseStreamLineRef(line)
		var in interner
		for range 2 { // the interned path reads the same, first and second time
			if g, r, e := parseStreamLineInterned(line, &in); (e == nil) != (err == nil) || g != got || r != gotRun {
				t.Fatalf("%+v: interned reading differs: %+v %+v %v", line, g, r, e)
			}
		}
		if (err == nil) != ok {
			t.Fatalf("%+v: reader error %v, encoding/json accepts: %v", line, err, ok)
		}
		if ok && (got != want || gotRun != wantRun) {
			t.Fatalf("%+v:\n reader %+v run %+v\n   json %+v run %+v", line, got, gotRun, want, wantRun)
		}
	})
}

// BenchmarkStreamLocalStore10k is the stream in process but on the real
// directory store and a real pipe: what the CLI adds beyond process start.
func BenchmarkStreamLocalStore10k(b *testing.B) {
	const steps = 10_000
	input := streamInput(steps)
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	for b.Loop() {
		store, err := newFactory(cli.System()).RunStore()
		if err != nil {
			b.Fatal(err)
		}
		pr, pw, _ := os.Pipe()
		done := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, pr); close(done) }()
		s := newStreamer(store, "", agentrun.NewChecks(&agentrun.Tracker{}))
		if _, err := s.run(bytes.NewReader(input), pw); err != nil {
			b.Fatal(err)
		}
		if err := s.close(); err != nil {
			b.Fatal(err)
		}
		store.Close()
		pw.Close()
		<-done
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}
