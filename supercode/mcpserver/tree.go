package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

// subTasks is the caller's sub-task tree: its task is the root, whose
// checks are the ones check_state and modulate record on the run's task,
// and the sub-tasks it opened hang below it, each checked on its own
// ground. The tree is what no node sees alone — every sub-task on track
// while the root gets no closer. It is kept by this server, in memory, for
// the task it serves (as the instrument keeps one in the process that made
// it): started by the first tree tool from the task's checks so far, then
// fed each new one; a new task starts a new tree, and a server that
// restarts starts again from the task's checks, without its sub-tasks.
type subTasks struct {
	run, task string // the run and the task whose checks are the root's
	root      *laserbrain.TreeNode
	nodes     map[string]*laserbrain.TreeNode
}

// treeOf is the tree of the caller's current task, started from the
// task's checks when there is none.
func (s *Server) treeOf(ctx context.Context) (*subTasks, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	if s.tree != nil && s.tree.run == r.ID && s.tree.task == r.Task {
		return s.tree, nil
	}
	root := laserbrain.NewTree(r.ID)
	lr, err := s.sup.Task(ctx, r)
	if err != nil {
		return nil, err
	}
	if lr != nil {
		for _, st := range lr.Steps() {
			if _, err := root.Check(rootInput(st.Goal, st.Progress, st.Distance)); err != nil {
				return nil, err
			}
		}
	}
	s.tree = &subTasks{run: r.ID, task: r.Task, root: root, nodes: map[string]*laserbrain.TreeNode{r.ID: root}}
	return s.tree, nil
}

// rootCheck records on the tree's root, when there is a tree of that task,
// a check the run recorded: the root reads the task's own distance.
func (s *Server) rootCheck(run, task string, in laserbrain.StepInput) {
	switch {
	case s.tree == nil:
	case s.tree.run != run || s.tree.task != task:
		s.tree = nil // another task: its tree starts from its own checks
	default:
		_, _ = s.tree.root.Check(rootInput(in.Goal, in.Progress, in.Distance))
	}
}

// rootInput is what the root reads of a check of the task: its goal,
// progress and distance, as the instrument's tree is checked.
func rootInput(goal, progress string, d laserbrain.Distance) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: goal, Progress: progress, Distance: d}
}

func (s *Server) treeTools() []toolDef {
	nodeProp := prop("string", "A sub-task's id, as sub_task answered it (the root is your run's id).")
	return []toolDef{
		def("sub_task", "Open a sub-task under your task (or under the sub-task parent names), grounded on its own goal by a first check. "+
			"Check it with check_sub_task; read the whole tree with tree_status and tree_report. Kept by this server for the current task.",
			schema(map[string]any{"goal": prop("string", "The sub-task's goal."), "distance": prop("number", "How far it is from done, 0-10."),
				"parent": nodeProp}, "goal"), s.subTask),
		def("check_sub_task", "check_state for one sub-task: measured against the sub-task's own ground, and counted as a step of the whole tree.",
			schema(map[string]any{"node": nodeProp, "goal": prop("string", "What the sub-task is doing, in your own words."),
				"progress": progressProp, "distance": prop("number", "How far the sub-task is from done, 0-10.")}, "node", "goal"), s.checkSubTask),
		def("tree_status", "The whole sub-task tree as one reading: how deep it nested, how many sub-tasks and steps it spent, "+
			"and whether it spins (many steps anywhere while your own task got no closer).",
			schema(map[string]any{}), s.treeStatus),
		def("tree_report", "The sub-task tree indented, each sub-task's goal, steps and drifts, then the tree's verdict.",
			schema(map[string]any{}), s.treeReport),
	}
}

// node is the tree node a call names ("" names the root).
func (s *Server) node(ctx context.Context, id string) (*laserbrain.TreeNode, error) {
	t, err := s.treeOf(ctx)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return t.root, nil
	}
	n, ok := t.nodes[id]
	if !ok {
		return nil, badf("no sub-task %q in this task's tree (sub_task answers a sub-task's id; tree_report shows the tree)", id)
	}
	return n, nil
}

func (s *Server) subTask(ctx context.Context, a args) (any, error) {
	goal, err := a.str("goal")
	if err != nil {
		return nil, err
	}
	if goal = laserbrain.PyStrip(goal); goal == "" {
		return map[string]any{"error": "sub_task needs a goal — the sub-task is grounded on it"}, nil
	}
	parent, err := a.str("parent")
	if err != nil {
		return nil, err
	}
	d, err := a.raw("distance")
	if err != nil {
		return nil, err
	}
	p, err := s.node(ctx, parent)
	if err != nil {
		return nil, err
	}
	c, v, err := p.Sub(goal, laserbrain.DistanceFromJSON(d))
	if errors.Is(err, laserbrain.ErrTooDeep) {
		return map[string]any{"error": err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	s.tree.nodes[c.ID()] = c
	out := treeVerdict(v)
	out["node"], out["depth"] = c.ID(), c.Depth()
	return out, nil
}

func (s *Server) checkSubTask(ctx context.Context, a args) (any, error) {
	id, err := a.str("node")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, badf("node is required: the sub-task to check (check your own task with check_state)")
	}
	in, err := stateArgs(a)
	if err != nil {
		return nil, err
	}
	if in.Goal == "" {
		return map[string]any{"error": "check_sub_task needs a goal"}, nil
	}
	n, err := s.node(ctx, id)
	if err != nil {
		return nil, err
	}
	if n.Depth() == 0 {
		return nil, badf("node %s is your task itself: check it with check_state", id)
	}
	v, err := n.Check(laserbrain.StepInput{Goal: in.Goal, Progress: in.Progress, Distance: in.Distance})
	if err != nil {
		return nil, fmt.Errorf("check_sub_task: %w", err)
	}
	out := treeVerdict(v)
	out["node"] = id
	return out, nil
}

func (s *Server) treeStatus(ctx context.Context, _ args) (any, error) {
	n, err := s.node(ctx, "")
	if err != nil {
		return nil, err
	}
	return n.Status(), nil
}

func (s *Server) treeReport(ctx context.Context, _ args) (any, error) {
	n, err := s.node(ctx, "")
	if err != nil {
		return nil, err
	}
	return map[string]any{"report": n.Report()}, nil
}

// treeVerdict is a sub-task check's answer: the verdict's own fields.
func treeVerdict(v laserbrain.CheckResult) map[string]any {
	return map[string]any{"drifting": v.Drifting, "reason": v.Reason, "phi": v.Phi, "laserscore": v.Laserscore,
		"advice": v.Advice, "why": v.Why, "ground": v.Ground}
}
