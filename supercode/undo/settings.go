package undo

import (
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/operator"
)

// EnvOff names the variable that turns the hooks' checkpoints off
// (LASERBRAIN_UNDO=off): for a work tree too large to snapshot, say.
const EnvOff = "LASERBRAIN_UNDO"

// Off reports whether the environment turns checkpoints off.
func Off(getenv func(string) string) bool {
	return strings.EqualFold(strings.TrimSpace(getenv(EnvOff)), "off")
}

// Defaults of the project policy's undo settings.
const (
	DefaultLossFiles = 20
	DefaultLossBytes = 1 << 20
	DefaultKeepRuns  = 20
	DefaultKeepDays  = 30
)

// Settings are the project policy's undo settings, our defaults where it
// sets none.
type Settings struct {
	Include   []string
	LossFiles int
	LossBytes int64
	KeepRuns  int
	KeepDays  int
}

// SettingsOf reads the policy's settings.
func SettingsOf(u operator.UndoSettings) Settings {
	s := Settings{Include: u.Include, LossFiles: DefaultLossFiles, LossBytes: DefaultLossBytes,
		KeepRuns: DefaultKeepRuns, KeepDays: DefaultKeepDays}
	if u.LossFiles != nil {
		s.LossFiles = *u.LossFiles
	}
	if u.LossBytes != nil {
		s.LossBytes = *u.LossBytes
	}
	if u.KeepRuns != nil {
		s.KeepRuns = *u.KeepRuns
	}
	if u.KeepDays != nil {
		s.KeepDays = *u.KeepDays
	}
	return s
}

// Loss says whether a change deleted or overwrote more files, or more
// bytes, than the settings let go unreported, and what it lost.
func (s Settings) Loss(c Change) (string, bool) {
	n := c.Lost()
	if n == 0 || (n <= s.LossFiles && c.LostBytes <= s.LossBytes) {
		return "", false
	}
	limit := fmt.Sprintf("more than undo.loss_files %d", s.LossFiles)
	if n <= s.LossFiles {
		limit = fmt.Sprintf("more than undo.loss_bytes %d", s.LossBytes)
	}
	return fmt.Sprintf("deleted or overwrote %d files (%s), %s", n, SizeText(c.LostBytes), limit), true
}
