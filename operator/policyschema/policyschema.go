// Package policyschema checks a project policy file
// (.laserbrain/policy.json) against its JSON Schema. It is a package of its
// own so that only the binaries that check a policy link the schema
// validator, whose package init alone takes milliseconds: the lean hook
// binary takes a policy laserbrain has checked, and hands any other to
// laserbrain.
package policyschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/laserkit/laserkit/internal/schemas"
)

// SchemaJSON is the policy file's schema.
//
//go:embed policy.schema.json
var SchemaJSON []byte

var compiled = schemas.Lazy("policy.schema.json", SchemaJSON)

// Validate checks a policy file's bytes. The error names the JSON pointer
// of each thing wrong ("at /allow/0: missing property 'reason'").
func Validate(data []byte) error {
	var inst any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return fmt.Errorf("at the top: not JSON: %v", err)
	}
	if dec.More() {
		return errors.New("at the top: more than one JSON value")
	}
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("the policy schema does not compile: %w", err)
	}
	broken, err := schemas.Broken(s, inst)
	if err != nil || len(broken) == 0 {
		return err
	}
	return errors.New(strings.Join(problems(broken), "; "))
}

// problems are the rules broken, each at its JSON pointer, sorted.
func problems(broken []*jsonschema.ValidationError) []string {
	var out []string
	for _, e := range broken {
		out = append(out, "at "+schemas.Pointer(e)+": "+e.Message)
	}
	sort.Strings(out)
	return out
}
