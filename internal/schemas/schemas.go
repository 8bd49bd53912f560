package schemas

import (
	"bytes"
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
