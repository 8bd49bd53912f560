package vectors

import "github.com/laserkit/laserkit/laserbrain"

func normaliseKind() *Kind {
	return caseKind("normalise", `in: a text; out: its normalised tokens, sorted`, func(in string) (any, error) {
		toks := laserbrain.Norm(in)
		if toks == nil {
			toks = []string{}
		}
		return toks, nil
	})
}
