package shell

import (
	"fmt"
	"strings"
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

// whereRank orders roles from strongest (by the answer they get with
// nobody there: executed, code and unknown are refused, dry runs and data
// go ahead with a note): the role of a raw grammar match is the strongest
// role the parsed view found for it.
var whereRank = [...]uint8{Executed: 0, InlineCode: 1, Unknown: 2, DryRun: 3, Data: 4}

func (w Where) String() string { return whereNames[w] }

// MarshalText writes the role's name in JSON output.
func (w Where) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText reads a role by its name.
func (w *Where) UnmarshalText(b []byte) error {
	for i, n := range whereNames {
		if string(b) == n {
			*w = Where(i)
			return nil
		}
	}
	return fmt.Errorf("role %q: want executed, inline code, data, unknown or dry run", b)
}

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
	// Command is the command it was found in, as the analysis read it
	// (wrappers gone, words normalised); Paths are what it deletes, when
	// it deletes paths (rm -r, find -delete, rsync --delete).
	Command string   `json:"command,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	// Rule is the policy rule that let it through (Decide sets it).
	Rule string `json:"rule,omitempty"`
	// grammarNo is 1 + the index of the grammar pattern this finding is a
	// parsed view of; 0 when it is none.
	grammarNo int
	// unknownPath: some path it deletes is known only at run time.
	unknownPath bool
	// also are the other commands the same finding was found in.
	also []Origin
}

// Origin is one command a finding came from: the command as the analysis
// read it and the paths it deletes (UnknownPath: some of them are known
// only at run time).
type Origin struct {
	Command     string
	Paths       []string
	UnknownPath bool
}

// origins are every command a finding came from.
func (f Finding) origins() []Origin {
	return append([]Origin{{Command: f.Command, Paths: f.Paths, UnknownPath: f.unknownPath}}, f.also...)
}

// Origins are every command finding f of this analysis came from. A raw
// grammar match came from every command the parsed view found it in; a
// finding found in no command (data, an unreadable command) came from
// one with no text.
func (an Analysis) Origins(f Finding) []Origin {
	if f.grammarNo == 0 || f.Label != irreversiblePatterns[f.grammarNo-1].Label {
		return f.origins()
	}
	var out []Origin
	for _, pf := range an.parsed {
		if pf.grammarNo == f.grammarNo {
			out = append(out, pf.origins()...)
		}
	}
	return out
}

// Classification is the reference classification: the caller's
// declaration, only ever escalated, and the labels that escalated it.
type Classification struct {
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
func (v Classification) NeedsAuthorization() bool { return !v.Reversible || v.Outward }

// ClassifyGrammar is the reference classifier (spec §12): the grammar's
// patterns searched over the raw text. Every match forces reversible to false
// and ORs in its outward flag; allow entries only annotate; no match leaves
// the declaration as it was. A pattern that times out counts as a match.
func ClassifyGrammar(command string, reversible, outward bool) Classification {
	v, _ := classifyRaw(command, reversible, outward, deadline{})
	return v
}

// maxRawScan bounds the text the raw grammar scan runs a pattern on when
// the pattern's words are in it: the patterns backtrack, and on a longer
// text one match can take longer than the whole budget. Past it a pattern
// whose words occur counts as a match (unknown), as one that timed out.
const maxRawScan = 256 << 10

type rawMatch struct {
	matchResult
	carved bool // every match lies inside an allow match
}

func classifyRaw(command string, reversible, outward bool, deadline deadline) (Classification, []rawMatch) {
	v := Classification{Reversible: reversible, Outward: outward, Labels: []string{}}
	var why []string
	var allowSpans []span
	lower := lowerForPrefilter(command)
	for i := range allowPatterns {
		p := allowPattern(i)
		if !p.mayMatch(lower) {
			continue
		}
		m := findBy(p.regexp(deadline.timeout()), command, deadline)
		if m.found {
			v.Carveouts = append(v.Carveouts, p.Label)
			why = append(why, "carve-out: "+p.Label+" (still asks)")
			allowSpans = append(allowSpans, m.spans...)
		}
	}
	raw := make([]rawMatch, len(irreversiblePatterns))
	for i := range irreversiblePatterns {
		p := irreversiblePattern(i)
		if !p.mayMatch(lower) {
			continue
		}
		var m matchResult
		if deadline.set() && (deadline.passed() || len(command) > maxRawScan) {
			// The budget is spent: a pattern not run counts as a match
			// (fail closed), like one that timed out.
			m = matchResult{found: true, timedOut: true}
		} else {
			m = findBy(p.regexp(deadline.timeout()), command, deadline)
		}
		raw[i] = rawMatch{matchResult: m}
		if !m.found {
			continue
		}
		v.Reversible = false
		v.Outward = v.Outward || p.Outward
		v.Labels = append(v.Labels, p.Label)
		why = append(why, p.Label)
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

// Classify is the classification of a shell command with the caller's
// declaration: Analyze, then Escalate. It only ever escalates: a match
// forces irreversible (and ORs its outward flag); nothing relaxes a
// declaration.
func Classify(command string, reversible, outward bool) Classification {
	return Analyze(command, "").Escalate(reversible, outward)
}

// result turns the walk into the Analysis: the raw matches first, in
// grammar order, each with the role the parsed view found for it (rule 0:
// their labels always stand), then the parsed view's own findings.
func (a *analyzer) result(command, dir string, v Classification, raw []rawMatch) Analysis {
	an := Analysis{Command: command, Dir: dir, Classification: v, Findings: []Finding{}, parsed: a.findings, ran: a.ran}
	seen := map[string]bool{}
	for _, l := range v.Labels {
		seen[l] = true
	}
	for i, m := range raw {
		if !m.found {
			continue
		}
		p := &irreversiblePatterns[i]
		f := Finding{Label: p.Label, Outward: p.Outward, CarvedOut: m.carved, grammarNo: i + 1, Where: Data}
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
				if pf.grammarNo != i+1 {
					continue
				}
				if whereRank[pf.Where] < whereRank[f.Where] {
					f.Where, f.Note, f.Command, f.Paths = pf.Where, "", pf.Command, pf.Paths
					if pf.Where != Executed {
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
		an.Findings = append(an.Findings, f)
	}
	// why: the reference's carve-outs and labels, a raw label that only
	// matched data marked so, then the parsed view's labels.
	var why []string
	for _, c := range v.Carveouts {
		why = append(why, "carve-out: "+c+" (still asks)")
	}
	for _, f := range an.Findings {
		switch f.Where {
		case Data:
			why = append(why, f.Label+" (in data)")
		case Unknown, DryRun, InlineCode:
			why = append(why, f.Label+" ("+f.Note+")")
		default:
			why = append(why, f.Label)
		}
	}
	for _, f := range a.findings {
		if f.grammarNo > 0 && raw[f.grammarNo-1].found {
			// Same class as a grammar label already listed; it only told
			// us where that match runs (used above).
			continue
		}
		an.Findings = append(an.Findings, f)
		an.Reversible = false
		an.Outward = an.Outward || f.Outward
		if !seen[f.Label] {
			seen[f.Label] = true
			an.Labels = append(an.Labels, f.Label)
			w := f.Label
			if f.Note != "" {
				w += " (" + f.Note + ")"
			}
			why = append(why, w)
		}
	}
	an.Why = strings.Join(why, "; ")
	an.Writes = a.writes
	an.Gaps = a.gaps
	an.Complete = len(a.gaps) == 0
	for _, f := range an.Findings {
		if f.Where == Unknown {
			an.Complete = false
		}
	}
	return an
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

// grammarIndex finds a grammar pattern by the start of its label; the
// structural rules use it to report a parsed form of a grammar class.
func grammarIndex(prefix string) int {
	for i, p := range irreversiblePatterns {
		if strings.HasPrefix(p.Label, prefix) {
			return i
		}
	}
	panic("shell: no grammar pattern labelled " + prefix)
}

var (
	grammarRmRf      = grammarIndex("rm -rf")
	grammarPushForce = grammarIndex("git push --force ")
	grammarPushF     = grammarIndex("git push -f")
	grammarPushLease = grammarIndex("git push --force-with-lease")
	grammarResetHard = grammarIndex("git reset --hard")
)

// findArgs are find's primaries that take one argument (two for -fprintf);
// that argument is never itself a primary (find . -name -delete deletes
