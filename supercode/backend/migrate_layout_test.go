package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/laserbrain/storetest"
)

// saveRun takes n steps on run id in store s and saves it.
func saveRun(t *testing.T, s *localstore.Store, id string, n int) {
	t.Helper()
	steps := make([]laserbrain.StepInput, n)
	for i := range steps {
		steps[i] = laserbrain.StepInput{Goal: "import the CSV files", Progress: "advancing", Distance: laserbrain.Dist(9 - i%9)}
	}
	storetest.Save(t, s, id, steps...)
}

// store migrate copies a home whatever layout its runs are in — files of
// their own (every run of a home an earlier version wrote), a pack, the
// run log — into the database and back out into a new home, the same.
func TestMigrateEveryRunLayout(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.URL(t, pgtest.NewDatabase(t))
	home1, home2 := filepath.Join(t.TempDir(), "h1"), filepath.Join(t.TempDir(), "h2")
	paths := localstore.Paths{Home: home1, Config: filepath.Join(home1, "config")}
	old := localstore.PackBelow
	localstore.PackBelow = 0 // the earlier layout: every run in files of its own
	s, err := localstore.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		saveRun(t, s, fmt.Sprint("earlier", i), 2+i)
	}
	err = s.Compact()
	localstore.PackBelow = old
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		saveRun(t, s, fmt.Sprint("packed", i), 1+i)
	}
	saveRun(t, s, "earlier1", 1) // a run on file goes on
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	saveRun(t, s, "logged", 3)
	saveRun(t, s, "packed2", 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"earlier1.json", "earlier1.history.jsonl", "packs/0000000001.pack", "log.jsonl"} {
		if _, err := os.Stat(filepath.Join(home1, "runs", f)); err != nil {
			t.Fatalf("the home is not in every layout: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(home1, "runs", "packed0.json")); err == nil {
		t.Fatal("a small run got files of its own")
	}
	local1, _ := Parse("local", home1)
	local2, _ := Parse("local", home2)
	pg, _ := Parse(dsn, filepath.Join(t.TempDir(), "h3"))
	if _, err := Init(ctx, pg); err != nil {
		t.Fatal(err)
	}
	want := runsOf(t, local1)
	rep, err := Migrate(ctx, local1, pg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs.Copied != 8 {
		t.Fatalf("copied %d runs, want 8: %+v", rep.Runs.Copied, rep)
	}
	if got := runsOf(t, pg); got != want {
		t.Fatalf("the database differs from the home:\n%s\nwant\n%s", got, want)
	}
	if _, err := Migrate(ctx, pg, local2); err != nil {
		t.Fatal(err)
	}
	if got := runsOf(t, local2); got != want {
		t.Fatalf("the home copied back differs:\n%s\nwant\n%s", got, want)
	}
}

// runsOf is the runs and contexts of what content gives (a store without
// fleet records gives them as null or empty by its kind).
func runsOf(t *testing.T, c Config) string {
	t.Helper()
	var all map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content(t, c)), &all); err != nil {
		t.Fatal(err)
	}
	for k := range all {
		if !strings.HasPrefix(k, "run ") && k != "contexts" {
			delete(all, k)
		}
	}
	if len(all) != 9 {
		t.Fatalf("%d runs and contexts in %s, want 8 runs and the contexts", len(all), c)
	}
	out, _ := json.MarshalIndent(all, "", " ")
	return string(out)
}
