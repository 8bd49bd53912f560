package shell

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
	"github.com/laserkit/laserkit/internal/gitindex"
)

// Test runners run test code one step removed: `go test` compiles and runs
// the packages' _test.go files, pytest the test modules and conftest.py
// files under its paths, `npm test` whatever test files the project's
// runner picks up. A test file unchanged since it was committed is the
// project's own; one changed here (its content is not the index's, or git
// does not track it) is code the agent may have written, and the gate does
// not follow what test code does. Such a file whose code reaches a program
// (exec), the network or a deletion is unknown code — asked with a person
// there, refused with nobody there — named with what it reaches. A changed
// file that reaches none of them (an assertion edited in the usual
// edit-then-test loop) and every unchanged file go ahead. The runner's
// paths bound what is read: go test ./pkg/... reads that tree's test files.

// testLang is a test runner's language: which files are its test files
// and what in them reaches exec, the network or a deletion.
type testLang struct {
	runner  string
	isTest  func(name, dir string) bool
	reaches *firstuse.Value[[]reach]
}

// reach is one way test code reaches outside its test: what matches, and
// how a finding names it ("" for the match itself).
type reach struct {
	re   *regexp.Regexp
	name string
}

// maxTestWalk bounds the directory entries one analysis looks at for test
// files; past it the runner's test code is unknown.
const maxTestWalk = 20000

func reaches(pairs ...string) []reach {
	out := make([]reach, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, reach{re: regexp.MustCompile(pairs[i]), name: pairs[i+1]})
	}
	return out
}

var goReaches = firstuse.Value[[]reach]{New: func() []reach {
	return reaches(
		`"(os/exec|syscall|plugin|golang\.org/x/sys/unix|net|net/http|net/http/[a-z/]+|net/rpc|net/smtp|crypto/tls)"`, "",
		`\bimport\s+"C"`, "cgo",
		`//go:linkname\b`, "go:linkname",
		`\bos\.(?:RemoveAll|Remove|Truncate|StartProcess)\s*\(`, "",
	)
}}

var pyReaches = firstuse.Value[[]reach]{New: func() []reach {
	return reaches(
		`(?m)^\s*(?:import|from)\s+(subprocess|socket|urllib\d?|requests|http\.client|http|httpx|aiohttp|ftplib|smtplib|telnetlib|paramiko|pty|ctypes|multiprocessing|pexpect|sh|plumbum)\b`, "",
		`\bos\.(?:system|popen|exec\w*|spawn\w*|remove|unlink|rmdir|removedirs|fork|kill)\s*\(`, "",
		`\bshutil\.(?:rmtree|move)\s*\(`, "",
		`\bfrom\s+(?:os|shutil)\s+import\b[^\n]*\b(?:system|popen|remove|unlink|rmdir|removedirs|rmtree|exec\w*|spawn\w*)\b`, "",
		`\.(?:unlink|rmdir|rmtree)\s*\(`, "",
		`\basyncio\.create_subprocess_\w+`, "",
		`(?:^|[^.\w])(?:eval|exec|__import__)\s*\(`, "",
	)
}}

var jsReaches = firstuse.Value[[]reach]{New: func() []reach {
	return reaches(
		`(?:require\s*\(\s*|\bfrom\s*|\bimport\s*\(?\s*)['"]((?:node:)?(?:child_process|net|http|https|http2|dgram|tls|worker_threads)|execa|shelljs|cross-spawn|axios|node-fetch|got|undici|rimraf|del)['"]`, "",
		`\.(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync|execSync|spawnSync|execFile|execFileSync)\s*\(`, "",
		`\bfetch\s*\(`, "",
		`\b(?:Bun\.(?:spawn|spawnSync|\$)|Deno\.(?:run|Command|remove|connect))\b`, "",
		`(?:^|[^.\w])eval\s*\(|\bnew\s+Function\s*\(`, "",
	)
}}

var (
	goTests = testLang{runner: "go test", reaches: &goReaches,
		isTest: func(name, _ string) bool { return strings.HasSuffix(name, "_test.go") }}
	pyTests = testLang{runner: "pytest", reaches: &pyReaches,
		isTest: func(name, _ string) bool {
			return name == "conftest.py" || strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py"))
		}}
	jsTests = testLang{runner: "npm test", reaches: &jsReaches, isTest: isJSTest}
)

// isJSTest: a file the usual JavaScript test runners (jest, mocha, vitest,
// node --test, ava, tap) pick up — NAME.test.js, NAME-test.js,
// test-NAME.js, NAME.spec.ts, or a
// script under a test, tests, __tests__ or spec directory.
func isJSTest(name, dir string) bool {
	ext := filepath.Ext(name)
	switch ext {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
	default:
		return false
	}
	stem := strings.TrimSuffix(name, ext)
	if strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "-test") ||
		strings.HasPrefix(stem, "test-") || stem == "test" {
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(dir), "/") {
		switch part {
		case "test", "tests", "__tests__", "spec":
			return true
		}
	}
	return false
}

// testRun records a finding for each test file under roots (a directory
// and, when recursive, everything under it; or a file) that changed here
// and whose code reaches exec, the network or a deletion. text is the
// command as read.
func (a *analyzer) testRun(lang testLang, roots []testRoot, text string) {
	seen := map[string]bool{}
	budget := maxTestWalk
	for _, r := range roots {
		for _, p := range a.testFilesUnder(lang, r, &budget) {
			if seen[p] || a.overTime() {
				continue
			}
			seen[p] = true
			a.changedTest(lang, p, text)
		}
		if budget <= 0 {
			a.unknown(lang.runner+" runs more test files than the gate reads", "more than "+strconv.Itoa(maxTestWalk)+" files and directories under "+r.path)
			return
		}
	}
}

// testRoot is a path a test runner runs the tests under.
type testRoot struct {
	path      string
	recursive bool
}

// testFilesUnder lists lang's test files in r, spending one of budget per
// directory entry looked at.
func (a *analyzer) testFilesUnder(lang testLang, r testRoot, budget *int) []string {
	fi, err := os.Stat(r.path)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return []string{r.path}
	}
	var out []string
	var visit func(dir string, top bool)
	visit = func(dir string, top bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if *budget--; *budget <= 0 {
				return
			}
			name := e.Name()
			switch {
			case e.IsDir():
				if r.recursive && !skippedTestDir(lang, name) && (top || !nestedModule(lang, filepath.Join(dir, name))) {
					visit(filepath.Join(dir, name), false)
				}
			case e.Type().IsRegular() && lang.isTest(name, strings.TrimPrefix(dir, r.path)):
				out = append(out, filepath.Join(dir, name))
			}
		}
	}
	visit(r.path, true)
	return out
}

// skippedTestDir: a directory the runner does not look in for tests.
func skippedTestDir(lang testLang, name string) bool {
	if strings.HasPrefix(name, ".") || name == "node_modules" {
		return true
	}
	switch lang.runner {
	case "go test":
		return name == "testdata" || name == "vendor" || strings.HasPrefix(name, "_")
	case "pytest":
		return name == "__pycache__" || name == "venv" || name == "build" || name == "dist" || strings.HasSuffix(name, ".egg") || name == "site-packages"
	}
	return false
}

// nestedModule: dir is another Go module (./... stops at its go.mod).
func nestedModule(lang testLang, dir string) bool {
	if lang.runner != "go test" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// changedTest records p when it changed here and its code reaches exec,
// the network or a deletion.
func (a *analyzer) changedTest(lang testLang, p, text string) {
	if !a.changedHere(p) {
		return
	}
	data, err := readScript(p)
	if err != nil {
		a.unknown(lang.runner+" runs changed test code in "+a.shown(p), err.Error())
		return
	}
	a.readFrom(p, data)
	var what []string
	for _, r := range lang.reaches.Get() {
		m := r.re.FindStringSubmatch(string(data))
		if m == nil {
			continue
		}
		name := r.name
		if name == "" {
			name = strings.TrimLeft(strings.TrimSpace(strings.TrimRight(m[len(m)-1], "( \t")), ".")
		}
		what = append(what, name)
	}
	if len(what) == 0 {
		return
	}
	a.add(Finding{Label: "parsed: " + lang.runner + changedTestCode + "that reaches " + strings.Join(what, ", ") + " (" + a.shown(p) + ")",
		Where: Unknown, Command: text,
		Note: a.shown(p) + " changed in this work tree and the gate does not follow what test code does"})
	a.gap(lang.runner + " runs changed test code in " + a.shown(p))
}

// changedTestCode is in the label of every finding of changed test code.
const changedTestCode = " runs test code changed here "

// ChangedTestCode: the finding is test code changed in this work tree
// that a test runner runs (the refusal says what to do about it).
func (f Finding) ChangedTestCode() bool {
	return f.Where == Unknown && strings.Contains(f.Label, changedTestCode)
}

// shown is p as the command's directory sees it.
func (a *analyzer) shown(p string) string {
	if d := a.dirNow(); d != "" {
		if r, err := filepath.Rel(d, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

// changedHere: p is not as its repository's index holds it — untracked
// (ignored or not: the runner runs it all the same), or its content
// differs. A file in no repository has nothing to compare with: changed.
func (a *analyzer) changedHere(p string) bool {
	gitDir, rel, ok := repositoryOf(p)
	if !ok {
		return true
	}
	if a.indexes == nil {
		a.indexes = map[string]gitIndex{}
	}
	ix, read := a.indexes[gitDir]
	if !read {
		ix = gitIndex{entries: map[string]indexed{}, sha256: sha256Repository(gitDir)}
		hashLen := gitindex.SHA1Len
		if ix.sha256 {
			hashLen = gitindex.SHA256Len
		}
		_ = gitindex.Each(filepath.Join(gitDir, "index"), hashLen, func(e gitindex.Entry) bool {
			if e.Stage == 0 {
				ix.entries[string(e.Path)] = indexed{id: bytes.Clone(e.ID), size: e.Size}
			}
			return true
		})
		a.indexes[gitDir] = ix
	}
	e, tracked := ix.entries[rel]
	if !tracked || differsFromBlob(p, e.id, e.size, ix.sha256) {
		return true
	}
	// Staged or committed since the session started: the index (or a
	// commit) holds what the agent wrote, and is no witness for it.
	if a.started != nil {
		if id, size, found, known := a.started(p); known {
			switch {
			case !found:
				return true
			case len(id) == len(e.id):
				// The file is the index's blob (read above): the same id
				// is the same content, without reading the file again.
				return !bytes.Equal(id, e.id)
			}
			return size > int64(^uint32(0)) || differsFromBlob(p, id, uint32(size), len(id) == 32)
		}
	}
	return false
}

// goModulePath is the module path of the go.mod nearest dir (upwards) and
// the directory holding it.
func goModulePath(dir string) (module, root string) {
	for d := dir; ; d = filepath.Dir(d) {
		f, err := os.Open(filepath.Join(d, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return strings.Trim(strings.TrimSpace(m), `"`), d
				}
			}
			return "", d
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// goTestValue: a flag of go test (a build flag or a test flag) that takes
// its value in the next word.
func goTestValue(flag string) bool {
	switch flag {
	case "-run", "-bench", "-benchtime", "-count", "-cpu", "-parallel", "-timeout", "-skip", "-list", "-shuffle",
		"-fuzz", "-fuzztime", "-fuzzminimizetime", "-coverprofile", "-blockprofile", "-blockprofilerate", "-cpuprofile",
		"-memprofile", "-memprofilerate", "-mutexprofile", "-mutexprofilefraction", "-outputdir", "-trace", "-vet",
		"-buildvcs", "-json":
		return flag != "-json"
	}
	return goRunBuildFlag(flag)
}

// goTest reads go test's command line: the packages it tests (paths,
// patterns ending in /..., the module's import paths; the directory's own
// package when none is named), -C, and -exec/-toolexec (a program it runs
// the test binaries or the tools through). -n prints and runs nothing.
func (a *analyzer) goTest(args []arg, c *cmdCall) {
	dir, text := a.dirNow(), commandText("go", append([]arg{{val: "test", known: true}}, args...))
	var pkgs []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			a.unknown("go test "+w.val, "a word only the running shell knows")
			return
		}
		flag, val, glued := strings.Cut("-"+strings.TrimLeft(w.val, "-"), "=")
		switch {
		case w.val == "-args" || w.val == "--args":
			i = len(args)
		case w.val == "-n":
			return
		case strings.HasPrefix(w.val, "-") && goTestValue(flag):
			if !glued && i+1 < len(args) {
				i++
				val = args[i].val
			}
			switch flag {
			case "-C":
				if dir != "" {
					dir = filepath.Join(dir, val)
				}
			case "-exec", "-toolexec":
				a.walk.command(splitFields(val), c.d+1, stdio{}, nil)
			}
		case strings.HasPrefix(w.val, "-"):
		default:
			pkgs = append(pkgs, w.val)
		}
	}
	if dir == "" || !a.placed() || !a.goRunsTestsIn(dir, c.env) {
		return
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	a.testRun(goTests, goTestRoots(dir, pkgs), text)
}

// goRunsTestsIn: go test started in dir can run a package's tests. In
// module mode (go's default) it runs none outside a module or workspace,
// so there is nothing to read, and a directory such as /tmp is not walked.
// GOPATH mode (GO111MODULE set by the command, the environment or go env
// -w) runs local directories anywhere: read them.
func (a *analyzer) goRunsTestsIn(dir string, cmdEnv env) bool {
	if _, set := cmdEnv["GO111MODULE"]; set || a.goSetting("GO111MODULE") {
		return true
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, f := range [...]string{"go.mod", "go.work"} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				return true
			}
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// goSetting: go's setting key is set where the command runs, in the
// session's environment or in go's own settings file (go env -w; a file
// that cannot be read names nothing).
func (a *analyzer) goSetting(key string) bool {
	if v, _ := a.env(key); v != "" {
		return true
	}
	p, _ := a.env("GOENV")
	if p == "" {
		d, ok := a.configDir()
		if !ok {
			return false
		}
		p = filepath.Join(d, "go", "env")
	}
	if p == "off" {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && bytes.Contains(data, []byte(key+"="))
}

// goTestRoots are the directories of go test's packages.
func goTestRoots(dir string, pkgs []string) []testRoot {
	var roots []testRoot
	module, root := "", ""
	for _, p := range pkgs {
		recursive := p == "..." || p == "all" || strings.HasSuffix(p, "/...")
		p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
		switch {
		case p == "" || p == "all":
			if module == "" {
				module, root = goModulePath(dir)
			}
			if root != "" {
				roots = append(roots, testRoot{path: root, recursive: true})
			}
		case p == "." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == ".." || filepath.IsAbs(p):
			roots = append(roots, testRoot{path: filepath.Join(dir, p), recursive: recursive})
		default:
			if module == "" {
				module, root = goModulePath(dir)
			}
			if rel, ok := strings.CutPrefix(p, module); module != "" && ok && (rel == "" || rel[0] == '/') {
				roots = append(roots, testRoot{path: filepath.Join(root, rel), recursive: recursive})
			}
		}
	}
	return roots
}

// splitFields is a flag's value split as go splits -exec's: on blanks.
func splitFields(s string) []arg {
	var out []arg
	for _, f := range strings.Fields(s) {
		out = append(out, arg{val: f, known: true})
	}
	return out
}

// pytestValue: an option of pytest that takes its value in the next word.
func pytestValue(opt string) bool {
	switch opt {
	case "-k", "-m", "-p", "-c", "-o", "-W", "-n", "--rootdir", "--basetemp", "--confcutdir", "--ignore", "--ignore-glob",
		"--deselect", "--maxfail", "--tb", "-r", "--durations", "--junitxml", "--junit-xml", "--cov", "--cov-report",
		"--log-level", "--log-file", "--import-mode", "--capture", "--override-ini", "--pyargs", "--config-file":
		return true
	}
	return false
}

// pytestModel reads pytest's command line: the paths it collects tests
// from (FILE, DIR, FILE::NAME; the directory it runs in when none is
// named), with the conftest.py files above each, which pytest loads too.
// --collect-only, --co and --help run no test.
func (a *analyzer) pytestModel(c *cmdCall) bool {
	dir := a.dirNow()
	var paths []string
	for i := 0; i < len(c.args); i++ {
		w := c.args[i]
		opt, _, glued := strings.Cut(w.val, "=")
		switch {
		case !w.known:
			a.unknown(c.name+" "+w.val, "a word only the running shell knows")
			return true
		case w.val == "--collect-only" || w.val == "--co" || w.val == "--help" || w.val == "-h" || w.val == "--version":
			return true
		case strings.HasPrefix(w.val, "-") && pytestValue(opt):
			if !glued {
				i++
			}
		case strings.HasPrefix(w.val, "-"):
		default:
			p, _, _ := strings.Cut(w.val, "::")
			paths = append(paths, p)
		}
	}
	if dir == "" || !a.placed() {
		return true
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var roots []testRoot
	top := dir
	if _, rel, ok := repositoryOf(filepath.Join(dir, "x")); ok {
		top = filepath.Join(dir, filepath.FromSlash(strings.Repeat("../", strings.Count(rel, "/"))))
	}
	for _, p := range paths {
		p = filepath.Join(dir, p)
		roots = append(roots, testRoot{path: p, recursive: true})
		for d := filepath.Dir(p); strings.HasPrefix(d, top) && d != filepath.Dir(d); d = filepath.Dir(d) {
			roots = append(roots, testRoot{path: filepath.Join(d, "conftest.py")})
		}
	}
	a.testRun(pyTests, roots, commandText(c.name, c.args))
	return true
}
