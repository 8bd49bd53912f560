package shell

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGitOptionTables checks the option tables against the git on PATH:
// every long option git lists (hidden ones included) is in our table with
// the same value arity and negatability, and every short letter `git CMD -h`
// shows maps to the same option. The tables are git 2.39's; another version
// may differ (a test failure then says what to update).
func TestGitOptionTables(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	gitIn := func(args ...string) string {
		c := exec.Command("git", args...)
		c.Dir = repo
		out, _ := c.CombinedOutput() // -h exits 129
		return string(out)
	}
	shortLine := regexp.MustCompile(`^\s{4}-([A-Za-z0-9])(?:, --(?:\[no-\])?([A-Za-z0-9-]+))?(?:\s|$)`)
	for _, entry := range gitOptionTables {
		sub := entry.sub
		args := strings.Fields(sub)
		table := gitTable(sub)
		ours := map[string]*gitOpt{}
		for i := range table {
			if table[i].long != "" {
				ours[table[i].long] = &table[i]
			}
		}
		// Long options, from the completion helper.
		words := strings.Fields(gitIn(append(args, "--git-completion-helper-all")...))
		listed := map[string]bool{}
		required := map[string]bool{}
		for _, w := range words {
			if w == "--" || !strings.HasPrefix(w, "--") {
				continue
			}
			name := strings.TrimSuffix(w[2:], "=")
			listed[name] = true
			required[name] = strings.HasSuffix(w, "=")
		}
		for name, o := range ours {
			if !listed[name] {
				t.Errorf("git %s: our table has --%s, git does not", sub, name)
				continue
			}
			if required[name] != (o.arg == needsValue) {
				t.Errorf("git %s --%s: git says value required=%v, our table %v", sub, name, required[name], o.arg)
			}
			neg := "no-" + name
			if rest, ok := strings.CutPrefix(name, "no-"); ok {
				neg = rest
			}
			if listed[neg] == o.noNeg && ours[neg] == nil {
				t.Errorf("git %s --%s: git lists --%s: %v; our table says negatable: %v", sub, name, neg, listed[neg], !o.noNeg)
			}
		}
		for name := range listed {
			if ours[name] != nil {
				continue
			}
			if rest, ok := strings.CutPrefix(name, "no-"); ok && ours[rest] != nil {
				continue // a negation
			}
			if ours["no-"+name] != nil {
				continue // the negation of a no- option
			}
			t.Errorf("git %s: git has --%s, our table does not", sub, name)
		}
		// Short letters, from the usage.
		for _, line := range strings.Split(gitIn(append(args, "-h")...), "\n") {
			m := shortLine.FindStringSubmatch(line)
			if m == nil || m[1] == "-" {
				continue
			}
			letter, long := m[1][0], m[2]
			found := false
			for _, o := range table {
				if o.short == letter && o.long == long {
					found = true
				}
			}
			if !found {
				t.Errorf("git %s: git has -%c (--%s), our table does not", sub, letter, long)
			}
		}
	}
}

// The git command lists are searched by halves: they must stay sorted.
func TestGitCommandListsSorted(t *testing.T) {
	for name, l := range map[string][]string{"gitBuiltins": gitBuiltinsList[:], "gitDataCommands": gitDataCommandsList[:]} {
		if !slices.IsSorted(l) {
			t.Errorf("%s is not sorted", name)
		}
	}
	for _, c := range []string{"push", "status", "filter-repo", "commit"} {
		if !gitBuiltins(c) {
			t.Errorf("%s is not a builtin", c)
		}
	}
}
