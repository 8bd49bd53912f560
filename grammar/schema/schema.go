package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/schemas"
)

var compiledSchema = schemas.Lazy("grammar.schema.json", grammar.SchemaJSON)

// Validate checks a grammar document against the schema and then against the
// rules a schema cannot state (weights summing to 1, patterns that compile,
// a shape pattern that accepts its own examples, ...). A nil error means the
// generator can turn it into code; problems come as *grammar.ValidationError.
// The stored content_hash is not compared here; see Verify.
func Validate(data []byte) error {
	doc, err := grammar.Parse(data)
	if err != nil {
		return &grammar.ValidationError{Problems: []grammar.Problem{{Pointer: "/", Rule: "json", Message: err.Error()}}}
	}
	var inst any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return &grammar.ValidationError{Problems: []grammar.Problem{{Pointer: "/", Rule: "json", Message: err.Error()}}}
	}
	s, err := compiledSchema()
	if err != nil {
		return fmt.Errorf("grammar schema does not compile: %w", err)
	}
	broken, err := schemas.Broken(s, inst)
	if err != nil {
		return err
	}
	if len(broken) > 0 {
		return &grammar.ValidationError{Problems: schemaProblems(broken)}
	}
	if probs := grammar.SemanticProblems(&doc); len(probs) > 0 {
		return &grammar.ValidationError{Problems: probs}
	}
	return nil
}

// schemaProblems are the specific rules broken, as grammar problems.
func schemaProblems(broken []*jsonschema.ValidationError) []grammar.Problem {
	var out []grammar.Problem
	for _, e := range broken {
		kw := e.KeywordLocation
		if i := strings.LastIndex(kw, "/"); i >= 0 {
			kw = kw[i+1:]
		}
		out = append(out, grammar.Problem{Pointer: grammar.PointerOrRoot(e.InstanceLocation), Rule: kw, Message: e.Message})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// Verify validates data and compares its stored content_hash with the one
// computed from it (a *grammar.HashMismatchError when they differ).
func Verify(data []byte) error {
	if err := Validate(data); err != nil {
		return err
	}
	doc, _ := grammar.Parse(data)
	stored, _ := doc.Get("content_hash")
	if got := grammar.ContentHash(doc); got != stored.Str {
		return &grammar.HashMismatchError{Stored: stored.Str, Computed: got}
	}
	return nil
}
