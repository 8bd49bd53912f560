package operator

import (
	"slices"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// packOn runs the pack's command rules on a command's normalised words
// (anchored at the command).
func (a *analyzer) packOn(name, text string, where Where, command string) {
	a.packAs(name, text, where, "", command)
}

// packAs runs the extra pack's rules of one scope on a text: a command's
// normalised words (scope "command", anchored at the command; where is the
// command's role: executed, or a dry run) or code handed to an interpreter
// or database client (scope "code", where InlineCode).
func (a *analyzer) packAs(name, text string, where Where, note, command string) {
	for i := range packCompiled {
		r := &packCompiled[i]
		if (where == InlineCode) != (r.scope == "code") {
			continue
		}
		if !r.appliesTo(name) || a.overTime() {
			continue
		}
		m, err := r.regexp(a.deadline.timeout()).FindStringMatch(text)
		f := Finding{Label: "parsed: " + r.label, Outward: r.outward, Where: where, Note: note, grammar: -1, Command: command}
		switch {
		case err != nil:
			f.Where, f.Note = Unknown, errTimeout.Error()
		case m == nil:
			continue
		case where == InlineCode && note == "":
			f.Note = "in code run by " + name
		}
		a.add(f)
	}
}

// compiledPackRule is a pack rule; its pattern is compiled on first use, so
// a hook process pays only for the rules its command can meet.
type compiledPackRule struct {
	label    string
	outward  bool
	scope    string
	commands []string
	source   string
	re       compiledOnce
}

// regexp is the rule's pattern with the given match timeout.
func (r *compiledPackRule) regexp(match time.Duration) *regexp2.Regexp {
	return r.re.get(match, func(match time.Duration) *regexp2.Regexp {
		re := regexp2.MustCompile(r.source, regexp2.None)
		re.MatchTimeout = match
		return re
	})
}

var packCompiled = func() []compiledPackRule {
	out := make([]compiledPackRule, len(packRules))
	for i, r := range packRules {
		out[i] = compiledPackRule{label: r.Label, outward: r.Outward, scope: r.Scope, commands: r.Commands, source: r.Source}
	}
	return out
}()

// appliesTo: the rule lists the command itself, or its name without trailing
// version digits (python3.11 is python) or without a .suffix (mkfs.ext4 is
// mkfs). gen checks examples the same way.
func (r *compiledPackRule) appliesTo(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	return slices.Contains(r.commands, name) || slices.Contains(r.commands, strings.TrimRight(name, "0123456789.")) || slices.Contains(r.commands, base)
}
