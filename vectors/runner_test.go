package vectors

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as an implementation under test: with
// VECTORS_TEST_IMPL set it serves the runner protocol (this package's
// Serve, or a deliberately broken one) instead of running the tests, so the
// runner is tested against a real process, pipes and signals.
func TestMain(m *testing.M) {
	switch os.Getenv("VECTORS_TEST_IMPL") {
	case "":
		os.Exit(m.Run())
	case "serve":
		if err := Serve(ServeInfo{Name: "test", Language: "go", Version: "1"}, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	case "broken":
		os.Exit(brokenImpl())
	case "no-hello":
		fmt.Println(`{"op":"ready"}`) // not the protocol's ready: no name, kinds, version
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "cannot find my data")
		os.Exit(3)
	}
	os.Exit(2)
}

// brokenImpl is a port with known faults, one per normalise input: "crash"
// kills it (after it says why on standard error), "hang" never answers,
// "garble" answers something that is not the protocol, "refuse" answers an
// error; every other input is normalised without stemming (so "the
// parsers" comes out wrong). A restarted process counts its starts in
// standard error.
func brokenImpl() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	say := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
	for in.Scan() {
		var msg struct {
			Op   string          `json:"op"`
			ID   int             `json:"id"`
			Kind string          `json:"kind"`
			In   json.RawMessage `json:"in"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			return 2
		}
		switch msg.Op {
		case "hello":
			say(Ready{Op: "ready", Protocol: 1, Name: "broken", Language: "go", Version: "0", Kinds: []string{"normalise"}})
		case "stop":
			say(Bye{Op: "bye"})
			return 0
		case "case":
			var text string
			_ = json.Unmarshal(msg.In, &text)
			switch text {
			case "crash":
				fmt.Fprintln(os.Stderr, "panic: index out of range in the stemmer")
				return 7
			case "hang":
				time.Sleep(time.Hour)
			case "garble":
				fmt.Println(`{"op":"answer","id":` + fmt.Sprint(msg.ID) + `,"out":["x"],"error":"both"}`)
				continue
			case "refuse":
				e := "this port has no stemmer yet"
				say(Answer{Op: "answer", ID: msg.ID, Error: &e})
				continue
			}
			var toks []string
			seen := map[string]bool{}
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'') }) {
				if !seen[w] && w != "the" && w != "a" {
					seen[w] = true
					toks = append(toks, w)
				}
			}
			if toks == nil {
				toks = []string{}
			}
			out, _ := json.Marshal(toks)
			say(Answer{Op: "answer", ID: msg.ID, Out: out})
		}
	}
	return 0
}

func self(t *testing.T, mode string, timeout time.Duration) RunOptions {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return RunOptions{Command: []string{exe}, Env: append(os.Environ(), "VECTORS_TEST_IMPL="+mode), Timeout: timeout}
}

func shippedFile(t *testing.T, name string) VectorFile {
	t.Helper()
	for _, f := range Shipped() {
		if f.Name == name {
			return VectorFile(f)
		}
	}
	t.Fatalf("no shipped file %s", name)
	return VectorFile{}
}

// Our implementation behind the protocol agrees with every case it is
// sent, kind by kind, exactly as Check does in process.
func TestRunOurImplementation(t *testing.T) {
	files := []VectorFile{shippedFile(t, "drift-parity.json"), shippedFile(t, "normalise.json"), shippedFile(t, "lint.json")}
	run, err := RunImplementation(context.Background(), self(t, "serve", 20*time.Second), files)
	if err != nil {
		t.Fatal(err)
	}
	if run.Impl.Name != "test" || run.Impl.Language != "go" || run.Restarts != 0 {
		t.Fatalf("impl %+v, %d restarts", run.Impl, run.Restarts)
	}
	want := map[string]int{}
	for _, f := range files {
		r, err := Check(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		want[r.Kind] += r.Passed
	}
	if len(run.Reports) != 3 {
		t.Fatalf("%d reports, want one per kind", len(run.Reports))
	}
	for _, r := range run.Reports {
		if len(r.Failures) != 0 || r.Passed != want[r.Kind] || r.Passed == 0 {
			t.Errorf("%s: %s (in process: %d passed); %+v", r.Kind, r.Summary(), want[r.Kind], r.Failures)
		}
	}
}

// A broken port: each wrong answer is reported with its case and a diff;
// a crash and a hang are errored cases, the port started again for the next;
// an answer that is not the protocol says where; kinds it does not list are
// skipped; and the run is not fatal.
func TestRunBrokenPort(t *testing.T) {
	file := VectorFile{Name: "fixture.json", Data: []byte(`{"kind":"normalise","source":"test","cases":[
		{"in":"alpha beta","out":["alpha","beta"]},
		{"in":"the parsers","out":["pars"]},
		{"in":"crash","out":["crash"]},
		{"in":"gamma","out":["gamma"]},
		{"in":"hang","out":["hang"]},
		{"in":"garble","out":["garbl"]},
		{"in":"refuse","out":["refus"]},
		{"in":"delta","out":["delta"]}]}`)}
	other := shippedFile(t, "laserscore.json")
	run, err := RunImplementation(context.Background(), self(t, "broken", 2*time.Second), []VectorFile{file, other})
	if err != nil {
		t.Fatal(err)
	}
	var norm, ls *Report
	for _, r := range run.Reports {
		switch r.Kind {
		case "normalise":
			norm = r
		case "laserscore":
			ls = r
		}
	}
	if norm == nil || ls == nil {
		t.Fatalf("reports: %+v", run.Reports)
	}
	if ls.Skipped != 31 || ls.Passed != 0 || !strings.Contains(ls.SkipWhy, "does not list") {
		t.Errorf("laserscore, a kind the port does not list: %s (%s)", ls.Summary(), ls.SkipWhy)
	}
	if norm.Passed != 3 || norm.Failed() != 1 || norm.Errored() != 4 || run.Restarts != 2 {
		t.Fatalf("normalise: %s, %d restarts; failures %+v", norm.Summary(), run.Restarts, norm.Failures)
	}
	byLabel := map[string]Failure{}
	for _, f := range norm.Failures {
		byLabel[strings.TrimPrefix(f.Label, "fixture.json ")] = f
	}
	checks := map[string]func(Failure) bool{
		"case 1": func(f Failure) bool {
			return f.Error == "" && f.Expected == `["pars"]` && f.Actual == `["parsers"]` && strings.Join(f.Diff, "|") == `/0: expected "pars", got "parsers"`
		},
		"case 2": func(f Failure) bool {
			return strings.Contains(f.Error, "exited with status 7") && strings.Contains(f.Error, "index out of range in the stemmer")
		},
		"case 4": func(f Failure) bool { return strings.Contains(f.Error, "no answer within 2s") },
		"case 5": func(f Failure) bool {
			return strings.Contains(f.Error, "an answer carries exactly one of out, error and skip; this one has out and error")
		},
		"case 6": func(f Failure) bool { return f.Error == "this port has no stemmer yet" },
	}
	for label, ok := range checks {
		f, found := byLabel[label]
		if !found || !ok(f) {
			t.Errorf("%s reported as %+v", label, f)
		}
	}
	var text strings.Builder
	WriteReport(&text, "broken", norm)
	for _, want := range []string{"FAIL broken: fixture.json case 1 (normalise)", `diff:     /0: expected "pars", got "parsers"`, "ERROR broken: fixture.json case 4 (normalise)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// An implementation that will not start, or answers the handshake with
// something else, is an error before anything runs.
func TestRunNotStarted(t *testing.T) {
	files := []VectorFile{shippedFile(t, "normalise.json")}
	for mode, want := range map[string]string{
		"exit":     "exited with status 3 before answering; its last words on standard error: cannot find my data",
		"no-hello": "the ready message does not follow its schema: /: missing properties: 'protocol', 'name', 'language', 'version', 'kinds'",
	} {
		_, err := RunImplementation(context.Background(), self(t, mode, 5*time.Second), files)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), ErrNotStarted.Error()) {
			t.Errorf("%s: %v; want %q", mode, err, want)
		}
	}
	if _, err := RunImplementation(context.Background(), RunOptions{Command: []string{"/nonexistent/port"}}, files); err == nil {
		t.Error("a missing program started")
	}
}
