package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The items find -exec, xargs and a while-read loop hand a command: which
// word is the item, and what the command does to each one.

// fed records what the command fed the item does to each one.
func (f *feed) fed(what string) {
	if f.what == "" || what == clobberLabel {
		f.what = what
	}
}

// isItem: the word is the file the feed puts there (find replaces {} in
// -exec's words; -execdir's ./{} too).
func (f *feed) isItem(w arg) bool {
	if f == nil {
		return false
	}
	if !w.known {
		for _, n := range f.names {
			if w.val == "$"+n || w.val == "${"+n+"}" {
				return true
			}
		}
		return false
	}
	return f.mark != "" && (w.val == f.mark || strings.HasSuffix(w.val, "/"+f.mark))
}

// feeding runs f with the files a find or xargs hands it spelled mark, and
// says what what ran destroys of each of them ("" nothing).
func (a *analyzer) feeding(mark string, f func()) string {
	saved := a.feed
	a.feed = &feed{mark: mark}
	f()
	what := a.feed.what
	a.feed = saved
	return what
}

// feedingVars is feeding for a loop whose variables take each item (items:
// the literal words of its list, nil when the gate cannot list them).
func (a *analyzer) feedingVars(names []string, items []arg, f func()) string {
	saved := a.feed
	a.feed = &feed{names: names, items: items}
	f()
	what := a.feed.what
	a.feed = saved
	return what
}

// readNames are the variables a while loop's condition reads each line
// into (while read -r f; while IFS= read -r f), if it is a read.
func readNames(cond []*syntax.Stmt) []string {
	if len(cond) != 1 {
		return nil
	}
	call, ok := cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "read" {
		return nil
	}
	var names []string
	for i := 1; i < len(call.Args); i++ {
		w := call.Args[i].Lit()
		switch {
		case w == "":
			return nil
		case strings.HasPrefix(w, "-"):
			if len(w) == 2 && strings.ContainsAny(w[1:], "adinNptu") {
				i++
			}
		default:
			names = append(names, w)
		}
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	return names
}

// itemClobbered: the command a feed runs replaces the content of the item
// it is handed. A loop over named files is as many files as exist of
// them; any other feed hands files the gate cannot list.
func (a *analyzer) itemClobbered() {
	if a.feed.items != nil {
		n := 0
		for _, w := range a.feed.items {
			if p, ok := a.resolve(w); !ok || a.holds(p) {
				n++
			}
		}
		if n < 2 {
			return
		}
	}
	a.feed.fed(clobberLabel)
}

// clobberLabel is the finding of one command that destroys the content of
// many files.
const clobberLabel = "destroys the content of every file it is given"
