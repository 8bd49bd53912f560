package shell

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// One step removed: a command that hands its work to text in a file — a
// make target's recipe, a package.json script — runs that text. The gate
// reads it as the tool would (the Makefile make picks, the scripts npm
// runs around the one named) and walks it like any other command line, so
// `make clean` whose recipe is `rm -rf src` is `rm -rf src`. A file written
// earlier in the same line is read as written.

// withStep runs f with note on the findings it adds (where they came
// from: "in the recipe of make clean").
func (a *analyzer) withStep(note string, f func()) {
	saved := a.step
	a.step = note
	f()
	a.step = saved
}

// makeValue: opt is one of GNU make's options that take a value in the
// next word.
func makeValue(opt string) bool {
	switch opt {
	case "-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-o", "--old-file", "--assume-old",
		"-W", "--what-if", "--new-file", "--assume-new", "-l", "--load-average", "--eval":
		return true
	}
	return false
}

// makeModel reads make's command line — the makefile (-f, or the one make
// looks for in -C DIR or here), the targets (the first rule's when none
// is named), variables given on it — and walks each recipe line of the
// targets and of what they depend on. A dry run (-n, -q) changes nothing
// but still shows its recipe as a dry run.
func (a *analyzer) makeModel(c *cmdCall) bool {
	var file, dir string
	var targets []string
	vars := map[string]string{}
	dry := false
	for i := 0; i < len(c.args); i++ {
		w := c.args[i]
		name, val, glued := strings.Cut(w.val, "=")
		switch {
		case !w.known:
			a.unknown("make "+w.val, "a word only the running shell knows")
			return true
		case w.val == "-n" || w.val == "--just-print" || w.val == "--dry-run" || w.val == "--recon" || w.val == "-q" || w.val == "--question":
			dry = true
		case makeValue(w.val) && i+1 < len(c.args):
			val, i = c.args[i+1].val, i+1
			fallthrough
		case strings.HasPrefix(w.val, "--") && glued && makeValue(name):
			switch name {
			case "-f", "--file", "--makefile":
				file = val
			case "-C", "--directory":
				dir = filepath.Join(dir, val)
			}
		case len(w.val) > 2 && (strings.HasPrefix(w.val, "-f") || strings.HasPrefix(w.val, "-C")) && w.val[1] != '-':
			if w.val[1] == 'f' {
				file = w.val[2:]
			} else {
				dir = filepath.Join(dir, w.val[2:])
			}
		case strings.HasPrefix(w.val, "-"):
		case glued:
			vars[name] = val
		default:
			targets = append(targets, w.val)
		}
	}
	if !a.placed() {
		return true
	}
	text, path, ok := a.makefile(file, dir, c.io)
	if !ok {
		return true
	}
	mf := parseMakefile(text, vars)
	if len(targets) == 0 && mf.first != "" {
		targets = []string{mf.first}
	}
	where := Executed
	if dry {
		where = DryRun
	}
	for _, t := range targets {
		a.withRole(where, "make -n prints the recipe and runs nothing", func() {
			a.withStep("in the recipe of make "+t+" ("+filepath.Base(path)+")", func() {
				for _, line := range mf.recipe(t) {
					a.subshell(func() { a.walk.script(line, c.d+1) })
				}
			})
		})
	}
	return true
}

// makefile is the text of the makefile make reads: FILE, or GNUmakefile,
// makefile, Makefile in dir; ok false when there is none (make fails) or
// it cannot be read (recorded as unknown).
func (a *analyzer) makefile(file, dir string, io stdio) (text, path string, ok bool) {
	names := []string{"GNUmakefile", "makefile", "Makefile"}
	if file != "" {
		names = []string{file}
	}
	for _, n := range names {
		p := n
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, n)
		}
		text, ok, why := a.scriptText(arg{val: p, known: true}, io)
		switch {
		case ok:
			return text, p, true
		case why != whyMissing:
			a.unknown("make reads "+p, why)
			return "", "", false
		}
	}
	if a.mayHaveWritten() {
		a.unknown("make reads a makefile", "something earlier in the line may have written it")
	}
	return "", "", false
}

// npmLifecycle are the scripts npm runs around an install of the
// project itself (npm install or ci with no package named).
var npmLifecycle = []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"}

// pnpmBuiltin are pnpm's and yarn's own commands: another first word
// names a script of the package.
var pnpmBuiltin = firstuse.Value[[]string]{New: func() []string {
	return strings.Fields(`add audit bin cache config create dedupe deploy dlx env exec fetch help i import info init install
	install-test it link list licenses ln ls outdated pack patch patch-commit prune publish rebuild remove rm root run server setup
	start store test un uninstall unlink up update upgrade version view why workspace workspaces plugin set node npm dedupe`)
}}

// packageScripts: npm, pnpm and yarn run a script of package.json — npm
// run/test/start/stop/restart and pnpm's and yarn's script names — and
// npm its pre and post scripts around it; an install of the project runs
// its lifecycle scripts. Each runs with sh -c and is walked as such.
func (a *analyzer) packageScripts(tool string, subs []string, rest []arg, d int) {
	if len(subs) == 0 {
		return
	}
	sub, names := subs[len(subs)-1], []string(nil)
	operand := ""
	for _, w := range rest {
		if !strings.HasPrefix(w.val, "-") {
			operand = w.val
			break
		}
	}
	switch {
	case sub == "run" && operand != "":
		names = []string{"pre" + operand, operand, "post" + operand}
	case sub == "test" || sub == "start" || sub == "stop" || sub == "restart":
		names = []string{"pre" + sub, sub, "post" + sub}
	case (sub == "install" || sub == "ci" || sub == "i") && operand == "":
		names = npmLifecycle
	case tool != "npm" && !slices.Contains(pnpmBuiltin.Get(), sub):
		names = []string{"pre" + sub, sub, "post" + sub}
	default:
		return
	}
	if !a.placed() {
		return
	}
	scripts, path, ok := a.packageJSON()
	if !ok {
		return
	}
	for _, n := range names {
		if s, found := scripts[n]; found && s != "" {
			a.withStep("in the package.json script "+n+" ("+path+")", func() {
				a.subshell(func() { a.walk.script(s, d+1) })
			})
		}
	}
	if scripts["test"] != "" && slices.Contains(names, "test") && a.dirNow() != "" {
		// The test script runs the project's test files.
		a.testRun(jsTests, []testRoot{{path: a.dirNow(), recursive: true}}, tool+" test")
	}
}

// packageJSON is the scripts of package.json where the command runs; ok
// false when there is none (the tool fails) or it cannot be read
// (recorded as unknown).
func (a *analyzer) packageJSON() (scripts map[string]string, path string, ok bool) {
	text, ok, why := a.scriptText(arg{val: "package.json", known: true}, stdio{})
	if !ok {
		if why != whyMissing || a.mayHaveWritten() {
			a.unknown("runs a script of package.json", why)
		}
		return nil, "", false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(text), &pkg); err != nil {
		a.unknown("runs a script of package.json", "it is not JSON the gate can read")
		return nil, "", false
	}
	return pkg.Scripts, "package.json", true
}
