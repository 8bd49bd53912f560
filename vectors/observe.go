package vectors

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

// observeCall is one tool call an Observer records. Args keep their JSON
// (numbers as written), so 1.0 stays a float as it is in Python.
type observeCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	OK   *bool           `json:"ok"`
}

type observeIn struct {
	Calls []observeCall `json:"calls"`
}

type observeOut struct {
	Signatures []string `json:"signatures"`
	Progress   []string `json:"progress"`
}

func observeKind() *Kind {
	return caseKind("observe", `in: {calls: [{tool, args, ok}]} (ok absent: true); out: {signatures, progress}: each call's repetition signature, and the progress read after each call`, func(in observeIn) (any, error) {
		var o laserbrain.Observer
		out := observeOut{Signatures: []string{}, Progress: []string{}}
		for i, c := range in.Calls {
			var args any
			if len(bytes.TrimSpace(c.Args)) > 0 {
				d := json.NewDecoder(bytes.NewReader(c.Args))
				d.UseNumber()
				if err := d.Decode(&args); err != nil {
					return nil, fmt.Errorf("bad input: calls[%d].args: %v", i, err)
				}
			}
			ok := c.OK == nil || *c.OK
			ev := laserbrain.Event{Kind: laserbrain.EventTool, Name: c.Tool, OK: laserbrain.OKOf(ok), Args: args}
			o.Record(ev)
			out.Signatures = append(out.Signatures, ev.Signature())
			out.Progress = append(out.Progress, o.Progress())
		}
		return out, nil
	})
}
