"""Generates vectors/tree.json: the reference's sub-task trees, run over scripts of operations.

Each case is a list of operations on a tree whose root is Harness(run_id="run"): a check
on a node, or Harness.sub() under it; a node is named by its path of child indexes from
the root. The expected output is what the reference computes: each operation's verdict
(for sub(), the child's grounding check, its run id and depth; a sub() past MAX_DEPTH is
refused), then tree_status() and tree_report(). Nothing here computes an answer itself.

Run from the module root, with the reference on the path, in a fresh LASERBRAIN_HOME:

    LASERBRAIN_HOME=$(mktemp -d) python3 vectors/testdata/tree_reference.py --sdk ../shared/reference/laserbrain-sdk-0.53.0 > vectors/tree.json
"""
import argparse
import json
import os
import sys
import tempfile


def check(node, goal, progress="advancing", distance=5, **kw):
    d = {"goal": goal, "progress": progress, "distance": distance}
    d.update(kw)
    return {"node": node, "check": d}


def sub(node, goal, distance=5):
    return {"node": node, "sub": {"goal": goal, "distance": distance}}


CASES = [
    ("a root alone: one check, no evidence of stalling", [check([], "build the parser", distance=8)]),
    ("the reference's docstring example: a tokenizer sub-task under the parser",
     [check([], "build the parser", distance=8), sub([], "write the tokenizer", 4),
      check([0], "write the tokenizer", distance=2)]),
    ("the root closes: its distance falls, the tree is on track",
     [check([], "ship the release", distance=8), sub([], "write the changelog", 3),
      check([0], "write the changelog", distance=1), check([], "ship the release", distance=6)]),
    ("the tree spins: six steps in sub-tasks while the root's distance does not fall",
     [check([], "migrate the database", distance=7), check([], "migrate the database", distance=7),
      sub([], "write the migration", 5), check([0], "write the migration", distance=4),
      check([0], "write the migration", distance=3), sub([0], "test the rollback", 5),
      check([0, 0], "test the rollback", distance=2), check([0, 0], "test the rollback", distance=1)]),
    ("a sub-task drifts from its own ground",
     [check([], "build the parser", distance=8), sub([], "write the tokenizer", 4),
      check([0], "paint the shed", distance=4)]),
    ("siblings and a grandchild, walked pre-order",
     [check([], "build the compiler", distance=9), sub([], "write the lexer", 5), sub([], "write the parser", 5),
      sub([0], "handle unicode", 3), check([1], "write the parser", distance=3),
      check([0, 0], "handle unicode", "stuck", 3)]),
    ("an unknown distance at the root counts as 5",
     [check([], "tune the cache", distance=None), check([], "tune the cache", distance=4)]),
    ("a sub-task opened with an unknown distance",
     [check([], "tune the cache", distance=6), sub([], "measure hit rates", None)]),
    ("a goal with quotes, as the report writes it",
     [check([], "fix the user's \"login\" flow", distance=5), sub([], "it's the cookie", 3)]),
    ("a root with no check of its own: no ground, no root goal",
     [sub([], "write the docs", 4), check([0], "write the docs", distance=2)]),
]
# MAX_DEPTH: a chain of sub-tasks 50 deep is allowed, the 51st refused.
chain = [check([], "decompose forever", distance=9)]
for d in range(51):
    chain.append(sub([0] * d, f"level {d + 1}", 5))
CASES.append(("a chain nested to MAX_DEPTH (50); one more is refused", chain))


def node_at(root, path):
    n = root
    for k in path:
        n = n._children[k]
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdk", required=True, help="the directory holding the reference's laserbrain package")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="lb-tree-")
    os.environ["HOME"] = os.environ["LASERBRAIN_HOME"] = home
    sys.path.insert(0, args.sdk)
    import laserbrain

    cases = []
    for why, ops in CASES:
        root = laserbrain.Harness(run_id="run")
        results = []
        for op in ops:
            n = node_at(root, op["node"])
            if "check" in op:
                c = op["check"]
                v = n.check(c["goal"], c["progress"], c["distance"])
                results.append({"drifting": v.drifting, "reason": v.reason, "phi": v.phi})
                continue
            s = op["sub"]
            try:
                child = n.sub(s["goal"], distance=s["distance"])
            except ValueError:
                results.append({"drifting": False, "reason": "", "phi": None, "refused": True})
                continue
            last = child._audit[-1]
            results.append({"run_id": child.run_id, "depth": child._depth, "drifting": last["drifting"],
                            "reason": last["reason"], "phi": last["phi"]})
        cases.append({"in": {"ops": ops}, "out": {"results": results, "status": root.tree_status(),
                                                  "report": root.tree_report()}, "why": why})
    doc = {
        "kind": "tree",
        "source": "generated by vectors/testdata/tree_reference.py from the reference, laserbrain-sdk %s "
                  "(laserbrain/__init__.py: Harness.sub, tree_status, tree_report, MAX_DEPTH)"
                  % getattr(laserbrain, "__version__", "?"),
        "cases": cases,
    }
    json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
