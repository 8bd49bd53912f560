// Command parsefloor does only what no gate can skip for one Bash call:
// read the event from standard input, decode it with encoding/json and
// parse its command with mvdan.cc/sh/v3/syntax. It links nothing else,
// matches nothing and prints nothing: BenchmarkHookProcess times it as the
// floor under every gate that reads the event and the shell the way this
// one does, beside workfloor (the same, plus one regexp2 match).
package main

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(2)
	}
	var ev struct {
		ToolName  string `json:"tool_name"`
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
	}
	if json.Unmarshal(in, &ev) != nil {
		os.Exit(2)
	}
	if _, err := syntax.NewParser().Parse(strings.NewReader(ev.ToolInput.Command), ""); err != nil {
		os.Exit(2)
	}
}
