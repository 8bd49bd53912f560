package laserbrain

import (
	"errors"
	"strings"
	"testing"
)

// A chain of sub-tasks nests to MaxDepth and no further; the refusal names
// the depth, and the tree is read from any node as from its root.
func TestTreeMaxDepth(t *testing.T) {
	root := NewTree("run")
	if _, err := root.Check(StepInput{Goal: "decompose", Progress: ProgressAdvancing, Distance: Dist(9)}); err != nil {
		t.Fatal(err)
	}
	n := root
	for d := 1; d <= MaxDepth; d++ {
		c, _, err := n.Sub("level", Dist(5))
		if err != nil {
			t.Fatalf("depth %d: %v", d, err)
		}
		n = c
	}
	if _, _, err := n.Sub("one more", Dist(5)); !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "depth 51") {
		t.Fatalf("depth %d: %v, want ErrTooDeep", MaxDepth+1, err)
	}
	if s, r := n.Status(), root.Status(); s.Depth != MaxDepth || s.Nodes != MaxDepth+1 || s.Steps != r.Steps || *s.RootGoal != "decompose" || *r.RootGoal != "decompose" {
		t.Fatalf("status from the deepest node %+v, from the root %+v", s, root.Status())
	}
	if !strings.HasPrefix(n.Report(), "laserbrain · recursion tree · depth 50 · 51 recursions · 51 steps\n'decompose' · 1 steps\n  └ 'level'") {
		t.Fatalf("report:\n%s", n.Report()[:200])
	}
}
