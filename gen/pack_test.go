package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Broken packs are refused, each problem named by its JSON pointer.
func TestPackProblemsNamePointers(t *testing.T) {
	root := root(t)
	schema, err := os.ReadFile(filepath.Join(root, packSchemaPath))
	if err != nil {
		t.Fatal(err)
	}
	rule := func(fields string) string {
		return `{"pack":"p","version":1,"rules":[` + fields + `]}`
	}
	ok := `{"id":"a","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["x"]}}`
	cases := map[string]string{
		`{"pack":"p","version":2,"rules":[` + ok + `]}`: "/version",
		rule(`{"id":"a","label":"l","outward":"no","scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["x"]}}`):                    "/rules/0/outward",
		rule(`{"id":"a","label":"l","outward":false,"scope":"shell","pattern":"^x","examples":{"match":["x"]}}`):                                      "/rules/0/scope",
		rule(`{"id":"A b","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["x"]}}`):                 "/rules/0/id",
		rule(`{"id":"a","label":"l","outward":false,"scope":"code","pattern":"x","examples":{"match":["x"]}}`):                                        "/rules/0",
		rule(`{"id":"a","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x(","examples":{"match":["x"]}}`):                  "/rules/0/pattern",
		rule(`{"id":"a","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["y"]}}`):                   "/rules/0/examples/match/0",
		rule(`{"id":"a","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["x"],"no_match":["xx"]}}`): "/rules/0/examples/no_match/0",
		rule(ok + `,` + ok): "/rules/1/id",
		rule(`{"id":"a","label":"l","outward":false,"scope":"command","commands":["x"],"pattern":"^x","examples":{"match":["x"]},"extra":1}`): "/rules/0",
	}
	for data, pointer := range cases {
		_, err := loadPack([]byte(data), schema)
		if err == nil {
			t.Errorf("accepted %s", data)
			continue
		}
		if !strings.Contains(err.Error(), pointer+": ") {
			t.Errorf("error for %s does not name %s: %v", data, pointer, err)
		}
	}
	if _, err := loadPack([]byte(rule(ok)), schema); err != nil {
		t.Errorf("a valid pack was refused: %v", err)
	}
}
