package vectors

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

// treeOp is one operation on a sub-task tree: a check on a node, or a
// sub-task opened under it. Node is the path of child indexes from the
// root ([] is the root).
type treeOp struct {
	Node  []int   `json:"node"`
	Check *StepIn `json:"check,omitempty"`
	Sub   *struct {
		Goal     string          `json:"goal"`
		Distance json.RawMessage `json:"distance"`
	} `json:"sub,omitempty"`
}

type treeIn struct {
	Ops []treeOp `json:"ops"`
}

// treeResult is one operation's answer: the check's verdict (for a
// sub-task, its grounding check's, with its run id and depth), or refused
// for a sub-task past laserbrain.MaxDepth.
type treeResult struct {
	RunID    string   `json:"run_id,omitempty"`
	Depth    *int     `json:"depth,omitempty"`
	Drifting bool     `json:"drifting"`
	Reason   string   `json:"reason"`
	Phi      *float64 `json:"phi"`
	Refused  bool     `json:"refused,omitempty"`
}

type treeOut struct {
	Results []treeResult          `json:"results"`
	Status  laserbrain.TreeStatus `json:"status"`
	Report  string                `json:"report"`
}

func treeKind() *Kind {
	return caseKind("tree", `in: {ops: [{node: [child indexes], check: {goal, progress, distance, ...}} | {node, sub: {goal, distance}}]} on a tree whose root run is "run"; out: {results, status, report}: each op's verdict, then the tree's status and report`, func(in treeIn) (any, error) {
		root := laserbrain.NewTree("run")
		out := treeOut{Results: []treeResult{}}
		for i, op := range in.Ops {
			n, err := treeNode(root, op.Node)
			if err != nil {
				return nil, fmt.Errorf("bad input: ops[%d]: %v", i, err)
			}
			var res treeResult
			switch {
			case op.Check != nil && op.Sub == nil:
				v, err := n.Check(op.Check.Input())
				if err != nil {
					return nil, fmt.Errorf("ops[%d]: %w", i, err)
				}
				res = treeResult{Drifting: v.Drifting, Reason: v.Reason, Phi: &v.Phi}
			case op.Sub != nil && op.Check == nil:
				c, v, err := n.Sub(op.Sub.Goal, laserbrain.DistanceFromJSON(op.Sub.Distance))
				switch {
				case errors.Is(err, laserbrain.ErrTooDeep):
					res = treeResult{Refused: true}
				case err != nil:
					return nil, fmt.Errorf("ops[%d]: %w", i, err)
				default:
					d := c.Depth()
					res = treeResult{RunID: c.ID(), Depth: &d, Drifting: v.Drifting, Reason: v.Reason, Phi: &v.Phi}
				}
			default:
				return nil, fmt.Errorf("bad input: ops[%d]: want one of check and sub", i)
			}
			out.Results = append(out.Results, res)
		}
		out.Status, out.Report = root.Status(), root.Report()
		return out, nil
	})
}

func treeNode(root *laserbrain.TreeNode, path []int) (*laserbrain.TreeNode, error) {
	n := root
	for _, k := range path {
		cs := n.Children()
		if k < 0 || k >= len(cs) {
			return nil, fmt.Errorf("node %v: no child %d (run %s has %d)", path, k, n.ID(), len(cs))
		}
		n = cs[k]
	}
	return n, nil
}
