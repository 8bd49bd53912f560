package shell

import (
	"fmt"
	"slices"
	"strings"
)

// What an analysis says: its findings with their roles, the paths written
// or deleted, and the classification the grammar's patterns give.

// Analysis is everything the gate reads from one command line, in one walk
// of the parsed program: the findings with the role of each match, the
// paths it writes or deletes, and whether the walk followed everything.
// Decide turns it into the answer; nothing else reads the command again.
type Analysis struct {
	Command string `json:"command"`
	// Dir is the directory the command runs in ("" when unknown).
	Dir string `json:"dir,omitempty"`
	// Classification is the classification of the command declared
	// reversible and inward (Escalate applies another declaration).
	Classification
	Findings []Finding `json:"findings"`
	// Writes are the paths it writes, truncates, moves onto or deletes.
	Writes []Write `json:"writes,omitempty"`
	// Complete: every command the text runs was followed (nothing
	// unknown); Gaps says what was not.
	Complete bool     `json:"complete"`
	Gaps     []string `json:"gaps,omitempty"`
	// Reads are the files read from disk to decide — a script the command
	// runs, a makefile, package.json, a test file — each with the SHA-256
	// of the bytes read: what then runs must be what was read.
	Reads []FileRead `json:"reads,omitempty"`

	// parsed are the parsed view's findings, including those merged into
	// a grammar label (a policy rule must cover each one).
	parsed []Finding
	// tool is set for a tool call that is not a shell command (a file
	// write): its name.
	tool string
	// ran are the simple commands the walk read (for the policy's extra
	// publishers).
	ran []Ran
	// words are the command's words when it is one simple command of
	// literal words (Words), else nil.
	words []string
}

// Write is one path a command writes or deletes.
type Write struct {
	// Path is the path as the command names it, joined to the directory
	// it runs in and cleaned (absolute when that directory is known).
	// Empty for a program that may write where the gate cannot see.
	Path string `json:"path"`
	// Real is Path with symbolic links followed as far as it exists, when
	// that differs.
	Real string `json:"real,omitempty"`
	// Known is false when the path depends on something only the running
	// shell knows (a variable, a substitution, a directory a cd moved to
	// at run time), or the program may write anywhere.
	Known bool `json:"known"`
	// Delete: the command removes it (rm, unlink, shred, mv's source, find
	// -delete, rsync --delete).
	Delete bool `json:"delete,omitempty"`
	// Tree: somewhere under this directory (tar -x, unzip -d, find).
	Tree bool `json:"tree,omitempty"`
	// Glob: Path holds a pattern the shell expands.
	Glob bool   `json:"glob,omitempty"`
	By   string `json:"by"`
	// expanded: a pattern whose matches (the files that exist) are
	// recorded as writes of their own.
	expanded bool
}

// FileRead is one file the analysis read from disk: its path and the
// SHA-256 (hex) of the bytes it read.
type FileRead struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Ran is one simple command the analysis read, as it read it (wrappers
// gone, words normalised), in the role it runs in; Inert when it asks for
// help.
type Ran struct {
	Text  string
	Where Where
	Inert bool
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
	// Host is the host outside this machine the command sends data to
	// ("" for none, or one known only at run time): the project policy's
	// hosts may let it through.
	Host string `json:"host,omitempty"`
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

// Tool is the name of the tool for a call that is not a shell command (a
// file write; AnalyzeWrite), "" for a command.
func (an Analysis) Tool() string { return an.tool }

// Ran are the simple commands the walk read, in the order it read them.
func (an Analysis) Ran() []Ran { return an.ran }

// Expanded: w is a pattern whose matches (the files that exist) are
// writes of their own.
func (w Write) Expanded() bool { return w.expanded }

// Escalate applies a caller's declaration: classification only ever
// escalates, so a declared irreversible or outward action stays so.
func (an Analysis) Escalate(reversible, outward bool) Classification {
	v := an.Classification
	v.Labels = slices.Clone(v.Labels)
	v.Reversible = reversible && v.Reversible
	v.Outward = outward || v.Outward
	return v
}

// NeedsAuthorization: the command (declared reversible and inward) is
// irreversible or outward.
func (an Analysis) NeedsAuthorization() bool { return an.Classification.NeedsAuthorization() }

// PersonOnly is the first finding of a person's command that would run,
// if any.
func (an Analysis) PersonOnly() (Finding, bool) {
	for _, f := range an.Findings {
		if f.PersonOnly && !f.CarvedOut {
			return f, true
		}
	}
	return Finding{}, false
}

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
