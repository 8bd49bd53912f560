package vectors

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// Every registered kind has a schema and a shipped file, and every schema
// compiles (the protocol's too).
func TestEveryKindHasASchemaAndVectors(t *testing.T) {
	shipped := map[string]bool{}
	for _, f := range Shipped() {
		k, _, err := kindOf(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		shipped[k] = true
	}
	for _, k := range Kinds() {
		if _, err := Schema(k.Name); err != nil {
			t.Errorf("kind %s: %v", k.Name, err)
		}
		if !shipped[k.Name] {
			t.Errorf("kind %s has no shipped vectors", k.Name)
		}
	}
	for _, name := range SchemaNames() {
		if _, err := lazySchema(name + ".schema.json"); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
	}
	for _, def := range []string{"hello", "ready", "case", "answer", "stop", "bye"} {
		if _, err := lazySchema("protocol.schema.json#/$defs/" + def); err != nil {
			t.Errorf("protocol message %s: %v", def, err)
		}
	}
}

// The reference's own files, as it published them (no kind field on the
// drift ones, extra provenance fields), validate against their kinds'
// schemas: the schemas describe held-out files, not only ours.
func TestUpstreamFilesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "vectors/upstream"), "*.json"))
	if len(files) == 0 {
		t.Fatal("the reference's vectors folder holds no vector file")
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kind, _, err := kindOf(data)
		if err != nil {
			// A kind another branch registers: its schema is here already.
			var head struct{ Kind string }
			_ = json.Unmarshal(data, &head)
			if !strings.Contains(err.Error(), "unknown vector kind") || head.Kind == "" {
				t.Fatalf("%s: %v", f, err)
			}
			if err := validate(head.Kind+".schema.json", data, "a "+head.Kind+" vector file"); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			n++
			continue
		}
		if err := ValidateFile(kind, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		n++
	}
	if n < 5 {
		t.Errorf("only %d upstream files validated", n)
	}
}

// A malformed file is refused with the JSON pointer of what is wrong.
func TestSchemaRefusalNamesThePointer(t *testing.T) {
	cases := []struct {
		doc, pointer string
	}{
		{`{"kind":"drift","vectors":[{"steps":[{"in":{"goal":"g","progress":5,"distance":1}}]}]}`, "/vectors/0/steps/0/in/progress: expected string or null, but got number"},
		{`{"kind":"drift","vectors":[{"steps":[{"in":{"goal":"g","progress":"advancing"},"out":{"drifting":false,"reason":"drifted","phi":0}}]}]}`, "/vectors/0/steps/0/out/reason"},
		{`{"kind":"drift","vectors":[{"steps":[{"in":{"goal":"g","progres":"advancing"}}]}]}`, "/vectors/0/steps/0/in: additionalProperties 'progres' not allowed"},
		{`{"kind":"drift","vectors":[{"seq":1,"steps":[]}]}`, "/vectors/0/steps: minimum 1 items required, but found 0 items"},
		{`{"vectors":[{"steps":"none"}]}`, "/vectors/0/steps: expected array, but got string"},
		{`{"kind":"normalise","cases":[{"in":7,"out":[]}]}`, "/cases/0/in: expected string, but got number"},
		{`{"kind":"laserscore","cases":[{"in":{"goal":"g","gaol":"x"},"out":null}]}`, "/cases/0/in: additionalProperties 'gaol' not allowed"},
		{`{"kind":"supercode","vectors":[{"seq":0,"in":{"sub":"spy","ops":[]},"out":{}}]}`, "/vectors/0/in"},
		{`{"kind":"mcp","cases":[{"in":{},"out":{"exchange":[{"send":{}}],"exit":0}}]}`, "/cases/0/out/exchange/0: missing properties: 'recv'"},
		{`{"kind":"mcp","cases":[{"in":{},"out":{"exchange":[{"send":{},"recv":[{"jsonrpc":"1.0","id":1,"result":{}}]}],"exit":0}}]}`, "/cases/0/out/exchange/0/recv/0/jsonrpc"},
		{`{"kind":"drift-full","vectors":[{"seq":0,"in":{"steps":[{"check":{"goal":"g"},"saw":{"kind":"tool","name":"t"}}]}}]}`, "/vectors/0/in/steps/0"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.doc))
		var se *SchemaError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.pointer) {
			t.Errorf("%s\n  refused with %v\n  want a schema error naming %q", c.doc, err, c.pointer)
		}
	}
	// Check refuses it too, and names the file's kind.
	if _, err := Check([]byte(cases[0].doc)); err == nil || !strings.HasPrefix(err.Error(), "a drift vector file does not follow its schema: ") {
		t.Errorf("Check of a malformed file: %v", err)
	}
}

// The protocol's messages are validated, and the refusal names the
// pointer.
func TestProtocolMessages(t *testing.T) {
	var r Ready
	if err := ParseMessage("ready", []byte(`{"op":"ready","protocol":1,"name":"x","language":"rust","version":"0.1","kinds":["drift"]}`), &r); err != nil || r.Language != "rust" {
		t.Fatalf("a good ready: %+v %v", r, err)
	}
	for line, want := range map[string]string{
		`{"op":"ready","protocol":2,"name":"x","language":"rust","version":"0.1","kinds":[]}`:  "/protocol",
		`{"op":"ready","protocol":1,"name":"","language":"rust","version":"0.1","kinds":[]}`:   "/name",
		`{"op":"ready","protocol":1,"name":"x","language":"rust","version":"0.1","kinds":[1]}`: "/kinds/0",
	} {
		if err := ParseMessage("ready", []byte(line), &r); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal naming %s", line, err, want)
		}
	}
	var a Answer
	for line, ok := range map[string]bool{
		`{"op":"answer","id":3,"out":null}`:              true,
		`{"op":"answer","id":3,"error":"no"}`:            true,
		`{"op":"answer","id":3,"skip":"not mine"}`:       true,
		`{"op":"answer","id":3}`:                         false,
		`{"op":"answer","id":-1,"out":1}`:                false,
		`{"op":"answer","id":3,"out":1,"skip":"both"}`:   false,
		`{"op":"answer","id":"3","out":1}`:               false,
		`{"op":"result","id":3,"out":1}`:                 false,
		`{"op":"answer","id":3,"error":{"message":"x"}}`: false,
	} {
		err := ParseMessage("answer", []byte(line), &a)
		if (err == nil) != ok {
			t.Errorf("%s: %v", line, err)
		}
	}
	if err := ParseMessage("answer", []byte(`{"op":"answer","id":3,"out":null}`), &a); err != nil || string(a.Out) != "null" {
		t.Errorf("an answer of null is an answer: %q %v", a.Out, err)
	}
}

// vectors schema prints a schema that is the one validating: the drift
// schema's step input lists the drift step's fields.
func TestSchemaIsTheOneUsed(t *testing.T) {
	data, err := Schema("drift")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"goal", "progress", "distance", "parent_goal", "user_turn"} {
		if _, ok := s.Defs["in"].Properties[f]; !ok {
			t.Errorf("drift schema's step input lacks %s", f)
		}
	}
	if _, err := Schema("nope"); err == nil {
		t.Error("a schema for an unknown kind")
	}
	if _, err := Schema("protocol"); err != nil {
		t.Error(err)
	}
}
