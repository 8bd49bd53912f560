// Command workfloor does the least any gate built on the gate's parts must
// do for one Bash call: read the event from standard input, decode it with
// encoding/json, parse its command with mvdan.cc/sh/v3/syntax, walk the
// calls and match each against one regexp2 pattern. It decides nothing and
// prints nothing: BenchmarkHookProcess times it as the floor of the work,
// beside startfloor's floor of the start-up alone.
package main

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/dlclark/regexp2"
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
	f, err := syntax.NewParser().Parse(strings.NewReader(ev.ToolInput.Command), "")
	if err != nil {
		os.Exit(2)
	}
	re := regexp2.MustCompile(`^git\s+push\b.*--force`, regexp2.IgnoreCase)
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			var words []string
			for _, w := range call.Args {
				words = append(words, w.Lit())
			}
			if m, _ := re.MatchString(strings.Join(words, " ")); m {
				os.Exit(2)
			}
		}
		return true
	})
}
