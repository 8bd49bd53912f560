package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/childtest"
	"github.com/laserkit/laserkit/laserbrain"
)

// Place is one empty store location (a home, a database); a nil Env skips
// the process tests.
type Place = childtest.Place[laserbrain.Store]

// childEnv names the job a re-run test binary does.
const childEnv = "LASERKIT_STORETEST_CHILD"

// Child runs the job a parent test gave this process, if any, and exits;
// otherwise it returns at once. Call it first in TestMain.
func Child(open func() (laserbrain.Store, error)) {
	childtest.Serve(childEnv, func(job string) error { return runChild(job, open) })
}

// runChild does "step RUN N GOAL": N times open the run, take one step on
// GOAL, save, close and flush, each time on a freshly opened store.
func runChild(job string, open func() (laserbrain.Store, error)) error {
	f := strings.SplitN(job, " ", 4)
	if len(f) != 4 || f[0] != "step" {
		return fmt.Errorf("unknown job %q", job)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return err
	}
	ctx := context.Background()
	for i := 0; i < n; i++ {
		s, err := open()
		if err != nil {
			return err
		}
		if err := stepOnce(ctx, s, f[1], f[3]); err != nil {
			s.Close()
			return err
		}
		if err := s.Close(); err != nil {
			return err
		}
	}
	return nil
}

func stepOnce(ctx context.Context, s laserbrain.Store, run, goal string) error {
	h, err := s.OpenRun(ctx, run)
	if err != nil {
		return err
	}
	defer h.Close()
	if _, err := h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}); err != nil {
		return err
	}
	if err := h.Save(ctx); err != nil {
		return err
	}
	return s.Flush(ctx)
}

// sequence is grammatical states with every kind of verdict: ground,
// advancing, a sub-task, drift, a stuck interrupt after a drift, a user
// turn's reground, a rejected parent, a cycle.
var sequence = []laserbrain.StepInput{
	{Goal: "ship the sky billboard", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)},
	{Goal: "ship the sky billboard", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(4)},
	{Goal: "rewrite the about page", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(4)},
	{Goal: "ship the sky billboard", Progress: laserbrain.ProgressStuck, Distance: laserbrain.Dist(4)},
	{Goal: "add an LRU cache", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(6), UserTurn: true},
	{Goal: "tune the eviction policy", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(6), ParentGoal: "add an LRU cache"},
	{Goal: "paint the lobby", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(6), ParentGoal: "ship the sky billboard"},
	{Goal: "add an LRU cache", Progress: laserbrain.ProgressCircling, Distance: laserbrain.Distance{}},
	{Goal: "add an LRU cache", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(3), Doing: "because the hit rate fell, I saw 40% misses"},
	{Goal: "add an LRU cache", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(2)},
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// untimed is v as JSON without its clock readings ("at", "created"): the
// two runs compared were stepped at different moments.
func untimed(t testing.TB, v any) string {
	t.Helper()
	var x any
	if err := json.Unmarshal([]byte(asJSON(t, v)), &x); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "at")
			delete(x, "created")
			for _, v := range x {
				strip(v)
			}
		case []any:
			for _, v := range x {
				strip(v)
			}
		}
	}
	strip(x)
	return asJSON(t, x)
}

// Run runs the suite; newPlace returns a fresh empty place each call.
func Run(t *testing.T, newPlace func(t *testing.T) Place) {
	t.Run("a run continues across stores with the verdicts of an in-memory run", func(t *testing.T) { testContinuesAcrossStores(t, newPlace) })
	t.Run("missing runs and bad ids", func(t *testing.T) { testMissingRuns(t, newPlace) })
	t.Run("a held run waits for its holder", func(t *testing.T) { testHeldRunWaits(t, newPlace) })
	t.Run("contexts from several stores add up", func(t *testing.T) { testContextsAddUp(t, newPlace) })
	t.Run("goroutines stepping one run lose no step", func(t *testing.T) { testGoroutinesStepOneRun(t, newPlace) })
	t.Run("processes stepping one run and their own lose no step", func(t *testing.T) { testProcessesStepOneRun(t, newPlace) })
	t.Run("export and import", func(t *testing.T) { testExportImport(t, newPlace) })
}

// testContinuesAcrossStores is the case "a run continues across stores with the verdicts of an in-memory run".
func testContinuesAcrossStores(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	p := newPlace(t)
	ref := laserbrain.NewRun(laserbrain.RunOptions{ID: "seq"})
	for i, in := range sequence {
		want, _ := ref.Step(in)
		s := p.Open(t)
		h, err := s.OpenRun(ctx, "seq")
		if err != nil {
			t.Fatal(err)
		}
		if h.Created() != (i == 0) {
			t.Fatalf("check %d: created = %v", i+1, h.Created())
		}
		got, err := h.Run().Step(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Save(ctx); err != nil {
			t.Fatal(err)
		}
		h.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// The context store differs (shared vs private), so compare
		// what the verdict rules decide, not the judgment's inputs.
		if g, w := asJSON(t, got), asJSON(t, want); g != w {
			t.Fatalf("check %d:\n store  %s\n memory %s", i+1, g, w)
		}
	}
	r, err := p.Open(t).ReadRun(ctx, "seq")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := untimed(t, r.Steps()), untimed(t, ref.Steps()); g != w {
		t.Fatalf("history:\n store  %s\n memory %s", g, w)
	}
	if g, w := untimed(t, r), untimed(t, ref); g != w {
		t.Fatalf("state:\n store  %s\n memory %s", g, w)
	}
}

// testMissingRuns is the case "missing runs and bad ids".
func testMissingRuns(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	s := newPlace(t).Open(t)
	if _, err := s.ReadRun(ctx, "nope"); !errors.Is(err, laserbrain.ErrNoRun) {
		t.Fatalf("ReadRun(nope) = %v, want ErrNoRun", err)
	}
	for _, id := range []string{"../x", "", "a b", strings.Repeat("x", 65)} {
		if _, err := s.OpenRun(ctx, id); err == nil {
			t.Errorf("OpenRun(%q) accepted", id)
		}
	}
}

// testHeldRunWaits is the case "a held run waits for its holder".
func testHeldRunWaits(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	p := newPlace(t)
	a, b := p.Open(t), p.Open(t)
	h, err := a.OpenRun(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		h2, err := b.OpenRun(ctx, "held")
		if err == nil {
			h2.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second OpenRun returned while the run was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := h.Run().Step(sequence[0]); err != nil {
		t.Error(err)
	}
	if err := h.Save(ctx); err != nil {
		t.Error(err)
	}
	h.Close()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("after release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second OpenRun still waits after the release")
	}
}

// testContextsAddUp is the case "contexts from several stores add up".
func testContextsAddUp(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	p := newPlace(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := p.Open(t)
			for k := 0; k < 5; k++ {
				if err := stepOnce(ctx, s, fmt.Sprintf("ctx%d-%d", i, k), "ship the sky billboard"); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	e, ok, err := p.Open(t).Contexts().Context("ctx_2qbvsr") // "ship the sky billboard"
	if err != nil || !ok || e.Checks != 20 || e.SessionCount != 20 || e.Spellings["⟨billboard|ship|sky⟩ advancing d5"] != 20 || e.BestDistance != 5 {
		t.Fatalf("entry %+v (ok %v, err %v), want 20 checks from 20 runs", e, ok, err)
	}
}

// testGoroutinesStepOneRun is the case "goroutines stepping one run lose no step".
func testGoroutinesStepOneRun(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	p := newPlace(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := p.Open(t)
			for k := 0; k < 10; k++ {
				if err := stepOnce(ctx, s, "busy", "keep the cache warm"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkContiguous(t, p.Open(t), "busy", 40)
}

// testProcessesStepOneRun is the case "processes stepping one run and their own lose no step".
func testProcessesStepOneRun(t *testing.T, newPlace func(t *testing.T) Place) {
	p := newPlace(t)
	env := p.Env()
	if env == nil {
		t.Skip("this place cannot be opened from another process")
	}
	const procs, each = 3, 12
	var cmds []*exec.Cmd
	start := func(job string) {
		cmd := childtest.Command(childEnv, job, env)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("child %q said: %s", job, out.String())
			}
		})
	}
	for i := 0; i < procs; i++ {
		start(fmt.Sprintf("step shared %d ship the sky billboard", each))
		start(fmt.Sprintf("step own%d %d ship the sky billboard", i, each))
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("a child failed: %v", err)
		}
	}
	if t.Failed() {
		return
	}
	s := p.Open(t)
	checkContiguous(t, s, "shared", procs*each)
	for i := 0; i < procs; i++ {
		checkContiguous(t, s, fmt.Sprintf("own%d", i), each)
	}
	e, _, err := s.Contexts().Context("ctx_2qbvsr")
	if err != nil || e.Checks != 2*procs*each || e.SessionCount != procs+1 {
		t.Fatalf("context after the processes: %+v, %v; want %d checks from %d runs", e, err, 2*procs*each, procs+1)
	}
}

// Save opens run id in s, takes the steps and saves it, failing t on any
// error.
func Save(t testing.TB, s laserbrain.Store, id string, steps ...laserbrain.StepInput) {
	t.Helper()
	ctx := context.Background()
	h, err := s.OpenRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, in := range steps {
		if _, err := h.Run().Step(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
}

// testExportImport is the case "export and import".
func testExportImport(t *testing.T, newPlace func(t *testing.T) Place) {
	ctx := context.Background()
	from := newPlace(t).Open(t)
	for i := 0; i < 3; i++ {
		Save(t, from, fmt.Sprintf("x%d", i), sequence[:3+i]...)
	}
	if err := from.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	exp, ok := from.(laserbrain.Exporter)
	if !ok {
		t.Fatal("the store cannot be exported")
	}
	to := newPlace(t).Open(t)
	imp, ok := to.(laserbrain.Importer)
	if !ok {
		t.Fatal("the store cannot be imported into")
	}
	ids, err := exp.RunIDs(ctx)
	if err != nil || asJSON(t, ids) != `["x0","x1","x2"]` {
		t.Fatalf("RunIDs = %v, %v", ids, err)
	}
	for _, id := range ids {
		r, err := from.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := imp.ImportRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := imp.ImportRun(ctx, r); !errors.Is(err, laserbrain.ErrRunExists) {
			t.Fatalf("a second import of %s: %v, want ErrRunExists", id, err)
		}
		got, err := to.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if asJSON(t, got) != asJSON(t, r) || asJSON(t, got.Steps()) != asJSON(t, r.Steps()) {
			t.Fatalf("run %s differs after the import", id)
		}
	}
	entries, err := exp.ContextEntries(ctx)
	if err != nil || len(entries) == 0 {
		t.Fatalf("ContextEntries = %d entries, %v", len(entries), err)
	}
	for i, want := range []bool{true, false} {
		if got, err := imp.ImportContexts(ctx, "home-1", entries); err != nil || got != want {
			t.Fatalf("ImportContexts #%d = %v, %v", i+1, got, err)
		}
	}
	back, err := to.(laserbrain.Exporter).ContextEntries(ctx)
	if err != nil || asJSON(t, back) != asJSON(t, entries) {
		t.Fatalf("contexts after the import:\n got  %s\n want %s", asJSON(t, back), asJSON(t, entries))
	}
}

// checkContiguous: run id has exactly n steps numbered 1..n, and its state
// agrees.
func checkContiguous(t *testing.T, s laserbrain.Store, id string, n int) {
	t.Helper()
	r, err := s.ReadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	steps := r.Steps()
	if len(steps) != n || r.StepCount() != n {
		t.Fatalf("run %s: %d steps in its history, %d in its state; want %d", id, len(steps), r.StepCount(), n)
	}
	for i, st := range steps {
		if st.N != i+1 {
			t.Fatalf("run %s: step %d is numbered %d", id, i+1, st.N)
		}
	}
}
