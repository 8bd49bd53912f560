package vectors

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// upstreamFile is one of the reference's published vector files, in the
// reference material beside the project. The copies in this directory are
// always checked; where the originals are not there (testenv.SharedPath)
// that part is skipped, and under CI it fails.
func upstreamFile(t *testing.T, name string) ([]byte, bool) {
	t.Helper()
	p, err := testenv.SharedPath(filepath.Join("vectors", "upstream", name))
	if err != nil {
		testenv.SkipPartOrFail(t, "%v: only the shipped copy was checked", err)
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// holdsUpstream checks a shipped copy against the reference's published
// file: the copy records where it came from (repo, path, commit and the
// file's sha256), the original hashes to that sha256, and both hold the
// same value under each of keys. Without the original only the record is
// checked.
func holdsUpstream(t *testing.T, copyName string, data []byte, upstreamName string, keys ...string) {
	t.Helper()
	var prov struct {
		Upstream struct{ Repo, Path, Commit, SHA256 string }
	}
	if err := json.Unmarshal(data, &prov); err != nil || len(prov.Upstream.Commit) != 40 || prov.Upstream.SHA256 == "" {
		t.Errorf("%s does not record its upstream: %+v (%v)", copyName, prov.Upstream, err)
	}
	orig, ok := upstreamFile(t, upstreamName)
	if !ok {
		return
	}
	if sum := sha256.Sum256(orig); hex.EncodeToString(sum[:]) != prov.Upstream.SHA256 {
		t.Errorf("%s records sha256 %s, but %s hashes to %x", copyName, prov.Upstream.SHA256, upstreamName, sum)
	}
	var a, b map[string]any
	if err := json.Unmarshal(orig, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if a[k] == nil || !reflect.DeepEqual(a[k], b[k]) {
			t.Errorf("%s no longer holds the %q of %s", copyName, k, upstreamName)
		}
	}
}

// upstreamCopies maps each upstream file to the copy shipped here.
var upstreamCopies = map[string]string{
	"drift-vectors.json":           "drift-upstream-0.53.0.json",
	"sdk-0.4.2-drift-vectors.json": "drift-upstream-sdk-0.4.2.json",
	"supercode-vectors.json":       "supercode-upstream-0.53.0.json",
	"drift-full-vectors.json":      "drift-full-upstream-0.53.0.json",
}

// checkFile checks a vector file, failing t with each case that fails (the
// first five shown), and returns the report.
func checkFile(t *testing.T, name string, data []byte) *Report {
	t.Helper()
	r, err := Check(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, f := range r.Failures {
		if i == 5 {
			t.Errorf("%s: %d more failed", name, len(r.Failures)-i)
			break
		}
		t.Errorf("%s %s (%s)\n  in:       %s\n  expected: %s\n  actual:   %s\n  error:    %s %v", name, f.Label, r.Kind, f.In, f.Expected, f.Actual, f.Error, f.Diff)
	}
	return r
}

// Every vector file this package ships passes, case by case.
func TestShippedVectors(t *testing.T) {
	files := Shipped()
	if len(files) == 0 {
		t.Fatal("no vector files are embedded")
	}
	for _, f := range files {
		if f.Name == mcpCopy {
			continue // TestMCPVectorsUpstream checks it, and says what it set aside
		}
		t.Run(f.Name, func(t *testing.T) {
			if n := checkFile(t, f.Name, f.Data).Passed; n == 0 {
				t.Errorf("%s has no cases", f.Name)
			}
		})
	}
}

// The reference's own files pass as published, and our copies hold exactly
// their vectors (only the kind and provenance fields were added).
func TestUpstreamDriftVectors(t *testing.T) {
	want := map[string]int{"drift-vectors.json": 69, "sdk-0.4.2-drift-vectors.json": 37, "supercode-vectors.json": 150, "drift-full-vectors.json": 200}
	for up, local := range upstreamCopies {
		copyData, err := os.ReadFile(local)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkFile(t, local, copyData).Passed; n != want[up] {
			t.Errorf("%s: %d steps passed, want all %d", local, n, want[up])
		}
		var prov struct {
			Upstream struct{ Repo, Path, Commit, SHA256 string }
		}
		if err := json.Unmarshal(copyData, &prov); err != nil || prov.Upstream.Repo == "" || prov.Upstream.Path == "" || len(prov.Upstream.Commit) != 40 {
			t.Errorf("%s does not record its upstream repo, path and commit: %+v", local, prov.Upstream)
		}
		orig, ok := upstreamFile(t, up)
		if !ok {
			continue
		}
		if sum := sha256.Sum256(orig); prov.Upstream.SHA256 != "" && prov.Upstream.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s records sha256 %s, but %s hashes to %x", local, prov.Upstream.SHA256, up, sum)
		}
		if n := checkFile(t, up, orig).Passed; n != want[up] {
			t.Errorf("%s: %d steps passed, want all %d", up, n, want[up])
		}
		var a, b struct{ Vectors any }
		if err := json.Unmarshal(orig, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(copyData, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Vectors, b.Vectors) {
			t.Errorf("%s no longer holds the vectors of %s", local, up)
		}
	}
	if _, err := os.Stat("LICENSE-laserbrain-sdk"); err != nil {
		t.Errorf("the upstream licence must ship beside the copies: %v", err)
	}
}

// Every kind registered here has a shipped file, and every hand-derived
// case says where its expectation comes from.
func TestEveryKindHasVectors(t *testing.T) {
	have := map[string]bool{}
	for _, f := range Shipped() {
		d, err := Decode(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		have[d.Kind] = true
		if d.Source == "" {
			t.Errorf("%s has no source", f.Name)
		}
	}
	for _, k := range []string{"drift", "normalise", "laserscore", "ceiling", "collisions", "phronesis", "supercode", "drift-full", "coverage"} {
		if !have[k] {
			t.Errorf("no shipped vectors of kind %s", k)
		}
	}
	for _, name := range []string{"drift-parity.json", "laserscore.json", "ceiling.json", "collisions.json", "phronesis.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Cases   []struct{ Why string }
			Vectors []struct{ Why string }
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for i, c := range doc.Cases {
			if c.Why == "" {
				t.Errorf("%s case %d has no why", name, i)
			}
		}
		for i, s := range doc.Vectors {
			if s.Why == "" {
				t.Errorf("%s seq %d has no why", name, i)
			}
		}
	}
}

// A vector that is wrong is caught: checking is not vacuous.
func TestCheckCatchesAWrongExpectation(t *testing.T) {
	data, err := os.ReadFile("drift-parity.json")
	if err != nil {
		t.Fatal(err)
	}
	// The ties-to-even case: 0.12 → 0.13 is what a JS-rounding port says.
	bad := bytes.Replace(data, []byte(`"phi": 0.12,`), []byte(`"phi": 0.13,`), 1)
	r, err := Check(bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) != 1 || r.Failures[0].Label != "seq 0 step 2" {
		t.Errorf("failures %+v, want exactly seq 0 step 2", r.Failures)
	}
}

// emit writes what check then accepts, for every kind this package adds.
func TestEmitRoundTrip(t *testing.T) {
	for _, name := range []string{"drift-parity.json", "laserscore.json", "ceiling.json", "collisions.json", "phronesis.json"} {
		data, _ := os.ReadFile(name)
		d, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Emit(d.Kind, data)
		if err != nil {
			t.Fatalf("emit %s: %v", name, err)
		}
		if n := checkFile(t, "emitted "+name, out).Passed; n == 0 {
			t.Errorf("emitted %s has no cases", name)
		}
	}
}

// The reference-record kinds compare strictly: a context that carries a
// key the reference's lacks (here "return", which it pops on recovery) is a
// failure, as is one missing a key; and emit writes what check accepts.
func TestSupercodeVectorsStrictAndEmit(t *testing.T) {
	data, err := os.ReadFile("supercode-upstream-0.53.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	vecs := doc["vectors"].([]any)
	dropped := -1
	for i, v := range vecs {
		out := v.(map[string]any)["out"].(map[string]any)
		ctxs, ok := out["contexts"].(map[string]any)
		if !ok {
			continue
		}
		for _, c := range ctxs {
			if _, has := c.(map[string]any)["return"]; has {
				delete(c.(map[string]any), "return")
				dropped = i
				break
			}
		}
		if dropped >= 0 {
			break
		}
	}
	bad, _ := json.Marshal(doc)
	r, err := Check(bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) != 1 || r.Failures[0].Label != fmt.Sprintf("seq %d", int(vecs[dropped].(map[string]any)["seq"].(float64))) {
		t.Errorf("a context without its return: failures %v", r.Failures)
	}
	out, err := Emit("supercode", data)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkFile(t, "emitted supercode", out).Passed; n != 150 {
		t.Errorf("emitted supercode file: %d passed", n)
	}
}
