package shell

import (
	"os"
	"path/filepath"
	"strings"
)

// The paths a command writes, as the analyzer records them: joined to the
// directory it runs in, links followed, patterns expanded where the files
// exist.

// addWrite records one path a command writes (del: removes) and returns
// its index in a.writes, or -1.
func (a *analyzer) addWrite(w arg, by string, del bool) int {
	if w.val == "" && w.known {
		return -1
	}
	if a.feed.isItem(w) {
		// find's {} (xargs -I's string) is each file it hands over: no
		// path the gate knows.
		w = arg{val: w.val}
	}
	// Each path may cost a walk of its links (a system call per part): a
	// huge argument list stops at the budget, and the analysis is then
	// incomplete (unknown), never allowed.
	if a.overTime() {
		return -1
	}
	p, known := a.resolve(w)
	if !known && w.known && strings.HasPrefix(w.val, "~") {
		// The home directory is the session's.
		if home, ok := a.home(); ok && (w.val == "~" || strings.HasPrefix(w.val, "~/")) {
			p, known = filepath.Join(home, w.val[1:]), true
		}
	}
	if !w.known {
		// $NAME and ${NAME} of variables set in the session's
		// environment are what the shell will see; anything else stays
		// unknown.
		if x, ok := expandEnv(w.val, a.env); ok {
			p, known = a.resolve(arg{val: x, known: true})
		}
	}
	if known {
		p = filepath.Clean(p)
	}
	wr := Write{Path: p, Known: known, Delete: del, Glob: w.glob, By: by}
	if known && filepath.IsAbs(p) {
		if r := ResolveLinks(p); r != p {
			wr.Real = r
		}
	}
	key := wr.Path + "\x00" + by
	if del {
		key += "\x00d"
	}
	if a.seenWrites[key] {
		for i := range a.writes {
			if a.writes[i].Path == wr.Path && a.writes[i].By == by && a.writes[i].Delete == del {
				return i
			}
		}
	}
	if len(a.writes) >= 256 {
		a.mayWrite(by)
		return -1
	}
	var matches []string
	if wr.Glob && known && filepath.IsAbs(p) {
		// The shell expands a pattern against the files there: those
		// are what it writes (a pattern that matches nothing stays a
		// word of its own).
		matches = shellGlob(p)
		wr.expanded = len(matches) > 0
	}
	a.seenWrites[key] = true
	a.writes = append(a.writes, wr)
	i := len(a.writes) - 1
	for _, m := range matches {
		a.addWrite(arg{val: m, known: true}, by, del)
	}
	return i
}

// shellGlob expands a pattern as bash does by default: a * or ? matches
// no leading dot; at most 256 matches.
func shellGlob(pattern string) []string {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil
	}
	pp := strings.Split(filepath.ToSlash(pattern), "/")
	var out []string
	for _, m := range matches {
		mp := strings.Split(filepath.ToSlash(m), "/")
		hidden := false
		for i := range mp {
			if i < len(pp) && strings.ContainsAny(pp[i], "*?[") && strings.HasPrefix(mp[i], ".") && !strings.HasPrefix(pp[i], ".") {
				hidden = true
			}
		}
		if !hidden {
			out = append(out, m)
		}
		if len(out) >= 256 {
			break
		}
	}
	return out
}

// mayWrite records that a program may write where the gate cannot see.
func (a *analyzer) mayWrite(by string) {
	key := "\x00" + by
	if a.seenWrites[key] {
		return
	}
	a.seenWrites[key] = true
	a.writes = append(a.writes, Write{By: by})
}

// wrote remembers what a command wrote to a file, so a script written and
// then run in the same line is read as written.
func (a *analyzer) wrote(w arg, content input, appendTo bool) {
	p, ok := a.resolve(w)
	if !ok {
		return
	}
	f := vfile{text: content.text, known: content.kind == literalInput}
	if old, ok := a.files[p]; ok && appendTo {
		f = vfile{text: old.text + f.text, known: old.known && f.known}
	}
	a.files[p] = f
}

// expandEnv expands $NAME and ${NAME} from the environment env; false
// when something stays unknown (an unset variable, a substitution).
func expandEnv(p string, env Env) (string, bool) {
	if strings.Contains(p, "$(") || strings.Contains(p, "`") || strings.Contains(p, "${") && strings.ContainsAny(p, ":#%/") {
		return p, false
	}
	ok := true
	out := os.Expand(p, func(name string) string {
		v, set := env(name)
		if !set || v == "" {
			ok = false
			return "$" + name
		}
		return v
	})
	return out, ok
}

// home is the session's home directory: $HOME where the command runs.
func (a *analyzer) home() (string, bool) {
	h, _ := a.env("HOME")
	return h, filepath.IsAbs(h)
}

// configDir is where the session's programs keep their settings:
// $XDG_CONFIG_HOME, else ~/.config.
func (a *analyzer) configDir() (string, bool) {
	if x, _ := a.env("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return x, true
	}
	h, ok := a.home()
	return filepath.Join(h, ".config"), ok
}

// ResolveLinks follows symbolic links in the longest existing prefix of p.
func ResolveLinks(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
