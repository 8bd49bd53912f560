// Package testenv is how a test says that what it needs is not here: a
// program, a kernel feature, a server, or the reference material beside the
// project. Outside CI the test is skipped, loudly, and the skip is written
// down so that `make test` can end by listing what did not run; under CI,
// which installs everything the tests need, the same test fails instead,
// so nothing is hidden by a skip there.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/internal/text"
)

// SkipsEnv names the file a skip is appended to, one line each (the
// reason, the package and the test, tab-separated). scripts/skip-summary.sh
// sets it for make test and prints the file when the tests are done.
const SkipsEnv = "LASERKIT_TEST_SKIPS"

// SharedEnv names the folder of the reference material (seeds, the Python
// reference, upstream vectors) when it is not at ../shared beside the
// project's root: in a second worktree, say.
const SharedEnv = "LASERKIT_SHARED"

// CI reports whether the tests run under CI: the variable CI is set to
// anything but "", "0" or "false" (CI systems set "true", "1" or "yes").
func CI() bool {
	switch strings.ToLower(os.Getenv("CI")) {
	case "", "0", "false":
		return false
	}
	return true
}

// SkipOrFail ends t because what it needs is missing (why, one line that
// names it and, where it helps, how to get it): skipped and recorded, or
// failed under CI.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI=%s: CI must provide it)", why, os.Getenv("CI"))
	}
	Record(t.Name(), why)
	t.Skip("SKIPPED: " + why)
}

// SkipPartOrFail is SkipOrFail for one part of t (a case in a table): under
// CI t is marked failed and goes on; elsewhere the part's skip is logged
// and recorded. Either way the caller leaves that part out.
func SkipPartOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if CI() {
		t.Errorf("%s (CI=%s: CI must provide it)", why, os.Getenv("CI"))
		return
	}
	Record(t.Name(), why)
	t.Log("SKIPPED: " + why)
}

// Condition is a testscript condition that holds or not: ok as it is when
// it holds, else false (recorded, as a skip of the scripts that need it)
// or, under CI, an error that fails the scripts.
func Condition(ok bool, why string) (bool, error) {
	if ok {
		return true, nil
	}
	if CI() {
		return false, fmt.Errorf("CI=%s and %s", os.Getenv("CI"), why)
	}
	Record("testscript", why)
	return false, nil
}

// LookPath is the program name found on PATH; when it is not there the
// test is skipped or, under CI, fails.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, "%s is not on PATH", name)
	}
	return p
}

// Shared is the absolute path of rel in the reference material beside the
// project (SharedPath); when it is not there the test is skipped or, under
// CI, fails.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	p, err := SharedPath(rel)
	if err != nil {
		SkipOrFail(t, "%v", err)
	}
	return p
}

// SharedPath finds rel in the reference material: under $LASERKIT_SHARED
// when that is set, else in the shared folder beside the project's root
// (../shared), else beside the main checkout's root when the project is a
// git worktree of it.
func SharedPath(rel string) (string, error) {
	var tried []string
	for _, dir := range sharedDirs() {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	if len(tried) == 0 {
		return "", fmt.Errorf("the reference material's %s cannot be looked for: no go.mod above %s and %s unset", rel, wd(), SharedEnv)
	}
	return "", fmt.Errorf("the reference material's %s is not at %s (set %s to the shared folder)", rel, strings.Join(tried, " or "), SharedEnv)
}

func sharedDirs() []string {
	if d := os.Getenv(SharedEnv); d != "" {
		return []string{d}
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil
	}
	dirs := []string{filepath.Join(filepath.Dir(root), "shared")}
	if main, ok := mainCheckout(root); ok {
		dirs = append(dirs, filepath.Join(filepath.Dir(main), "shared"))
	}
	return dirs
}

// mainCheckout is the root of the checkout root is a linked worktree of:
// its .git is a file naming <main>/.git/worktrees/<name>.
func mainCheckout(root string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "", false
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	wts := filepath.Dir(filepath.Clean(gitdir))
	if filepath.Base(wts) != "worktrees" {
		return "", false
	}
	return filepath.Dir(filepath.Dir(wts)), true
}

// ModuleRoot is the folder of the go.mod at or above the working directory
// (a test runs in its package's folder).
func ModuleRoot() (string, error) {
	dir := wd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above " + wd())
		}
		dir = up
	}
}

func wd() string {
	d, err := os.Getwd()
	if err != nil {
		return "."
	}
	return d
}

var recordMu sync.Mutex

// Record appends a skip to the file $LASERKIT_TEST_SKIPS names, if any:
// the reason, this package (as ./path from the module's root) and the
// test, on one line. A record that cannot be written is said on stderr;
// it never fails the test.
func Record(test, why string) {
	file := os.Getenv(SkipsEnv)
	if file == "" {
		return
	}
	pkg := "."
	if root, err := ModuleRoot(); err == nil {
		if rel, err := filepath.Rel(root, wd()); err == nil && rel != "." {
			pkg = "./" + filepath.ToSlash(rel)
		}
	}
	line := clean(why) + "\t" + pkg + "\t" + clean(test) + "\n"
	recordMu.Lock()
	defer recordMu.Unlock()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		// One write of one line with O_APPEND: test binaries of several
		// packages write to the file at once, and lines do not mix.
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: the skip of %s was not recorded in %s: %v\n", test, file, err)
	}
}

// clean is s on one line with no tab, for one field of a record.
func clean(s string) string {
	return text.OneLine(strings.ReplaceAll(s, "\t", " "))
}

// Git runs real git in dir, as a test's oracle, with no system or user
// configuration and looking for a repository no higher than ceiling: its
// trimmed standard output, and whether it succeeded.
func Git(dir, ceiling string, args ...string) (string, bool) {
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+ceiling)
	out, err := c.Output()
	return strings.TrimSpace(string(out)), err == nil
}
