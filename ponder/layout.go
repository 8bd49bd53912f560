package ponder

import (
	"fmt"
	"path/filepath"
)

// The on-disk layout (spec ponder.md §3). Everything lives under
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
