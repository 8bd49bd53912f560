package shell

import (
	"strings"
)

// A makefile read the way GNU make reads what matters here: lines joined
// at a trailing backslash, variables (=, :=, ::=, ?=, +=) and explicit
// rules with their prerequisites and recipe lines (tab-led, or after a ;
// on the rule's line). Recipes are expanded as make expands them:
// variables the file or the command line sets, $$ as $, $(shell CMD) as a
// command substitution, automatic variables of the rule, and anything else
// (a function, a variable set elsewhere) as a word only the running shell
// knows. Pattern rules and included files are not read.

type makefile struct {
	vars  map[string]string
	rules map[string]*makeRule
	first string // the default goal: the first rule's first target
}

type makeRule struct {
	prereqs []string
	recipe  []string
}

// maxMakeLines bounds the recipe lines one make command is read for.
const maxMakeLines = 512

func parseMakefile(text string, cmdVars map[string]string) *makefile {
	mf := &makefile{vars: map[string]string{}, rules: map[string]*makeRule{}}
	text = strings.ReplaceAll(text, "\\\n", " ")
	var cur []*makeRule
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "\t") {
			for _, r := range cur {
				r.recipe = append(r.recipe, line[1:])
			}
			continue
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		cur = nil
		if name, op, val, ok := makeAssign(line); ok {
			switch op {
			case "+=":
				mf.vars[name] = strings.TrimSpace(mf.vars[name] + " " + val)
			case "?=":
				if _, set := mf.vars[name]; !set {
					mf.vars[name] = val
				}
			default:
				mf.vars[name] = val
			}
			continue
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue // include, export, a conditional: not read
		}
		deps, inline, _ := strings.Cut(strings.TrimLeft(line[colon+1:], ":"), ";")
		for _, t := range strings.Fields(line[:colon]) {
			if strings.Contains(t, "%") {
				continue
			}
			r := mf.rules[t]
			if r == nil {
				r = &makeRule{}
				mf.rules[t] = r
			}
			r.prereqs = append(r.prereqs, strings.Fields(deps)...)
			if strings.TrimSpace(inline) != "" {
				r.recipe = append(r.recipe, inline)
			}
			cur = append(cur, r)
			if mf.first == "" && !strings.HasPrefix(t, ".") {
				mf.first = t
			}
		}
	}
	for k, v := range cmdVars {
		mf.vars[k] = v
	}
	return mf
}

// makeAssign reads a variable assignment line.
func makeAssign(line string) (name, op, val string, ok bool) {
	line = strings.TrimPrefix(strings.TrimPrefix(line, "override "), "export ")
	for _, o := range []string{"::=", ":=", "?=", "+=", "!=", "="} {
		i := strings.Index(line, o)
		if i <= 0 {
			continue
		}
		// A rule's colon before the operator makes it a rule
		// (a target-specific variable is read as a rule: not followed).
		if c := strings.IndexByte(line, ':'); c >= 0 && c < i {
			return "", "", "", false
		}
		name = strings.TrimSpace(line[:i])
		if name == "" || strings.ContainsAny(name, " \t$") {
			return "", "", "", false
		}
		return name, o, strings.TrimSpace(line[i+len(o):]), true
	}
	return "", "", "", false
}

// recipe is the recipe lines make runs for target: its prerequisites'
// first (each once), then its own, expanded, without the @ - + prefixes.
func (mf *makefile) recipe(target string) []string {
	var out []string
	done := map[string]bool{}
	var visit func(t string, depth int)
	visit = func(t string, depth int) {
		r := mf.rules[t]
		if r == nil || done[t] || depth > 32 || len(out) >= maxMakeLines {
			return
		}
		done[t] = true
		for _, p := range r.prereqs {
			visit(p, depth+1)
		}
		for _, line := range r.recipe {
			line = strings.TrimLeft(strings.TrimSpace(line), "@-+ \t")
			if line != "" && len(out) < maxMakeLines {
				out = append(out, mf.expand(line, t, r, 0))
			}
		}
	}
	visit(target, 0)
	return out
}

// expand is s with make's references replaced (see the top of the file).
func (mf *makefile) expand(s, target string, r *makeRule, depth int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			end := matchingClose(s, i)
			if end < 0 {
				b.WriteString("${MAKE_UNREAD}")
				return b.String()
			}
			b.WriteString(mf.reference(s[i+1:end], target, r, depth))
			i = end
		case '@':
			b.WriteString(target)
		case '<':
			if len(r.prereqs) > 0 {
				b.WriteString(r.prereqs[0])
			}
		case '^', '+':
			b.WriteString(strings.Join(r.prereqs, " "))
		default:
			b.WriteString("${MAKE_AUTOMATIC}")
		}
	}
	return b.String()
}

// reference is what $(ref) expands to.
func (mf *makefile) reference(ref, target string, r *makeRule, depth int) string {
	if cmd, ok := strings.CutPrefix(ref, "shell "); ok {
		return "$(" + mf.expand(cmd, target, r, depth+1) + ")"
	}
	if v, ok := mf.vars[ref]; ok && depth < 16 {
		return mf.expand(v, target, r, depth+1)
	}
	switch ref {
	case "MAKE":
		return "make"
	case "RM":
		return "rm -f"
	case "CURDIR":
		return "."
	}
	return "${MAKE_UNREAD}"
}

// matchingClose is the index of the bracket closing the one at s[open].
func matchingClose(s string, open int) int {
	o, c := s[open], byte(')')
	if o == '{' {
		c = '}'
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
