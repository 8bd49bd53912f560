package operator

import (
	"strings"

	"github.com/dlclark/regexp2"
)

// packOn runs the extra pack's rules of one scope on a text: a command's
// normalised words (scope "command", anchored at the command) or code handed
// to an interpreter or database client (scope "code").
func (a *analyzer) packOn(name, text string, where Where) {
	for i := range packCompiled {
		r := &packCompiled[i]
		if (where == Executed) != (r.scope == "command") {
			continue
		}
		if !r.appliesTo(name) {
			continue
		}
		m, err := r.re.FindStringMatch(text)
		f := Finding{Label: "parsed: " + r.label, Outward: r.outward, Where: where, grammar: -1}
		switch {
		case err != nil:
			f.Where, f.Note = Unknown, errTimeout.Error()
		case m == nil:
			continue
		case where == InlineCode:
			f.Note = "in code run by " + name
		}
		a.add(f)
	}
}

// compiledPackRule is a pack rule ready to run.
type compiledPackRule struct {
	label    string
	outward  bool
	scope    string
	commands []string
	re       *regexp2.Regexp
}

var packCompiled = func() []compiledPackRule {
	out := make([]compiledPackRule, len(packRules))
	for i, r := range packRules {
		re := regexp2.MustCompile(r.Source, regexp2.None)
		re.MatchTimeout = MatchTimeout
		out[i] = compiledPackRule{label: r.Label, outward: r.Outward, scope: r.Scope, commands: r.Commands, re: re}
	}
	return out
}()

// appliesTo: the rule lists the command itself, or its name without trailing
// version digits (python3.11 is python) or without a .suffix (mkfs.ext4 is
// mkfs). gen checks examples the same way.
func (r *compiledPackRule) appliesTo(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	return contains(r.commands, name) || contains(r.commands, strings.TrimRight(name, "0123456789.")) || contains(r.commands, base)
}
