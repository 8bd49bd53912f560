// A port written from docs/porting.md alone, to check that the page is
// enough: the normaliser, laserscore, collisions, classify, shape and the
// drift kind's check (section 5), in JavaScript, behind the runner protocol.
//
//   laserbrain vectors run --impl 'node adapter.mjs GRAMMAR.json'
//
// GRAMMAR.json is grammar/grammar.json (classify and shape read its
// patterns, as the page says).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const grammar = JSON.parse(readFileSync(process.argv[2], "utf8"));

// ── section 3, normalise ─────────────────────────────────────────────────
const STOP = new Set(("a an and as at be by for from i in into is it my of on or our out " +
  "so that the then this to up we with your").split(" "));
const STEM = /(ings?|edly|ed|ers?|es|s|tion|ment)$/;

function lower(text) {
  // Full Unicode case mapping: JavaScript's toLowerCase maps İ to i + U+0307
  // and the Kelvin sign to k, as the page asks.
  return String(text).toLowerCase();
}

function norm(text) {
  const toks = new Set();
  for (const w of lower(text).match(/[a-z0-9']+/g) || []) {
    if (STOP.has(w)) continue;
    toks.add(w.length > 4 ? w.replace(STEM, "") : w);
  }
  return [...toks].sort(byCodePoint);
}

function byCodePoint(a, b) {
  const x = [...a].map((c) => c.codePointAt(0));
  const y = [...b].map((c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

// ── section 4 ────────────────────────────────────────────────────────────
// round(x, 2): the exact binary value, to nearest, ties to even.
function round2(x) {
  const neg = x < 0;
  const s = Math.abs(x).toFixed(100); // exact: toFixed computes the digits exactly
  const [int, frac] = s.split(".");
  let kept = BigInt(int + frac.slice(0, 2));
  const rest = frac.slice(2);
  const half = "5" + "0".repeat(rest.length - 1);
  if (rest > half || (rest === half && kept % 2n === 1n)) kept += 1n;
  const v = Number(kept) / 100;
  return neg ? -v : v;
}

function f2(x) {
  return round2(x).toFixed(2);
}

// Distance: int(float(x)) clamped 0..10, 5 when float() cannot read it;
// missing or null: unknown.
function pyFloat(x) {
  if (typeof x === "number") return x;
  if (typeof x === "boolean") return x ? 1 : 0;
  if (typeof x !== "string") return NaN;
  const s = [...strip(x)].map((c) => (/\p{Nd}/u.test(c) ? String(digitValue(c)) : c)).join("").replace(/(?<=\d)_(?=\d)/g, "");
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(s)) return NaN;
  return NaN;
}

function asDist(x) {
  if (x === undefined || x === null) return null;
  const f = pyFloat(x);
  if (!Number.isFinite(f)) return 5;
  return Math.max(0, Math.min(10, Math.trunc(f)));
}

// Python's strip(): Unicode whitespace and U+001C..U+001F (section 4).
function strip(s) {
  return String(s).replace(/^[\s\u001c-\u001f]+|[\s\u001c-\u001f]+$/gu, "");
}

// A decimal digit of any script: its value is its place in its run of ten.
function digitValue(ch) {
  if (!/\p{Nd}/u.test(ch)) return -1;
  let cp = ch.codePointAt(0), start = cp;
  while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

const PROGRESS = new Set(["advancing", "stuck", "circling"]);

function spelling(toks) {
  return toks.join("|");
}

function laserscore(goal, progress, distance, parent) {
  if (strip(goal) === "" || !PROGRESS.has(progress)) return null;
  const d = asDist(distance);
  let s = `⟨${spelling(norm(goal))}⟩ ${progress} d${d === null ? "?" : d}`;
  if (parent !== undefined && parent !== null && strip(parent) !== "") s += ` ⊂ ⟨${spelling(norm(parent))}⟩`;
  return s;
}

function jaccard(a, b) {
  const A = new Set(a), B = new Set(b);
  if (A.size === 0 && B.size === 0) return 0;
  let inter = 0;
  for (const t of A) if (B.has(t)) inter++;
  return inter / (A.size + B.size - inter);
}

// ── section 3, collisions ────────────────────────────────────────────────
function collisions(agents) {
  const names = Object.keys(agents).sort(byCodePoint);
  const out = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = norm(agents[names[i]]), b = norm(agents[names[j]]);
      if (a.length === 0 || b.length === 0) continue;
      const o = jaccard(a, b);
      if (o >= 0.6) out.push({ agents: [names[i], names[j]], overlap: round2(o) });
    }
  }
  return out.sort((x, y) => y.overlap - x.overlap); // stable
}

// ── section 3, classify and shape ────────────────────────────────────────
// Python's \b, \w and \s are Unicode-aware (section 4): a word character is
// a letter, a number or "_".
const W = "[\\p{L}\\p{N}_]";
function pyRegExp(pattern, flags) {
  const src = pattern
    .replace(/\\b/g, `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`)
    .replace(/\\w/g, W);
  return new RegExp(src, flags + "u");
}

function classify(c) {
  let reversible = c.reversible ?? false, outward = c.outward ?? false;
  const labels = [];
  for (const p of grammar.operator_patterns.irreversible) {
    if (pyRegExp(p.pattern, "i").test(c.command)) {
      reversible = false;
      outward = outward || Boolean(p.outward);
      labels.push(p.label);
    }
  }
  return { reversible, outward, labels };
}

function shape(text) {
  const phases = [];
  for (const p of text.split(/\s+/).filter(Boolean)) if (phases[phases.length - 1] !== p) phases.push(p);
  return new RegExp(grammar.dictionary.phases.shape_language.pattern).test(phases.join(" "));
}

// ── section 5, one check ─────────────────────────────────────────────────
const DRIFT_CLASS = new Set(["ungrammatical", "goal-drift", "stalled", "self-report:stuck", "self-report:circling"]);

function newRun() {
  return { ground: null, dist: [], trace: [], trail: [], latch: false };
}

function period(trail) {
  for (let p = 2; p <= 6; p++) {
    const need = Math.max(6, 2 * p);
    if (trail.length < need) continue;
    const tail = trail.slice(trail.length - need);
    if (tail.every((x) => x === tail[0])) continue;
    let ok = true;
    for (let i = p; i < tail.length; i++) if (tail[i] !== tail[i - p]) ok = false;
    if (ok) return p;
  }
  return 0;
}

function check(run, s) {
  const goalIn = s.goal ?? "", progress = s.progress ?? "", userTurn = s.user_turn === true;
  const prev = run.trace.length > 0 && DRIFT_CLASS.has(run.trace[run.trace.length - 1]);
  const goal = strip(goalIn);
  const toks = goal === "" ? [] : norm(goal);
  let v;
  if (goal === "" || !PROGRESS.has(progress)) {
    v = { drifting: true, reason: "ungrammatical", phi: 0, laserscore: null };
  } else {
    const d = asDist(s.distance);
    const ls = laserscore(goal, progress, s.distance, s.parent_goal);
    const ground = (extra) => {
      run.ground = { toks, progress, d };
      run.dist = d === null ? [] : [d];
      return extra;
    };
    if (!run.ground) {
      v = ground({ drifting: false, reason: "grounded", phi: 0, laserscore: ls });
    } else {
      const g = run.ground;
      const goalTerm = 0.5 * (1 - (toks.length === 0 && g.toks.length === 0 ? 1 : jaccard(toks, g.toks)));
      const distTerm = d !== null && g.d !== null ? Math.abs(d - g.d) / 10 : 0;
      const phi = goalTerm + 0.3 * distTerm + 0.2 * (progress !== g.progress ? 1 : 0);
      const anchor = jaccard(toks, g.toks);
      if ((progress === "stuck" || progress === "circling") && phi > 0.15) {
        v = { drifting: prev, reason: "self-report:" + progress, phi, laserscore: ls };
      } else if (anchor < 0.3) {
        const parent = s.parent_goal ?? "";
        if (userTurn) {
          v = ground({ drifting: false, reason: "reground", phi: 0, laserscore: ls });
        } else if (strip(parent) !== "" && jaccard(norm(strip(parent)), g.toks) >= 0.3) {
          v = { drifting: false, reason: "excursion", phi, laserscore: ls };
        } else {
          v = { drifting: true, reason: "goal-drift", phi, laserscore: ls };
          if (strip(parent) !== "") v.parent_overlap = round2(jaccard(norm(strip(parent)), g.toks));
        }
      } else if (d === null) {
        v = { drifting: false, reason: "advancing", phi, laserscore: ls };
      } else {
        run.dist.push(d);
        const h = run.dist;
        if (h.length > 4 && Math.min(...h.slice(-4)) >= h[h.length - 5]) {
          v = { drifting: prev, reason: "stalled", phi, laserscore: ls };
        } else {
          v = { drifting: false, reason: "advancing", phi, laserscore: ls };
        }
      }
    }
  }
  v.phi = round2(v.phi);
  run.trace.push(v.reason);
  run.trail.push(spelling(toks));
  const p = period(run.trail);
  if (p === 0) {
    run.latch = false;
  } else if (!run.latch) {
    run.latch = true;
    v = { ...v, drifting: true, reason: "oscillating", period: p };
  }
  return v;
}

function drift(steps) {
  const run = newRun();
  return steps.map((s) => check(run, s));
}

// ── section 1, the protocol ──────────────────────────────────────────────
const KINDS = {
  normalise: (x) => norm(x),
  laserscore: (c) => laserscore(c.goal ?? "", c.progress ?? "", c.distance, c.parent_goal),
  collisions: (c) => collisions(c.agents),
  classify,
  shape,
  drift,
};

const say = (m) => process.stdout.write(JSON.stringify(m) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const m = JSON.parse(line);
  if (m.op === "hello") {
    say({ op: "ready", protocol: 1, name: "porting-check", language: "javascript", version: "1", kinds: Object.keys(KINDS) });
  } else if (m.op === "case") {
    try {
      say({ op: "answer", id: m.id, out: KINDS[m.kind](m.in) });
    } catch (e) {
      say({ op: "answer", id: m.id, error: String(e) });
    }
  } else if (m.op === "stop") {
    say({ op: "bye" });
    process.exit(0);
  }
}
