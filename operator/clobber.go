package operator

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

// clobberLabel is the finding of one command that destroys the content of
// many files.
const clobberLabel = "destroys the content of every file it is given"

// feed is what find -exec, xargs -I or parallel hand the command they run:
// each file they find or read, spelled mark in its arguments.
type feed struct {
	mark string
	// each: the command replaces the content of the item it is fed.
	each bool
}

// isItem: the word is the file the feed puts there (find replaces {} in
// -exec's words; -execdir's ./{} too).
func (f *feed) isItem(w arg) bool {
	return f != nil && f.mark != "" && w.known && (w.val == f.mark || strings.HasSuffix(w.val, "/"+f.mark))
}

// feeding runs f with the files a find or xargs hands it spelled mark, and
// says whether what ran replaced the content of each of them.
func (a *analyzer) feeding(mark string, f func()) bool {
	saved := a.feed
	a.feed = &feed{mark: mark}
	f()
	each := a.feed.each
	a.feed = saved
	return each
}

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
		if a.feed.isItem(w) {
			a.feed.each = true
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
	a.add(Finding{Label: "parsed: " + c.name + " of several files (" + clobberLabel + ")", Where: Executed, grammar: -1,
		Command: commandText(c.name, c.args), Paths: paths, unknownPath: unknown})
}

// holds: a file is there to lose, on disk or written earlier in the line
// (a file that does not exist is created: nothing is lost).
func (a *analyzer) holds(p string) bool {
	if _, ok := a.files[p]; ok {
		return true
	}
	if !filepath.IsAbs(p) {
		return true // where it lies is not known
	}
	_, err := os.Lstat(p)
	return err == nil
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
	}
	return true
}
