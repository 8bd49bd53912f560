package vectors

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/laserkit/laserkit/internal/schemas"
)

// The schemas: one per kind (KIND.schema.json: a vector file of that kind)
// and the runner protocol's messages (protocol.schema.json). Each compiles
// on first use, so a process that never validates pays nothing for them.
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

const schemaBase = "https://laserkit.dev/vectors/"

var (
	compiledMu sync.Mutex
	compiled   map[string]*jsonschema.Schema // made on first use
)

// lazySchema returns the compiled schema at ref (a file name, with a
// fragment for one definition: protocol.schema.json#/$defs/answer),
// compiling it once. Every schema file is known to the compiler, so one may
// refer to another's definitions.
func lazySchema(ref string) (*jsonschema.Schema, error) {
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if s, ok := compiled[ref]; ok {
		return s, nil
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	files, _ := fs.Glob(schemaFS, "schemas/*.schema.json")
	for _, f := range files {
		data, err := fs.ReadFile(schemaFS, f)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(schemaBase+strings.TrimPrefix(f, "schemas/"), bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("schema %s: %w", f, err)
		}
	}
	s, err := c.Compile(schemaBase + ref)
	if err != nil {
		return nil, fmt.Errorf("schema %s does not compile: %w", ref, err)
	}
	if compiled == nil {
		compiled = map[string]*jsonschema.Schema{}
	}
	compiled[ref] = s
	return s, nil
}

// Schema returns the JSON Schema of a vector file of kind, or of the
// runner protocol's messages for "protocol".
func Schema(kind string) ([]byte, error) {
	if kind != "protocol" {
		if _, err := Lookup(kind); err != nil {
			return nil, err
		}
	}
	data, err := fs.ReadFile(schemaFS, "schemas/"+kind+".schema.json")
	if err != nil {
		return nil, fmt.Errorf("kind %s has no schema", kind)
	}
	return data, nil
}

// SchemaNames lists what Schema answers: every kind with a schema, and
// "protocol".
func SchemaNames() []string {
	files, _ := fs.Glob(schemaFS, "schemas/*.schema.json")
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(f, "schemas/"), ".schema.json"))
	}
	sort.Strings(out)
	return out
}

// SchemaError is a document that does not follow its schema: each problem
// named by its JSON pointer.
type SchemaError struct {
	What     string   // "a drift vector file", "the answer"
	Problems []string // "/vectors/0/steps/2/in/progress: expected string, but got number"
}

func (e *SchemaError) Error() string {
	const show = 5
	ps := e.Problems
	more := ""
	if len(ps) > show {
		more = fmt.Sprintf("; and %d more", len(ps)-show)
		ps = ps[:show]
	}
	return fmt.Sprintf("%s does not follow its schema: %s%s", e.What, strings.Join(ps, "; "), more)
}

// ValidateFile checks data, a vector file of kind, against the kind's
// schema. A kind without a schema is not checked.
func ValidateFile(kind string, data []byte) error {
	if _, err := fs.Stat(schemaFS, "schemas/"+kind+".schema.json"); err != nil {
		return nil
	}
	return validate(kind+".schema.json", data, "a "+kind+" vector file")
}

// validate checks data against the schema at ref.
func validate(ref string, data []byte, what string) error {
	sch, err := lazySchema(ref)
	if err != nil {
		return err
	}
	var doc any
	if err := decodeNumbers(data, &doc); err != nil {
		return &SchemaError{What: what, Problems: []string{"not JSON: " + err.Error()}}
	}
	broken, err := schemas.Broken(sch, doc)
	if err != nil {
		return &SchemaError{What: what, Problems: []string{err.Error()}}
	}
	if len(broken) == 0 {
		return nil
	}
	// The rules broken, each with the JSON pointer of the value at fault.
	var problems []string
	for _, e := range broken {
		problems = append(problems, schemas.Pointer(e)+": "+e.Message)
	}
	return &SchemaError{What: what, Problems: problems}
}
