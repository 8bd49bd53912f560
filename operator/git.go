package operator

import (
	"strings"
)

// gitGlobalWithValue are git's global options that take a separate value.
var gitGlobalWithValue = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--attr-source", "--list-cmds"}

// git strips git's global options (-C dir, -c key=value, --git-dir, …),
// resolves an alias defined inline with -c alias.NAME=…, analyses a push,
// and returns the normalised words "git SUBCOMMAND ARGS…" for the grammar
// patterns and the pack. It returns nil when the alias ran a shell command
// (already analysed).
func (a *analyzer) git(rest []arg, d int, in input, aliasDepth int) []string {
	aliases := map[string]string{}
	i := 0
	for ; i < len(rest); i++ {
		w := rest[i]
		if !w.known {
			break
		}
		s := w.val
		if !strings.HasPrefix(s, "-") {
			break
		}
		name, value, hasValue := strings.Cut(s, "=")
		if strings.HasPrefix(s, "-C") && len(s) > 2 && !strings.HasPrefix(s, "--") {
			continue // -Cdir
		}
		if contains(gitGlobalWithValue, name) && !hasValue {
			if i+1 < len(rest) {
				i++
				value = rest[i].val
			}
		}
		if name == "-c" {
			key, v, _ := strings.Cut(value, "=")
			if k := strings.ToLower(key); strings.HasPrefix(k, "alias.") {
				aliases[strings.TrimPrefix(k, "alias.")] = v
			}
		}
	}
	rest = rest[i:]
	if len(rest) == 0 {
		return []string{"git"}
	}
	if rest[0].known {
		if def, ok := aliases[strings.ToLower(rest[0].val)]; ok {
			if aliasDepth > MaxDepth {
				a.unknown("git aliases nest too deep", "")
				return nil
			}
			if sh, ok := strings.CutPrefix(def, "!"); ok {
				tail, _ := joinArgs(rest[1:])
				a.script(sh+" "+tail, d+1)
				return nil
			}
			expanded := splitWords(def)
			if len(expanded) == 0 {
				return []string{"git"}
			}
			return a.git(append(expanded, rest[1:]...), d, in, aliasDepth+1)
		}
	}
	if rest[0].known && rest[0].val == "push" {
		a.gitPush(rest[1:])
	}
	return append([]string{"git"}, vals(rest)...)
}

// splitWords splits an alias definition the way git does (shell-like
// quoting, no expansion).
func splitWords(s string) []arg {
	var out []arg
	var cur strings.Builder
	started := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, started = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			started = true
		case c == ' ' || c == '\t' || c == '\n':
			if started {
				out = append(out, arg{val: cur.String(), known: true})
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if started {
		out = append(out, arg{val: cur.String(), known: true})
	}
	return out
}

var pushWithValue = []string{"-o", "--push-option", "--repo", "--receive-pack", "--exec"}

// gitPush finds the forms of a destructive push the grammar's text patterns
// miss: short-flag clusters (-uf), a forcing refspec (+main), --mirror,
// deleting refs (--delete, -d, :branch) and --prune.
func (a *analyzer) gitPush(args []arg) {
	force, lease, short := false, false, false
	var operands []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			continue
		}
		s := w.val
		name, _, hasValue := strings.Cut(s, "=")
		switch {
		case s == "--":
			for _, o := range args[i+1:] {
				operands = append(operands, o.val)
			}
			i = len(args)
		case s == "--force":
			force = true
		case name == "--force-with-lease":
			lease = true
		case s == "--mirror":
			a.push("git push --mirror (overwrites and deletes remote refs)")
		case s == "--delete":
			a.push("git push --delete (deletes remote refs)")
		case s == "--prune":
			a.push("git push --prune (deletes remote refs with no local counterpart)")
		case contains(pushWithValue, name) && !hasValue:
			i++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				c := s[j]
				if c == 'f' {
					short = true
				}
				if c == 'd' {
					a.push("git push --delete (deletes remote refs)")
				}
				if c == 'o' {
					if j == len(s)-1 {
						i++
					}
					break
				}
			}
		default:
			operands = append(operands, s)
		}
	}
	if force {
		a.add(Finding{Label: "parsed: " + grammarIrreversible[grammarPushForce].label, Outward: true, Where: Executed, grammar: grammarPushForce})
	}
	if short {
		a.add(Finding{Label: "parsed: " + grammarIrreversible[grammarPushF].label, Outward: true, Where: Executed, grammar: grammarPushF})
	}
	if lease {
		a.add(Finding{Label: "parsed: " + grammarIrreversible[grammarPushLease].label, Outward: true, Where: Executed, grammar: grammarPushLease})
	}
	// The first operand is the remote; the rest are refspecs.
	if len(operands) > 1 {
		for _, ref := range operands[1:] {
			switch {
			case strings.HasPrefix(ref, "+"):
				a.push("git push +refspec (force-push to remote)")
			case strings.HasPrefix(ref, ":") && len(ref) > 1:
				a.push("git push :ref (deletes remote refs)")
			}
		}
	}
}

func (a *analyzer) push(label string) {
	a.add(Finding{Label: "parsed: " + label, Outward: true, Where: Executed, grammar: -1})
}
