package schemas

import (
	"bytes"
	"errors"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Compile compiles the 2020-12 schema data, known as url (the name its
// errors and $refs use).
func Compile(url string, data []byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Lazy returns the schema compiled once, on its first call.
func Lazy(url string, data []byte) func() (*jsonschema.Schema, error) {
	return sync.OnceValues(func() (*jsonschema.Schema, error) { return Compile(url, data) })
}

// Broken validates inst against s: nil when it holds, else the rules it
// breaks (Leaves); err is a failure of the validation itself.
func Broken(s *jsonschema.Schema, inst any) ([]*jsonschema.ValidationError, error) {
	err := s.Validate(inst)
	var ve *jsonschema.ValidationError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &ve):
		return Leaves(ve), nil
	}
	return nil, err
}

// Leaves flattens a validation error's tree of causes to its leaves — the
// concrete rules broken, each at the instance location it names — in the
// validator's order, each (location, message) once. A tree with no leaves
// below its root answers the root.
func Leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	var out []*jsonschema.ValidationError
	type key struct{ at, msg string }
	seen := map[key]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		k := key{e.InstanceLocation, e.Message}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	walk(ve)
	if len(out) == 0 {
		out = append(out, ve)
	}
	return out
}

// Pointer is a leaf's instance location as a JSON pointer, "/" for the
// document itself.
func Pointer(e *jsonschema.ValidationError) string {
	if e.InstanceLocation == "" {
		return "/"
	}
	return e.InstanceLocation
}
