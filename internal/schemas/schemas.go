// Package schemas compiles the JSON Schemas (draft 2020-12) the code
// embeds — the grammar's, ponder's delta batches', the loop's verdicts',
// the operator pack's — the one way: Lazy compiles a schema on first use,
// so a process that never validates (a hook) pays nothing for it.
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
