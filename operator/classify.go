package operator

import (
	"slices"
	"strings"
	"time"
)

// Where says in what role a command's text was found to match.
type Where uint8

const (
	// Executed: in a command the shell will run (after wrappers, splitting and
	// recursion into nested scripts).
	Executed Where = iota
	// InlineCode: in code handed to another interpreter (python -c, a heredoc
	// fed to node, SQL fed to psql). Scanned as text, not parsed.
	InlineCode
	// Data: only in arguments, quoted text, heredoc bodies or comments that
	// no shell runs (a commit message, an echo, a grep pattern).
	Data
	// Unknown: could not tell — the text does not parse, nests too deep, names
	// its command only at run time, or a pattern timed out. Fail closed.
	Unknown
	// DryRun: in a command that runs but, as parsed, changes nothing: a dry
	// run (npm publish --dry-run, git clean -n) or a help request.
	DryRun
)

var whereNames = [...]string{"executed", "inline code", "data", "unknown", "dry run"}

// whereRank orders roles from strongest: the role of a raw grammar match is
// the strongest role the parsed view found for it.
var whereRank = [...]uint8{Executed: 0, InlineCode: 1, DryRun: 2, Data: 3, Unknown: 4}

func (w Where) String() string { return whereNames[w] }

// MarshalText writes the role's name in JSON output.
func (w Where) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// Decision is what a pre-execution hook should do with a command.
type Decision uint8

const (
	// Allow: nothing irreversible found; let the agent's normal permission
	// flow decide.
	Allow Decision = iota
	// Ask: something irreversible appears only as data or code, or we could
	// not tell; a person should decide.
	Ask
	// Deny: an irreversible or outward command would run.
	Deny
)

var decisionNames = [...]string{"allow", "ask", "deny"}

func (d Decision) String() string { return decisionNames[d] }

// MarshalText writes the decision's name in JSON output.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Finding is one reason a command escalated.
type Finding struct {
	Label   string `json:"label"`
	Outward bool   `json:"outward"`
	Where   Where  `json:"where"`
	// CarvedOut is set when a dated allow entry covers this finding: it still
	// escalates the classification but does not block in a hook.
	CarvedOut bool   `json:"carved_out,omitempty"`
	Note      string `json:"note,omitempty"`
	// PersonOnly marks a person's command (laserbrain authorize, …): the
	// gate refuses it in every presence and no authorization lets it
	// through (person.go).
	PersonOnly bool `json:"person_only,omitempty"`
	// grammar is the index of the grammar pattern this finding is a parsed
	// view of, or -1.
	grammar int
}

// Verdict is the reference classification: the caller's declaration, only
// ever escalated, and the labels that escalated it.
type Verdict struct {
	Reversible bool `json:"reversible"`
	Outward    bool `json:"outward"`
	// Labels: grammar labels in grammar order, then (Classify only) the
	// parsed view's labels, each prefixed "parsed: ".
	Labels []string `json:"labels"`
	// Carveouts are the labels of the allow entries that matched.
	Carveouts []string `json:"carveouts,omitempty"`
	// Why is the reference's explanation: "carve-out: {label} (still asks)"
	// entries, then labels, joined by "; ".
	Why string `json:"why"`
}

// NeedsAuthorization is the operator's rule: irreversible or outward.
func (v Verdict) NeedsAuthorization() bool { return !v.Reversible || v.Outward }

// ClassifyGrammar is the reference classifier (spec §12): the grammar's
// patterns searched over the raw text. Every match forces reversible to false
// and ORs in its outward flag; allow entries only annotate; no match leaves
// the declaration as it was. A pattern that times out counts as a match.
func ClassifyGrammar(command string, reversible, outward bool) Verdict {
	v, _ := classifyRaw(command, reversible, outward, time.Now().Add(AnalysisBudget))
	return v
}

type rawMatch struct {
	matchResult
	carved bool // every match lies inside an allow match
}

func classifyRaw(command string, reversible, outward bool, deadline time.Time) (Verdict, []rawMatch) {
	v := Verdict{Reversible: reversible, Outward: outward, Labels: []string{}}
	var why []string
	var allowSpans []span
	lower := lowerForPrefilter(command)
	for _, p := range grammarAllow {
		if !p.mayMatch(lower) {
			continue
		}
		m := findBy(p.regexp(), command, deadline)
		if m.found {
			v.Carveouts = append(v.Carveouts, p.label)
			why = append(why, "carve-out: "+p.label+" (still asks)")
			allowSpans = append(allowSpans, m.spans...)
		}
	}
	raw := make([]rawMatch, len(grammarIrreversible))
	for i, p := range grammarIrreversible {
		if !p.mayMatch(lower) {
			continue
		}
		m := findBy(p.regexp(), command, deadline)
		raw[i] = rawMatch{matchResult: m}
		if !m.found {
			continue
		}
		v.Reversible = false
		v.Outward = v.Outward || p.outward
		v.Labels = append(v.Labels, p.label)
		why = append(why, p.label)
		raw[i].carved = !m.timedOut && within(m.spans, allowSpans)
	}
	v.Why = strings.Join(why, "; ")
	return v, raw
}

// within reports whether every span of inner lies inside some span of outer.
func within(inner, outer []span) bool {
	if len(outer) == 0 {
		return false
	}
	for _, s := range inner {
		ok := false
		for _, o := range outer {
			if s.start >= o.start && s.end <= o.end {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Result is the full classification: the reference verdict escalated further
// by the parsed view, every finding with its role, and the hook's decision.
type Result struct {
	Verdict
	Findings []Finding `json:"findings"`
	Decision Decision  `json:"decision"`
}

// Classify classifies a shell command for the operator gate. The grammar
// patterns run on the raw text first (rule 0: their labels always stand);
// then the command is parsed as bash and every command it would run —
// through wrappers, lists, pipelines, substitutions, nested shells, find,
// xargs and git aliases — is checked against the grammar patterns, the
// structural rules and the extra pack. Parsed findings only add escalations,
// with labels prefixed "parsed:" after the grammar labels; a parsed finding
// that repeats a grammar label already present is not listed twice. Text
// that cannot be parsed is irreversible (fail closed).
func Classify(command string, reversible, outward bool) Result {
	return ClassifyIn("", command, reversible, outward)
}

// ClassifyIn is Classify for a command that will run in directory dir (the
// hook event's cwd). The git model looks there to tell a file from a ref
// ("git checkout NAME" discards the changes to file NAME, but switches to
// branch NAME) and whether a pathspec matches anything; with dir "" it
// cannot, and such a command asks.
func ClassifyIn(dir, command string, reversible, outward bool) Result {
	deadline := time.Now().Add(AnalysisBudget)
	v, raw := classifyRaw(command, reversible, outward, deadline)
	a := newAnalyzer(deadline)
	a.dir = dir
	a.script(command, 0)

	r := Result{Verdict: v}
	seen := map[string]bool{}
	for _, l := range v.Labels {
		seen[l] = true
	}
	// The raw matches first, in grammar order, each with the role the parsed
	// view found for it.
	for i, m := range raw {
		if !m.found {
			continue
		}
		p := grammarIrreversible[i]
		f := Finding{Label: p.label, Outward: p.outward, CarvedOut: m.carved, grammar: i, Where: Data}
		switch {
		case m.timedOut:
			f.Where, f.Note = Unknown, errTimeout.Error()
		case a.failed:
			f.Where, f.Note = Unknown, "the command could not be parsed"
		default:
			// The role is the strongest the parsed view saw for this
			// pattern; the carve-out holds only if it covers every
			// command that matched.
			for _, pf := range a.findings {
				if pf.grammar != i {
					continue
				}
				if whereRank[pf.Where] < whereRank[f.Where] {
					f.Where, f.Note = pf.Where, ""
					if pf.Where == DryRun || pf.Where == InlineCode {
						f.Note = pf.Note
					}
				}
				if !pf.CarvedOut {
					f.CarvedOut = false
				}
			}
		}
		if f.Where == Data {
			f.Note = "in data: no command that runs matches"
		}
		r.Findings = append(r.Findings, f)
	}
	// why: the reference's carve-outs and labels, a raw label that only
	// matched data marked so, then the parsed view's labels.
	var why []string
	for _, c := range v.Carveouts {
		why = append(why, "carve-out: "+c+" (still asks)")
	}
	for _, f := range r.Findings {
		switch f.Where {
		case Data:
			why = append(why, f.Label+" (in data)")
		case Unknown, DryRun:
			why = append(why, f.Label+" ("+f.Note+")")
		default:
			why = append(why, f.Label)
		}
	}
	for _, f := range a.findings {
		if f.grammar >= 0 && raw[f.grammar].found {
			// Same class as a grammar label already listed; it only told
			// us where that match runs (used above).
			continue
		}
		r.Findings = append(r.Findings, f)
		r.Reversible = false
		r.Outward = r.Outward || f.Outward
		if !seen[f.Label] {
			seen[f.Label] = true
			r.Labels = append(r.Labels, f.Label)
			w := f.Label
			if f.Note != "" {
				w += " (" + f.Note + ")"
			}
			why = append(why, w)
		}
	}
	r.Why = strings.Join(why, "; ")
	r.Decision = decide(r.Findings)
	return r
}

// Add escalates r with a finding the caller made (the hook's protected
// paths, say): it is listed, labelled and explained like the parsed
// view's own findings, and the decision is taken again.
func (r *Result) Add(f Finding) {
	f.grammar = -1
	r.Findings = append(r.Findings, f)
	r.Reversible = false
	r.Outward = r.Outward || f.Outward
	if !slices.Contains(r.Labels, f.Label) {
		r.Labels = append(r.Labels, f.Label)
		w := f.Label
		if f.Note != "" {
			w += " (" + f.Note + ")"
		}
		if r.Why != "" {
			r.Why += "; "
		}
		r.Why += w
	}
	r.Decision = decide(r.Findings)
}

func decide(fs []Finding) Decision {
	d := Allow
	for _, f := range fs {
		if f.CarvedOut {
			continue
		}
		if f.Where == Executed {
			return Deny
		}
		d = Ask
	}
	return d
}

// Strongest is the strongest role among the findings that count (carved-out
// ones do not): where the match that decides stood. ok is false when none
// counts.
func Strongest(findings []Finding) (w Where, ok bool) {
	for _, f := range findings {
		if !f.CarvedOut && (!ok || whereRank[f.Where] < whereRank[w]) {
			w, ok = f.Where, true
		}
	}
	return w, ok
}
