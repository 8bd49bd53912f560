package ponder

import (
	"fmt"
	"os"
	"path/filepath"
)

// The on-disk layout (SPEC.md §4). Everything lives under
// <root>/.ponder/; each session in its own directory named by its slug.
const (
	stateDirName     = ".ponder"
	currentFile      = "current"
	sessionFile      = "session.json"
	unitsFile        = "units.json"
	ledgerFile       = "ledger.jsonl"
	observationsFile = "observations.jsonl"
	applyPlanFile    = "apply-plan.md"
	lockFile         = ".lock"
	passesDir        = "passes"
	deliberationFile = "deliberation.json"
	predictFile      = "predict.json"
	judgeFile        = "judge.json"
)

func (e *Engine) stateDir() string              { return filepath.Join(e.Root, stateDirName) }
func (e *Engine) sessionDir(slug string) string { return filepath.Join(e.stateDir(), slug) }

// passDir is passes/NN, NN the pass number with at least two digits.
func passDir(dir string, pass int) string {
	return filepath.Join(dir, passesDir, fmt.Sprintf("%02d", pass))
}

// FindRoot is the project directory for a command run in dir: the nearest
// of dir and its parents that holds ponder's state (a .ponder directory
// with a current file or a session in it), as git finds .git; dir itself
// when there is none, so that start creates .ponder there. The search does
// not leave a git work tree: a .ponder above the repository (in $HOME, say)
// belongs to another project.
func FindRoot(dir string) string {
	for d := dir; ; {
		if isStateDir(filepath.Join(d, stateDirName)) {
			return d
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return dir // the work tree's top: no state within it
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// isStateDir reports whether dir looks like ponder's .ponder: it has a
// current file or a session directory. A stray .ponder (another tool's,
// or an empty one) is passed over.
func isStateDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, currentFile)); err == nil {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), sessionFile)); err == nil {
				return true
			}
		}
	}
	return false
}
