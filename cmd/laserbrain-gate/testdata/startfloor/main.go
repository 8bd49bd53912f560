// Command startfloor links what the gate's one decision cannot do
// without — encoding/json for the event, mvdan.cc/sh/v3/syntax for the
// one parse of a command, regexp2 for the grammar's patterns — and does
// nothing: BenchmarkHookProcess times it as the start-up floor of those
// parts, below which no gate built on them can answer.
package main

import (
	_ "encoding/json"

	_ "github.com/dlclark/regexp2"
	_ "mvdan.cc/sh/v3/syntax"
)

func main() {}
