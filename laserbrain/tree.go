package laserbrain

import (
	"errors"
	"fmt"
	"strings"
)

// A sub-task tree: a run decomposes into sub-tasks, each a run of its own
// grounded on its sub-goal and checked on its own terms, nested under the
// run that opened it. What no node can see is the tree: every node can be
// on track for its own goal while the whole decomposition spins without
// the root getting any closer, so the tree is read from the root — every
// check anywhere is a step the root paid for, and only the root's own
// distance counts as progress.

// MaxDepth is how deep a tree may nest: a decomposition deeper than this
// has lost its goal, and opening it is refused.
const MaxDepth = 50

// treeStall is how many steps anywhere in the tree, with the root's own
// distance not falling, read as a tree that spins (given two root checks
// or more to compare).
const treeStall = 6

// ErrTooDeep refuses a sub-task past MaxDepth.
var ErrTooDeep = errors.New("recursion too deep")

// TreeNode is one run of a sub-task tree: the root, or a sub-task.
type TreeNode struct {
	run      *Run
	id       string
	root     *TreeNode
	depth    int
	children []*TreeNode
	checks   []treeCheck // this node's own checks

	// The root's reading of the whole tree.
	log           []treeCheck // every check anywhere in the tree
	rootDist      []int       // the root's own distances, in order
	sinceProgress int         // steps anywhere since the root's distance last fell
}

type treeCheck struct {
	goal     string
	drifting bool
}

// NewTree starts a tree whose root is a fresh run named id.
func NewTree(id string) *TreeNode {
	n := &TreeNode{run: NewRun(RunOptions{ID: id}), id: id}
	n.root = n
	return n
}

// ID is the node's run id: the root's, or its parent's and "/k" for its
// k-th sub-task.
func (n *TreeNode) ID() string { return n.id }

// Depth is how deep the node is nested (the root is 0).
func (n *TreeNode) Depth() int { return n.depth }

// Children are the node's sub-tasks, in the order they were opened.
func (n *TreeNode) Children() []*TreeNode { return n.children }

// Check measures one state of the node against its own ground and records
// it on the tree.
func (n *TreeNode) Check(in StepInput) (CheckResult, error) {
	v, err := n.run.Step(in)
	if err != nil {
		return v, err
	}
	c := treeCheck{goal: in.Goal, drifting: v.Drifting}
	n.checks = append(n.checks, c)
	r := n.root
	r.log = append(r.log, c)
	r.sinceProgress++
	if n == r {
		d := distFallback
		if in.Distance.Known {
			d = in.Distance.Value
		}
		if len(r.rootDist) == 0 || d < minInt(r.rootDist) {
			r.sinceProgress = 0
		}
		r.rootDist = append(r.rootDist, d)
	}
	return v, nil
}

func minInt(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

// Sub opens a sub-task under n, grounded by its first check on goal
// (advancing, at distance d). Past MaxDepth it is refused (ErrTooDeep).
func (n *TreeNode) Sub(goal string, d Distance) (*TreeNode, CheckResult, error) {
	if n.depth+1 > MaxDepth {
		return nil, CheckResult{}, fmt.Errorf("%w: depth %d exceeds the deepest a tree may nest, %d — a decomposition this deep has lost its goal", ErrTooDeep, n.depth+1, MaxDepth)
	}
	id := fmt.Sprintf("%s/%d", n.id, len(n.children)+1)
	c := &TreeNode{run: NewRun(RunOptions{ID: id}), id: id, root: n.root, depth: n.depth + 1}
	n.children = append(n.children, c)
	v, err := c.Check(StepInput{Goal: goal, Progress: ProgressAdvancing, Distance: d})
	return c, v, err
}

// TreeStatus is the whole tree as one reading, from its root.
type TreeStatus struct {
	Depth         int     `json:"depth"`
	Nodes         int     `json:"nodes"`
	Steps         int     `json:"steps"`
	SinceProgress int     `json:"since_progress"`
	RootChecks    int     `json:"root_checks"`
	Stalled       bool    `json:"stalled"`
	RootGoal      *string `json:"root_goal"`
	DriftingNodes int     `json:"drifting_nodes"`
}

// walk is the tree from n, pre-order, without recursion (a deep tree must
// not overflow the reader).
func (n *TreeNode) walk() []*TreeNode {
	var out []*TreeNode
	stack := []*TreeNode{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, x)
		for i := len(x.children) - 1; i >= 0; i-- {
			stack = append(stack, x.children[i])
		}
	}
	return out
}

// Status reads the tree n is in: how deep it nested, how many runs and
// steps it spent, and whether it spins — at least treeStall steps
// anywhere since the root's distance last fell, with two root checks or
// more (one root check is no evidence either way).
func (n *TreeNode) Status() TreeStatus {
	r := n.root
	nodes := r.walk()
	s := TreeStatus{Nodes: len(nodes), Steps: len(r.log), SinceProgress: r.sinceProgress, RootChecks: len(r.rootDist)}
	for _, x := range nodes {
		s.Depth = max(s.Depth, x.depth)
	}
	s.Stalled = s.SinceProgress >= treeStall && s.RootChecks >= 2
	if len(r.checks) > 0 {
		g := r.checks[0].goal
		s.RootGoal = &g
	}
	for _, c := range r.log {
		if c.drifting {
			s.DriftingNodes++
		}
	}
	return s
}

// Report is the whole tree, indented, each run's ground goal, its steps
// and drifts, then the tree's own verdict.
func (n *TreeNode) Report() string {
	r := n.root
	s := r.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "laserbrain · recursion tree · depth %d · %d recursions · %d steps", s.Depth, s.Nodes, s.Steps)
	for _, x := range r.walk() {
		b.WriteString("\n")
		b.WriteString(strings.Repeat("  ", x.depth))
		if x.depth > 0 {
			b.WriteString("└ ")
		}
		goal, drifts := "(no ground)", 0
		if len(x.checks) > 0 {
			goal = x.checks[0].goal
		}
		for _, c := range x.checks {
			if c.drifting {
				drifts++
			}
		}
		writePyReprString(&b, goal)
		fmt.Fprintf(&b, " · %d steps", len(x.checks))
		if drifts > 0 {
			fmt.Fprintf(&b, "  ⚑ %d drift(s)", drifts)
		}
	}
	if s.Stalled {
		fmt.Fprintf(&b, "\n  ⚑ the TREE is spinning — %d steps across the set since the root got closer", s.SinceProgress)
	} else {
		fmt.Fprintf(&b, "\n  tree on track — root closing (last progress %d steps ago)", s.SinceProgress)
	}
	return b.String()
}
