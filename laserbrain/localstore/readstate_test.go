package localstore

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
)

// A run read without its history judges as the run that took the steps
// (two saves of it, one a later process's): the same whole-run judgment
// and last verdict, the same state byte for byte, and no step read, where
// ReadRun reads every one. A run never saved is ErrNoRun, as for ReadRun.
func TestReadRunStateIsTheRunWithoutItsHistory(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	inputs := []laserbrain.StepInput{step("add a CSV importer", 8), step("add a CSV importer", 6), step("refactor the ORM", 6),
		step("add a CSV importer", 6), step("add a CSV importer", 5), step("add the CSV importer", 9), step("add a CSV importer", 4)}
	var want *laserbrain.Run
	for _, part := range [][]laserbrain.StepInput{inputs[:3], inputs[3:]} {
		s := open(t, dir)
		h, err := s.OpenRun(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range part {
			if _, err := h.Run().Step(in); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Save(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		want = h.Run()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if v := want.Phronesis().Verdict; v == laserbrain.JudgmentUngrounded {
		t.Fatalf("the run's judgment is %s: nothing to compare", v)
	}
	s := open(t, dir)
	got, err := s.ReadRunState(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Phronesis(), want.Phronesis(); !reflect.DeepEqual(g, w) {
		t.Errorf("judgment read without the history:\n%+v\nthe run's:\n%+v", g, w)
	}
	gd, gr, gok := got.LastVerdict()
	wd, wr, wok := want.LastVerdict()
	if gd != wd || gr != wr || gok != wok {
		t.Errorf("last verdict %v %q %v, the run's %v %q %v", gd, gr, gok, wd, wr, wok)
	}
	gs, _ := got.MarshalJSON()
	ws, _ := want.MarshalJSON()
	if !bytes.Equal(gs, ws) {
		t.Errorf("state read without the history:\n%s\nthe run's:\n%s", gs, ws)
	}
	if n := len(got.Steps()); n != 0 {
		t.Errorf("%d steps read", n)
	}
	if full, err := s.ReadRun(ctx, "r1"); err != nil || len(full.Steps()) != len(inputs) {
		t.Fatalf("ReadRun: %v, %d steps", err, len(full.Steps()))
	}
	if _, err := s.ReadRunState(ctx, "nobody"); !errors.Is(err, laserbrain.ErrNoRun) {
		t.Errorf("a run never saved: %v, want ErrNoRun", err)
	}
}

// Save sizes its buffer for a batch from the batch's first line, within a
// bound: a first step with a 256 KB goal before 300 short ones takes a few
// MB to save, not the 96 MB its size times the count would ask for.
func TestSaveRoomIsBounded(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	h, err := s.OpenRun(ctx, "long-first")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Run().Step(step(strings.Repeat("a long goal ", 256<<10/12), 9)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if _, err := h.Run().Step(step("add a CSV importer", 8)); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 48<<20 {
		t.Errorf("Save allocated %d MB for a 256 KB line and 300 short ones", n>>20)
	}
}
