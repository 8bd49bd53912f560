package vectors

import (
	"bytes"
	"os"
	"testing"
)

// The classify and lint vector files pass, and a corrupted expectation in
// each is caught (so the comparison is not vacuous).
func TestOperatorVectors(t *testing.T) {
	for file, corrupt := range map[string][2]string{
		"classify.json": {`"labels": []`, `"labels": ["invented"]`},
		"lint.json":     {`"finding": "over-declared"`, `"finding": "under-declared"`},
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Check(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if r.Passed < 10 || len(r.Failures) > 0 {
			t.Errorf("%s: %d passed, %d failed: %+v", file, r.Passed, len(r.Failures), r.Failures)
		}
		bad := bytes.Replace(data, []byte(corrupt[0]), []byte(corrupt[1]), 1)
		if bytes.Equal(bad, data) {
			t.Fatalf("%s: %q not found to corrupt", file, corrupt[0])
		}
		if r, err := Check(bad); err != nil || len(r.Failures) != 1 {
			t.Errorf("%s corrupted: want exactly 1 failure, got %v, %v", file, r, err)
		}
	}
}

func TestLintKindRejectsBadSpec(t *testing.T) {
	r, err := Check([]byte(`{"kind":"lint","cases":[{"in":{"spec_version":2,"goal":"g"},"out":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) != 1 || r.Errored() != 1 || !bytes.Contains([]byte(r.Failures[0].Error), []byte("spec_version is 2")) {
		t.Fatalf("want the spec_version refusal as the failure, got %+v", r.Failures)
	}
}
