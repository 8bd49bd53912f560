package vectors

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The runner protocol (docs/porting.md; protocol.schema.json): JSON lines
// between `laserbrain vectors run` and an implementation under test, one
// message a line on the implementation's standard input and output.
//
//	runner → hello {"op":"hello","protocol":1}
//	impl   → ready {"op":"ready","protocol":1,"name","language","version","kinds":[...]}
//	runner → case  {"op":"case","id":N,"kind":K,"label":L,"in":...}     one at a time
//	impl   → answer {"op":"answer","id":N,"out":...} | {..."error":"..."} | {..."skip":"..."}
//	runner → stop  {"op":"stop"}
//	impl   → bye   {"op":"bye"}, then exits 0
//
// A case is answered before the next is sent. Standard error is the
// implementation's own (the runner keeps its last lines for a crash report).

// ProtocolVersion is the protocol's version, in hello and ready.
const ProtocolVersion = 1

// Hello is the runner's first message.
type Hello struct {
	Op       string `json:"op"`
	Protocol int    `json:"protocol"`
}

// Ready is the implementation's answer to hello: who it is and the kinds it
// answers.
type Ready struct {
	Op       string   `json:"op"`
	Protocol int      `json:"protocol"`
	Name     string   `json:"name"`
	Language string   `json:"language"`
	Version  string   `json:"version"`
	Kinds    []string `json:"kinds"`
}

// CaseMessage is one case sent to an implementation.
type CaseMessage struct {
	Op    string          `json:"op"`
	ID    int             `json:"id"`
	Kind  string          `json:"kind"`
	Label string          `json:"label"`
	In    json.RawMessage `json:"in"`
}

// Answer is an implementation's answer to one case: exactly one of Out,
// Error and Skip.
type Answer struct {
	Op    string          `json:"op"`
	ID    int             `json:"id"`
	Out   json.RawMessage `json:"out,omitempty"`
	Error *string         `json:"error,omitempty"`
	Skip  *string         `json:"skip,omitempty"`
}

// Stop asks the implementation to finish.
type Stop struct {
	Op string `json:"op"`
}

// Bye is the implementation's answer to stop.
type Bye struct {
	Op string `json:"op"`
}

// ParseMessage reads one protocol message of the type def ("ready",
// "answer", …) from line, validated against the protocol schema; the error
// names the JSON pointer at fault.
func ParseMessage(def string, line []byte, v any) error {
	if def == "answer" {
		// The schema's oneOf, said in words.
		var keys map[string]json.RawMessage
		if json.Unmarshal(line, &keys) == nil {
			var have []string
			for _, k := range []string{"out", "error", "skip"} {
				if _, ok := keys[k]; ok {
					have = append(have, k)
				}
			}
			if len(have) != 1 {
				return fmt.Errorf("an answer carries exactly one of out, error and skip; this one has %s", describeKeys(have))
			}
		}
	}
	if err := validate("protocol.schema.json#/$defs/"+def, line, "the "+def+" message"); err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("the %s message: %s", def, jsonProblem(err))
	}
	return nil
}

func describeKeys(keys []string) string {
	switch len(keys) {
	case 0:
		return "none"
	case 1:
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
