package ponder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Session statuses.
const (
	StatusActive    = "active"
	StatusConverged = "converged"
	StatusStopped   = "stopped"
	StatusApplied   = "applied"
	StatusAborted   = "aborted"
)

// Phases of the current pass: what has happened in it so far.
const (
	PhaseReady       = "ready"       // opened: predict (pass ≥ 2), deliberate
	PhaseDeliberated = "deliberated" // deliberate done: delta*, judge
	PhaseJudged      = "judged"      // judged: judge again, decide, predict the next
	PhaseClosed      = "closed"      // the session is no longer active
)

// Defaults of start.
const (
	DefaultPassBudget      = 4
	DefaultConfidenceFloor = 0.5
	modeDeliberate         = "deliberate"
)

// Session is session.json.
type Session struct {
	Slug                 string  `json:"slug"`
	Subject              string  `json:"subject"`
	Lens                 *string `json:"lens"`
	Project              string  `json:"project"`
	PassBudget           int     `json:"passBudget"`
	Mode                 string  `json:"mode"`
	Status               string  `json:"status"`
	CreatedAt            string  `json:"createdAt"`
	CurrentPass          int     `json:"currentPass"`
	Phase                string  `json:"phase"`
	ConfidenceFloorValue float64 `json:"confidenceFloorValue"`
	ScanRoot             *string `json:"scanRoot"`
	// Ledger anchors the end of ledger.jsonl's hash chain: the records and
	// head after the last acknowledged append (null before the first).
	Ledger    *ledger.Anchor `json:"ledger"`
	History   []PassHistory  `json:"history"`
	OCA       SessionOCA     `json:"oca"`
	StoppedAt *string        `json:"stoppedAt"`
	AppliedAt *string        `json:"appliedAt"`
	AbortedAt *string        `json:"abortedAt"`
	// AbortedHalted is the reason of the halt in force when the session
	// was aborted; absent when it was not halted.
	AbortedHalted *string `json:"abortedHalted,omitempty"`
}

// PassHistory is one pass's line in session.json: opened by start or decide
// continue, filled in by deliberate, judge and decide.
type PassHistory struct {
	Pass       int     `json:"pass"`
	OverBudget bool    `json:"overBudget"`
	Skipped    bool    `json:"skipped"`
	Verdict    *string `json:"verdict"`
	Rule       *string `json:"rule"`
	JudgedAt   *string `json:"judgedAt"`
	Decision   *string `json:"decision"`
	DecidedAt  *string `json:"decidedAt"`
}

// SessionOCA is what the bridge carries between commands. Keys are pass
// numbers as strings.
type SessionOCA struct {
	SessionRef    *string                   `json:"sessionRef"`
	Deliberations map[string]int64          `json:"deliberations"`
	Hypotheses    map[string]HypothesisNote `json:"hypotheses"`
}

// HypothesisNote is what recordPass said about a pass's forecasts.
type HypothesisNote struct {
	HypothesisID       *int64  `json:"hypothesisId"`
	ClosedHypothesisID *int64  `json:"closedHypothesisId"`
	Lock               string  `json:"lock"`
	CloseNote          string  `json:"closeNote"`
	OpenNote           string  `json:"openNote"`
	ClosedStatus       *string `json:"closedStatus"`
}

func (s *Session) history(pass int) *PassHistory {
	for i := range s.History {
		if s.History[i].Pass == pass {
			return &s.History[i]
		}
	}
	s.History = append(s.History, PassHistory{Pass: pass})
	return &s.History[len(s.History)-1]
}

// Chain is what the session's ledger is checked against: its genesis (made
// from the slug and createdAt at start) and its anchor — before the first
// acknowledged append, an anchor of no records, so that nothing appended
// behind ponder's back is ever read.
func (s *Session) Chain() ledger.Chain {
	genesis := ledger.Genesis(s.Slug, s.CreatedAt)
	anchor := s.Ledger
	if anchor == nil {
		anchor = &ledger.Anchor{Records: 0, Head: genesis}
	}
	return ledger.Chain{Genesis: genesis, Anchor: anchor}
}

// describe is one line naming the session for a person: slug, subject,
// lens, and the shell line that selects it.
func (s *Session) describe() string {
	lens := ""
	if s.Lens != nil {
		lens = " (lens " + Printable(*s.Lens) + ")"
	}
	return fmt.Sprintf("%s: \"%s\"%s, pass %d — export %s=%s", s.Slug, Printable(s.Subject), lens, s.CurrentPass, SelectedByEnv, s.Slug)
}

// ocaSession is the session as the bridge names it.
func (s *Session) ocaSession() oca.Session {
	lens := ""
	if s.Lens != nil {
		lens = *s.Lens
	}
	return oca.Session{Slug: s.Slug, Subject: s.Subject, Lens: lens, Project: s.Project, Passes: s.PassBudget}
}

func readSession(dir string) (*Session, error) {
	data, err := os.ReadFile(filepath.Join(dir, sessionFile))
	if err != nil {
		return nil, err
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, sessionFile), err)
	}
	if s.OCA.Deliberations == nil {
		s.OCA.Deliberations = map[string]int64{}
	}
	if s.OCA.Hypotheses == nil {
		s.OCA.Hypotheses = map[string]HypothesisNote{}
	}
	if s.History == nil {
		s.History = []PassHistory{}
	}
	return &s, nil
}

func writeSession(dir string, s *Session) error {
	return writeJSON(filepath.Join(dir, sessionFile), s)
}

// writeJSON replaces path atomically (temp, fsync, rename) with v indented.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFile(path, append(data, '\n'), 0o644)
}

// writeJSONIfChanged is writeJSON that leaves path alone when it already
// holds exactly v — no write at all, so it succeeds on a full disk.
func writeJSONIfChanged(path string, v any) error {
	same, data, err := holdsJSON(path, v)
	if err != nil || same {
		return err
	}
	return fsx.WriteFile(path, data, 0o644)
}

// holdsJSON reports whether path holds exactly v as writeJSON renders it,
// and returns that rendering.
func holdsJSON(path string, v any) (bool, []byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return false, nil, err
	}
	data = append(data, '\n')
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data), data, nil
}

// readJSON reads path into v; ok is false when the file does not exist.
func readJSON(path string, v any) (ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// slugPart lowercases s and turns runs of anything outside [a-z0-9] into
// one '-', trimmed, at most 32 characters.
func slugPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	out := b.String()
	if len(out) > 32 {
		out = strings.TrimRight(out[:32], "-")
	}
	return out
}

// baseSlug is <lens>-<date>, or <subject>-<date> without a lens.
// A lens or subject with nothing usable in it falls back to "ponder".
func baseSlug(subject, lens, date string) string {
	part := slugPart(lens)
	if part == "" {
		part = slugPart(subject)
	}
	if part == "" {
		part = "ponder"
	}
	return part + "-" + date
}

// validSlug accepts what baseSlug and its -N suffixes produce, and nothing
// that could escape .ponder/ or break the bracketed slug in OCA content.
func validSlug(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// claimSlug creates the session directory under a fresh slug: base, then
// base-2, base-3, … Mkdir is the arbiter, so two concurrent starts never
// share a directory.
func (e *Engine) claimSlug(base string) (string, error) {
	if err := os.MkdirAll(e.stateDir(), 0o755); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		slug := base
		if n > 1 {
			slug = base + "-" + strconv.Itoa(n)
		}
		err := os.Mkdir(e.sessionDir(slug), 0o755)
		if err == nil {
			return slug, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
}

// currentSlug reads .ponder/current ("" when absent).
func (e *Engine) currentSlug() (string, error) {
	data, err := os.ReadFile(filepath.Join(e.stateDir(), currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

func (e *Engine) setCurrent(slug string) error {
	return fsx.WriteFile(filepath.Join(e.stateDir(), currentFile), []byte(slug+"\n"), 0o644)
}
