#!/usr/bin/env python3
"""The Python laserbrain SDK behind the laserbrain vectors runner protocol.

    laserbrain vectors run --impl 'python3 laserbrain_vectors.py [--sdk DIR]'

Speaks the protocol of docs/porting.md on standard input and output: answers
hello with ready, each case with what the SDK computes for it, stop with bye.
The SDK is imported from --sdk DIR (a checkout or unpacked sdist: the directory
holding the laserbrain package) when given, else from wherever Python finds an
installed `laserbrain`. Each case runs in a fresh LASERBRAIN_HOME, so no case
sees another's contexts or evidence.

Standard library only. Diagnostics go to standard error; standard output
carries protocol messages and nothing else.
"""
import argparse
import contextlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile

PROTOCOL = 1


def load_sdk(path):
    if path:
        sys.path.insert(0, os.path.abspath(path))
    import laserbrain  # noqa: F401  (the import is the check)
    return laserbrain


# ── per-case homes ───────────────────────────────────────────────────────────
@contextlib.contextmanager
def fresh_home():
    """A LASERBRAIN_HOME (and HOME) of the case's own, removed afterwards.
    The SDK fixes the context store's path when it is imported, so that is
    pointed at the case's home too."""
    import pathlib
    import laserbrain
    home = tempfile.mkdtemp(prefix="lb-vector-")
    saved = {k: os.environ.get(k) for k in ("HOME", "LASERBRAIN_HOME")}
    saved_contexts = getattr(laserbrain, "CONTEXTS", None)
    os.environ["HOME"] = home
    os.environ["LASERBRAIN_HOME"] = home
    if saved_contexts is not None:
        laserbrain.CONTEXTS = pathlib.Path(home) / "config" / "contexts.json"
    try:
        yield home
    finally:
        if saved_contexts is not None:
            laserbrain.CONTEXTS = saved_contexts
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(home, ignore_errors=True)


def quiet(fn, *a, **kw):
    """Call fn with anything it prints sent to standard error, never stdout."""
    with contextlib.redirect_stdout(sys.stderr):
        return fn(*a, **kw)


# ── the kinds ────────────────────────────────────────────────────────────────
def verdict4(v):
    return {"drifting": v.drifting, "reason": v.reason, "phi": v.phi, "laserscore": v.laserscore}


_PERIOD = re.compile(r"with period (\d+)")


def drift_out(v):
    out = verdict4(v)
    po = getattr(v, "parent_overlap", None)
    if po is not None:
        out["parent_overlap"] = po
    if v.reason == "oscillating":
        # The reference states the cycle's period in its advice; a port
        # reports it as a field.
        m = _PERIOD.search(v.advice or "")
        if m:
            out["period"] = int(m.group(1))
    return out


def step_args(s):
    """A drift step's fields as the kinds read them: a missing goal or progress
    is the empty string (so ungrammatical), a missing distance unknown."""
    return dict(goal=s.get("goal") if s.get("goal") is not None else "",
                progress=s.get("progress") if s.get("progress") is not None else "",
                distance=s.get("distance"),
                parent_goal=s.get("parent_goal"),
                user_turn=bool(s.get("user_turn", False)))


def k_normalise(lb, text):
    return sorted(lb.norm(text))


def k_laserscore(lb, c):
    return lb.laserscore(c.get("goal") if c.get("goal") is not None else "",
                         c.get("progress") if c.get("progress") is not None else "",
                         c.get("distance"), c.get("parent_goal"))


def k_ceiling(lb, c):
    from laserbrain.ceiling import mark
    m = mark(c.get("doing"), c.get("next"), c.get("blocked"))
    return {"cause": m["cause"], "observation": m["observation"], "grounded": m["grounded"]}


def k_collisions(lb, c):
    from laserbrain.supercode import Supercode
    sc = Supercode()
    for agent, goal in c["agents"].items():
        sc.observe(agent, goal, "advancing", 5)
    return [{"agents": r["agents"], "overlap": r["overlap"]} for r in sc.collisions()]


def k_drift(lb, steps):
    with fresh_home():
        hz = lb.Harness()
        return [drift_out(hz.check(**step_args(s))) for s in steps]


def k_phronesis(lb, c):
    with fresh_home():
        hz = lb.Harness()
        for s in c["steps"]:
            hz.check(**step_args(s))
        j = hz.phronesis()
        out = {"verdict": j["verdict"]}
        if isinstance(j.get("control"), dict):
            out["control"] = j["control"]["decision"]
        return out


def k_drift_full(lb, c):
    with fresh_home():
        hz = lb.Harness()
        results = []
        for s in c["steps"]:
            if "saw" in s:
                hz.saw(**s["saw"])
                results.append(None)
                continue
            ch = s["check"]
            kw = dict(goal=ch.get("goal"), progress=ch.get("progress", "advancing"),
                      distance=ch.get("distance", 5))
            if "parent_goal" in ch:
                kw["parent_goal"] = ch["parent_goal"]
            if "user_turn" in ch:
                kw["user_turn"] = ch["user_turn"]
            v = hz.check(**kw)
            results.append({"drifting": v.drifting, "reason": v.reason, "phi": v.phi,
                            "laserscore": v.laserscore, "advice": v.advice, "why": v.why,
                            "anchored": v.anchored, "goal_score": v.goal_score,
                            "parent_overlap": getattr(v, "parent_overlap", None),
                            "ground_score": v.ground_score})
        return {"results": results, "phronesis": hz.phronesis(), "corroboration": hz.corroboration()}


def sc_report(sc):
    try:
        return sc.report()
    except Exception:  # the reference's report() cannot format an agent seen only by events
        return None


def sc_route(sc):
    rows = []
    for r in sc.route():
        r = dict(r)
        r["yield"] = r.pop("yield_")
        rows.append(r)
    return rows


def k_supercode(lb, c):
    from laserbrain.catches import Event
    from laserbrain.supercode import Supercode
    with fresh_home():
        sc = Supercode(goal=c["goal"]) if c.get("goal") is not None else Supercode()
        if c["sub"] == "watch":
            results = []
            for op in c["ops"]:
                if op["op"] == "observe":
                    kw = step_args(op)
                    results.append(verdict4(sc.observe(op["agent"], **kw)))
                elif op["op"] == "saw":
                    sc.saw(op["agent"], Event(**op["event"]))
                    results.append(None)
                else:
                    results.append({"findings": sc.findings(), "collisions": sc.collisions(),
                                    "fleet_catches": sc.fleet_catches(), "route": sc_route(sc),
                                    "self": verdict4(sc.self_check()), "report": sc_report(sc)})
            return {"results": results}
        scripts = c["scripts"]
        escalations = []
        decisions = c.get("decisions")

        def stepper(steps):
            def step(ctx):
                s = steps[min(ctx["steps"], len(steps) - 1)]
                return {k: s[k] for k in ("goal", "progress", "distance", "done") if k in s}
            return step

        def on_escalate(who, v, ctx):
            n = len(escalations)
            d = decisions[n] if n < len(decisions) else None
            escalations.append({"who": who, "verdict": v.reason if v is not None else None,
                                "collision": "collision" in (ctx or {}) and v is None, "decision": d})
            return d

        kw = {"max_steps": c["max_steps"]}
        if c.get("escalate_after"):
            kw["escalate_after"] = c["escalate_after"]
        if decisions is not None:
            kw["on_escalate"] = on_escalate
        ctxs = sc.manage({name: stepper(steps) for name, steps in scripts.items()}, **kw)
        out = {}
        for name in scripts:
            ctx = dict(ctxs[name])
            if ctx.get("verdict") is not None:
                ctx["verdict"] = verdict4(ctx["verdict"])
            out[name] = ctx
        return {"contexts": out, "escalations": escalations, "report": sc_report(sc)}


def k_classify(lb, c):
    from laserbrain.operator import classify
    rev, out, why = classify(c["command"], reversible=c.get("reversible", False), outward=c.get("outward", False))
    labels = [w for w in why.split("; ") if w and not w.startswith("carve-out: ")] if why else []
    return {"reversible": rev, "outward": out, "labels": labels}


def k_lint(lb, spec):
    from laserbrain.workflow import Workflow
    return Workflow.from_spec(spec).lint()


def k_shape(lb, text):
    lang = lb._G["dictionary"]["phases"]["shape_language"]
    shape = []
    for p in text.split():
        if not shape or shape[-1] != p:
            shape.append(p)
    return re.fullmatch(lang["pattern"], " ".join(shape)) is not None


def k_mcp(lb, c, sdk):
    """One session against `python3 -m laserbrain mcp`: the process the
    reference's vectors came from, a fresh HOME, a ping after every line to
    mark where its answers end (the reference answers strictly in order)."""
    home = tempfile.mkdtemp(prefix="lb-mcp-")
    try:
        for name, spec in (c.get("local_workflows") or {}).items():
            d = os.path.join(home, ".laserbrain", "workflows")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name + ".json"), "w", encoding="utf-8") as f:
                f.write(spec if isinstance(spec, str) else json.dumps(spec, ensure_ascii=False))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "LASERBRAIN_"))}
        env.update(HOME=home, LASERBRAIN_HOME=home)
        if sdk:
            env["PYTHONPATH"] = os.path.abspath(sdk) + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.Popen([sys.executable, "-m", "laserbrain", "mcp"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=home)
        buf = b""

        def line(deadline=10.0):
            nonlocal buf
            while b"\n" not in buf:
                r, _, _ = select.select([p.stdout], [], [], deadline)
                if not r:
                    return None
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    return None
                buf += chunk
            l, buf = buf.split(b"\n", 1)
            return l

        recv = []
        alive = True
        for i, send in enumerate(c["send"]):
            text = send if isinstance(send, str) else json.dumps(send, ensure_ascii=False)
            marker = "zz-sync-%d" % i
            got = []
            if alive:
                try:
                    p.stdin.write(text.encode() + b"\n")
                    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": marker, "method": "ping"}).encode() + b"\n")
                    p.stdin.flush()
                except BrokenPipeError:
                    alive = False
            while alive:
                l = line()
                if l is None:
                    alive = False
                    break
                if not l.strip():
                    continue
                m = json.loads(l)
                if m.get("id") == marker:
                    break
                got.append(m)
            recv.append(got)
        with contextlib.suppress(BrokenPipeError):
            p.stdin.close()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stderr.read()
        return {"recv": recv, "exit": p.returncode}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def k_observe(lb, c):
    from laserbrain import observe
    obs = observe.Observer(goal="the case's task")
    sigs, progress = [], []
    for call in c["calls"]:
        args = call.get("args")
        obs.record(call["tool"], args, ok=call.get("ok", True))
        sigs.append(observe._sig(call["tool"], args))
        progress.append(obs.progress())
    return {"signatures": sigs, "progress": progress}


def k_tree(lb, c):
    with fresh_home():
        return _tree(lb, c)


def _tree(lb, c):
    root = lb.Harness(run_id="run")
    results = []
    for op in c["ops"]:
        n = root
        for k in op["node"]:
            n = n._children[k]
        if "check" in op:
            ch = op["check"]
            v = n.check(ch.get("goal"), ch.get("progress"), ch.get("distance"),
                        ch.get("parent_goal"), ch.get("user_turn", False))
            results.append({"drifting": v.drifting, "reason": v.reason, "phi": v.phi})
            continue
        s = op["sub"]
        try:
            child = n.sub(s["goal"], distance=s.get("distance"))
        except ValueError:
            results.append({"drifting": False, "reason": "", "phi": None, "refused": True})
            continue
        last = child._audit[-1]
        results.append({"run_id": child.run_id, "depth": child._depth, "drifting": last["drifting"],
                        "reason": last["reason"], "phi": last["phi"]})
    return {"results": results, "status": root.tree_status(), "report": root.tree_report()}


KINDS = {
    "normalise": k_normalise, "laserscore": k_laserscore, "ceiling": k_ceiling, "collisions": k_collisions,
    "drift": k_drift, "phronesis": k_phronesis, "drift-full": k_drift_full, "supercode": k_supercode,
    "classify": k_classify, "lint": k_lint, "shape": k_shape, "mcp": None, "observe": k_observe, "tree": k_tree,
}


# ── the protocol ─────────────────────────────────────────────────────────────
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sdk", help="the directory holding the laserbrain package (default: the installed one)")
    args = ap.parse_args(argv)
    try:
        lb = quiet(load_sdk, args.sdk)
    except Exception as e:  # no SDK: say so and stop, before the handshake
        print(f"cannot import laserbrain ({'from ' + args.sdk if args.sdk else 'installed'}): {e}", file=sys.stderr)
        return 2
    out = sys.stdout

    def send(msg):
        out.write(json.dumps(msg) + "\n")
        out.flush()

    for raw in sys.stdin:
        if not raw.strip():
            continue
        msg = json.loads(raw)
        op = msg.get("op")
        if op == "hello":
            send({"op": "ready", "protocol": PROTOCOL, "name": "laserbrain-sdk", "language": "python",
                  "version": getattr(lb, "__version__", "?"), "kinds": sorted(KINDS)})
        elif op == "case":
            ans = {"op": "answer", "id": msg["id"]}
            kind = msg["kind"]
            if kind not in KINDS:
                ans["skip"] = f"kind {kind!r} is not one this adapter answers"
            else:
                try:
                    if kind == "mcp":
                        ans["out"] = k_mcp(lb, msg["in"], args.sdk)
                    else:
                        ans["out"] = quiet(KINDS[kind], lb, msg["in"])
                except Exception as e:
                    ans["error"] = f"{type(e).__name__}: {e}"
            send(ans)
        elif op == "stop":
            send({"op": "bye"})
            return 0
        else:
            print(f"unknown op {op!r}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
