package vectors

import "github.com/laserkit/laserkit/operator/shell"

// classifyIn is a classify case's input; absent declarations default to the
// reference's (reversible false, outward false).
type classifyIn struct {
	Command    string `json:"command"`
	Reversible bool   `json:"reversible"`
	Outward    bool   `json:"outward"`
}

func classifyKind() *Kind {
	return caseKind("classify", `in: {command, reversible, outward}; out: {reversible, outward, labels} from the grammar patterns alone (the reference layer every port shares)`, func(in classifyIn) (any, error) {
		v := shell.ClassifyGrammar(in.Command, in.Reversible, in.Outward)
		return struct {
			Reversible bool     `json:"reversible"`
			Outward    bool     `json:"outward"`
			Labels     []string `json:"labels"`
		}{v.Reversible, v.Outward, v.Labels}, nil
	})
}
