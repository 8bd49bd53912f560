package shell

import (
	"os"
	"path/filepath"
	"strings"
)

// Mass truncation. Replacing one named file's content is an overwrite, like
// the Write tool: the agent names the file, and git or the agent's own
// history usually holds what was there. Replacing the content of many files
// at once — several operands, a pattern the shell expands, every file find
// matches or xargs reads — destroys them as surely as deleting them, and
// leaves the names behind so nothing looks missing: it is irreversible,
// like find -delete.

// clobbers records that one command replaces the content of files (a
// truncation that may shrink them, a > redirection, cp, dd or tee onto
// them): the file a feed hands it, or two or more files — named, or the
// matches of a pattern — is mass truncation. A pattern whose matches the
// gate cannot see counts as many.
func (a *analyzer) clobbers(c *cmdCall, files []arg) {
	n := 0
	unknown := false
	var paths []string
	for _, w := range files {
		if a.overTime() {
			return // incomplete: unknown, never allowed
		}
		if a.feed.isItem(w) {
			a.itemClobbered()
			continue
		}
		p, ok := a.resolve(w)
		switch {
		case !ok:
			n++
			unknown = true
		case w.glob && !filepath.IsAbs(p):
			n += 2 // matches the gate cannot list
			unknown = true
		case w.glob:
			m := shellGlob(p)
			n += max(len(m), 1) // no match: bash passes the word, truncate creates it
			paths = append(paths, m...)
		case a.holds(p):
			n++
			paths = append(paths, filepath.Clean(p))
		}
	}
	if n < 2 {
		return
	}
	a.add(Finding{Label: "parsed: " + c.name + " of several files (" + clobberLabel + ")", Where: Executed,
		Command: commandText(c.name, c.args), Paths: paths, unknownPath: unknown})
}

// truncateShrinks: truncate's size may make a file smaller, destroying
// what lay past it — an absolute size, -N (reduce), <N (at most), /N
// (round down), or -r FILE; only +N, >N and %N never shrink. Without a
// size truncate refuses to run.
func truncateShrinks(args []arg) bool {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			continue
		}
		v := w.val
		if v == "--" {
			return false
		}
		var size string
		switch {
		case v == "-s" || v == "--size" || v == "--siz" || v == "--si" || v == "--s":
			if i+1 >= len(args) {
				return false
			}
			if !args[i+1].known {
				return true
			}
			size = args[i+1].val
			i++
		case strings.HasPrefix(v, "--size=") || strings.HasPrefix(v, "--siz=") || strings.HasPrefix(v, "--si=") || strings.HasPrefix(v, "--s="):
			_, size, _ = strings.Cut(v, "=")
		case v == "-r" || v == "--reference" || strings.HasPrefix(v, "--reference=") || strings.HasPrefix(v, "-r") && !strings.HasPrefix(v, "--"):
			return true
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "s"):
			// -s0, -cs0: the value is glued on after s.
			_, size, _ = strings.Cut(v, "s")
			if size == "" {
				if i+1 >= len(args) {
					return false
				}
				if !args[i+1].known {
					return true
				}
				size = args[i+1].val
				i++
			}
		default:
			continue
		}
		if size == "" || !strings.ContainsAny(size[:1], "+>%") {
			return true
		}
	}
	return false
}

// truncateModel: truncate sets the size of its files; one that may shrink
// them replaces their content.
func (a *analyzer) truncateModel(c *cmdCall) bool {
	ops := operands(c.args, "-s", "--size", "-r", "--reference")
	for _, w := range ops {
		a.addWrite(w, c.name, false)
	}
	if truncateShrinks(c.args) {
		a.clobbers(c, ops)
		for _, w := range ops {
			a.losesWork(w, "truncate", commandText(c.name, c.args))
		}
	}
	return true
}

// Modes. A recursive chmod that sets modes outright or takes permissions
// away (an octal mode, =, -, --reference) replaces the mode of every file
// under it: a tree holds executables, read-only and private files side by
// side, nothing recorded which was which (git keeps only the executable
// bit of the files it tracks), so the modes cannot be put back; so does a
// chmod of a pattern matching several files, or of what find, xargs or a
// loop over a pattern hands it. One that only adds (u+w, +X) loses nothing
// but which files lacked the bit, and a chmod of named files leaves the
// agent knowing what it changed: both stay as they are.

// modesLabel is the finding of a command that replaces the modes of every
// file under a tree, or of every file a find or xargs feeds it.
const modesLabel = "replaces the mode of every file it is given: a tree of mixed modes cannot be put back"

// chmodLine reads chmod's command line as GNU chmod does: options (-R, -c,
// -f, -v and the long ones, anywhere), the mode (which may start with a
// dash: chmod -w f), then the files.
func chmodLine(args []arg) (mode arg, recursive, reference bool, files []arg) {
	hasMode := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.val
		switch {
		case w.known && v == "--":
			for _, f := range args[i+1:] {
				if !hasMode && !reference {
					mode, hasMode = f, true
					continue
				}
				files = append(files, f)
			}
			return mode, recursive, reference, files
		case w.known && strings.HasPrefix(v, "--"):
			name, _, _ := strings.Cut(v[2:], "=")
			switch {
			case len(name) >= 3 && strings.HasPrefix("recursive", name):
				recursive = true
			case len(name) >= 3 && strings.HasPrefix("reference", name):
				reference = true
				if !strings.Contains(v, "=") {
					i++
				}
			}
		case w.known && len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "cfvR") == "":
			recursive = recursive || strings.Contains(v, "R")
		case !hasMode && !reference:
			mode, hasMode = w, true
		default:
			files = append(files, w)
		}
	}
	return mode, recursive, reference, files
}

// modeReplaces: a chmod mode sets permissions outright or takes some away
// (or is known only at run time).
func modeReplaces(mode arg, reference bool) bool {
	if reference || !mode.known {
		return true
	}
	for _, clause := range strings.Split(mode.val, ",") {
		if strings.Trim(clause, "01234567") == "" || strings.ContainsAny(strings.TrimLeft(clause, "ugoa"), "-=") {
			return true
		}
	}
	return false
}

// chmodModel: chmod changes its files (making a hook executable enables
// it); a recursive one that replaces modes does so to every file under
// its directories.
func (a *analyzer) chmodModel(c *cmdCall) bool {
	mode, recursive, reference, files := chmodLine(c.args)
	for _, w := range files {
		a.addWrite(w, c.name, false)
	}
	if !modeReplaces(mode, reference) {
		return true
	}
	for _, w := range files {
		if a.feed.isItem(w) && a.feed.items == nil {
			a.feed.fed(modesLabel) // not named files: what find or a pattern hands it
		}
	}
	var paths []string
	tree, unknown := false, false
	for _, w := range files {
		if a.overTime() {
			return true
		}
		p, ok := a.resolve(w)
		if !recursive {
			// A pattern is files nobody named: as many as it matches.
			if w.glob && (!ok || !filepath.IsAbs(p) || len(shellGlob(p)) >= 2) {
				tree, unknown = true, unknown || !ok || !filepath.IsAbs(p)
				paths = append(paths, shellGlob(p)...)
			}
			continue
		}
		if !ok || w.glob || !filepath.IsAbs(p) {
			tree, unknown = true, true
			continue
		}
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			continue // one file: as without -R
		}
		tree = true
		paths = append(paths, filepath.Clean(p))
	}
	if tree {
		label := "parsed: chmod -R (" + modesLabel + ")"
		if !recursive {
			label = "parsed: chmod of a pattern (" + modesLabel + ")"
		}
		a.add(Finding{Label: label, Where: Executed,
			Command: commandText(c.name, c.args), Paths: paths, unknownPath: unknown})
	}
	return true
}
