package vectors

import (
	"encoding/json"

	"github.com/laserkit/laserkit/operator/method"
)

func lintKind() *Kind {
	return caseKind("lint", `in: a method spec {spec_version, goal, steps}; out: the lint findings [{step, finding, verb}] in order (verb null for shape findings)`, func(in json.RawMessage) (any, error) {
		m, err := method.Parse(in)
		if err != nil {
			return nil, err
		}
		fs := method.Lint(m)
		if fs == nil {
			fs = []method.Finding{}
		}
		return fs, nil
	})
}
