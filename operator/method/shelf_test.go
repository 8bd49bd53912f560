package method

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shelf is the shipped methods and the user's: a local file shadows the
// shipped one of its name (listed once, vended and found as the local
// spec, shipped false), a local-only name joins the list, and specs come
// back exactly as stored. Expected values: the reference's Store over the
// same directory (its find scores, in the mcp vectors' session 5).
func TestShelfLocalMethods(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fix.json", `{"spec_version": 1, "goal": "fix the thing locally", "steps": [{"name": "edit", "goal": "make the change"}, {"name": "verify", "goal": "run the tests"}], "extra": {"kept": true}}`)
	write("release.json", `{"spec_version": 1, "goal": "publish a verified laserbrain release", "steps": [{"name": "test", "goal": "run the suite"}, {"name": "build", "goal": "build the wheel"}, {"name": "upload-pypi", "goal": "upload the wheel to PyPI", "irreversible": true, "outward": true}]}`)
	write("notes.txt", `not a method`)
	sh := Shelf{Local: dir}
	names, err := sh.Names()
	if err != nil || strings.Join(names, " ") != "audit build-and-ship diagnose-and-fix fix full-release investigate new-repo promote release repo-surgery ship-built" {
		t.Fatalf("names %v, %v", names, err)
	}
	spec, err := sh.Vend("fix")
	if err != nil || !strings.Contains(string(spec), `"extra": {"kept": true}`) {
		t.Fatalf("vend fix = %s, %v (the local file, as stored)", spec, err)
	}
	rows, err := sh.Find("fix the thing")
	if err != nil || len(rows) != 2 || rows[0].Name != "fix" || rows[0].Score != 0.467 || rows[0].Shipped || rows[1].Name != "diagnose-and-fix" || !rows[1].Shipped {
		t.Fatalf("find = %+v, %v", rows, err)
	}
	rows, _ = sh.Find("publish a release to PyPI")
	if len(rows) < 2 || rows[0].Name != "release" || rows[0].Score != 0.313 || strings.Join(rows[0].Gated, ",") != "upload-pypi" || rows[0].Steps != 3 {
		t.Fatalf("find release = %+v", rows)
	}
	var goal string
	if err := json.Unmarshal(rows[0].Goal, &goal); err != nil || goal != "publish a verified laserbrain release" {
		t.Errorf("goal %s", rows[0].Goal)
	}
	if rows, _ := sh.Find("the of and"); len(rows) != 0 {
		t.Errorf("a task of stopwords found %+v", rows)
	}
	_, err = sh.Vend("nope")
	var ns *NotShelvedError
	if !errors.As(err, &ns) || !strings.HasPrefix(err.Error(), "no workflow 'nope' — have ['audit', 'build-and-ship'") || !strings.Contains(err.Error(), "'release'") {
		t.Errorf("vend nope: %v", err)
	}
	// A local file that is not JSON is named when it is read.
	write("broken.json", `{"goal": `)
	if _, err := sh.Find("anything at all"); err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("find over a broken local file: %v", err)
	}
	// No local directory: the shipped methods alone.
	if names, err := (Shelf{Local: filepath.Join(dir, "none")}).Names(); err != nil || len(names) != 10 {
		t.Errorf("without a local directory: %v %v", names, err)
	}
}
