package localstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/laserbrain"
)

// benchInputs is a run's states: advancing on one ground, as a stream of
// checks spells them.
var benchInputs = func() []laserbrain.StepInput {
	out := make([]laserbrain.StepInput, 50)
	for i := range out {
		out[i] = step("add a CSV importer to the admin panel", 9-i%9)
	}
	return out
}()

// streamRuns does what `laserbrain check --stream` does with runs×steps
// lines: hold each run open, step it, spill, and at the end save every run
// and flush once.
func streamRuns(b *testing.B, s *Store, prefix string, runs, steps int) {
	ctx := context.Background()
	hs := make([]laserbrain.RunHandle, runs)
	for i := range hs {
		h, err := s.OpenRun(ctx, fmt.Sprintf("%s-%d", prefix, i))
		if err != nil {
			b.Fatal(err)
		}
		hs[i] = h
		for k := 0; k < steps; k++ {
			if _, err := h.Run().Step(benchInputs[k%len(benchInputs)]); err != nil {
				b.Fatal(err)
			}
			if err := h.(*runHandle).Spill(); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, h := range hs {
		if err := h.Save(ctx); err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// earlierSave is how the store before the run log committed a run: a lock
// file per run, the history appended and synced, then the state replaced
// atomically (temporary file, sync, rename). It is the baseline.
func earlierSave(b *testing.B, dir, id string, r *laserbrain.Run) {
	lock, err := fsx.LockFile(filepath.Join(dir, id+".lock"), LockTimeout)
	if err != nil {
		b.Fatal(err)
	}
	defer lock.Unlock()
	var hist []byte
	for _, st := range r.UnsavedHistory() {
		hist = append(st.AppendJSON(hist), '\n')
	}
	if err := fsx.AppendSync(filepath.Join(dir, id+".history.jsonl"), hist, 0o644); err != nil {
		b.Fatal(err)
	}
	state, _ := json.Marshal(r)
	data := fmt.Appendf(nil, `{"run":%s,"history_bytes":%d}`+"\n", state, len(hist))
	if err := fsx.WriteFile(filepath.Join(dir, id+".json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	r.HistorySaved()
}

// BenchmarkNewRuns: creating a run should cost what a step costs. It times
// 10,000 checks three ways in one run, in ns per check: one run of
// 10,000 steps (the baseline: a step), 200 fresh runs of 50 steps on this
// store, and the same 200×50 committed the way the store did before the run
// log (a lock file, a synced history append and an atomic state replace per
// run). x-step is the per-check cost over the one-run figure; x-earlier is
// the earlier discipline's cost over this store's.
func BenchmarkNewRuns(b *testing.B) {
	var oneRun, fresh float64
	perStep := func(b *testing.B) float64 {
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N*10_000)
		b.ReportMetric(ns, "ns/check")
		return ns
	}
	// stream times runs × steps checks an iteration on a store, new run
	// names each time.
	stream := func(b *testing.B, prefix string, runs, steps int) float64 {
		s := open(b, b.TempDir())
		for i := 0; b.Loop(); i++ {
			streamRuns(b, s, fmt.Sprint(prefix, i), runs, steps)
		}
		return perStep(b)
	}
	b.Run("one-run-10000", func(b *testing.B) { oneRun = stream(b, "one", 1, 10_000) })
	b.Run("fresh-200x50", func(b *testing.B) {
		fresh = stream(b, "fresh", 200, 50)
		if oneRun > 0 {
			b.ReportMetric(fresh/oneRun, "x-step")
		}
	})
	b.Run("fresh-200x50-earlier", func(b *testing.B) {
		dir := b.TempDir()
		contexts := laserbrain.NewMemContexts()
		i := 0
		for b.Loop() {
			rs := make([]*laserbrain.Run, 200)
			for k := range rs {
				rs[k] = laserbrain.NewRun(laserbrain.RunOptions{ID: fmt.Sprintf("e%d-%d", i, k), Contexts: contexts})
				for j := 0; j < 50; j++ {
					if _, err := rs[k].Step(benchInputs[j]); err != nil {
						b.Fatal(err)
					}
				}
			}
			for _, r := range rs {
				earlierSave(b, dir, r.ID(), r)
			}
			i++
		}
		earlier := perStep(b)
		if oneRun > 0 {
			b.ReportMetric(earlier/oneRun, "x-step")
		}
		if fresh > 0 {
			b.ReportMetric(earlier/fresh, "x-earlier")
		}
	})
}

func open(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, err := Open(Paths{Home: dir, Config: filepath.Join(dir, "config")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
