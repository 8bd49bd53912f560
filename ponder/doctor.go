package ponder

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Check is one line of doctor.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Problem bool   `json:"problem"`
	Detail  string `json:"detail"`
}

// DoctorResult is what doctor reports.
type DoctorResult struct {
	OK       bool       `json:"ok"`
	Problems int        `json:"problems"`
	Checks   []Check    `json:"checks"`
	OCA      *oca.Probe `json:"oca"`
}

// Doctor checks the environment and the sessions' files; it changes
// nothing. Any problem makes it exit 1.
func (e *Engine) Doctor(slug string, getenv func(string) string) (*DoctorResult, error) {
	res := &DoctorResult{Checks: []Check{}}
	add := func(name string, problem bool, format string, a ...any) {
		res.Checks = append(res.Checks, Check{Name: name, OK: !problem, Problem: problem, Detail: fmt.Sprintf(format, a...)})
		if problem {
			res.Problems++
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		add("git", false, "git not found: units --scan will walk the directory instead of git ls-files")
	} else {
		add("git", false, "git found: units --scan uses git ls-files inside a work tree")
	}

	// Sessions.
	var slugs []string
	if slug != "" {
		s, err := e.resolve(slug)
		if err != nil {
			return nil, err
		}
		slugs = []string{s}
	} else {
		cur, err := e.currentSlug()
		switch {
		case err != nil:
			add("current", true, "%v", err)
		case cur == "":
			add("current", false, "no current session (.ponder/current absent)")
		default:
			if _, rerr := e.resolve(cur); rerr != nil {
				add("current", true, ".ponder/current names %q, which is not a session: %v", cur, rerr)
			} else {
				add("current", false, "current session %s", cur)
			}
		}
		entries, err := os.ReadDir(e.stateDir())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			add("sessions", true, "%v", err)
		}
		for _, ent := range entries {
			if ent.IsDir() {
				slugs = append(slugs, ent.Name())
			}
		}
	}
	for _, sl := range slugs {
		dir := e.sessionDir(sl)
		if _, err := readSession(dir); err != nil {
			add("session "+sl, true, "session.json unreadable: %v", err)
			continue
		}
		l, err := ledger.Read(filepath.Join(dir, ledgerFile), nil)
		switch {
		case err != nil:
			add("session "+sl, true, "ledger unreadable: %v", err)
		case l.Damage != nil:
			add("session "+sl, true, "%v", l.Damage)
		default:
			add("session "+sl, false, "session.json and ledger.jsonl (%d records) are sound", l.Count)
		}
	}

	// OCA.
	raw := getenv("PONDER_OCA")
	mode, known := oca.ParseMode(raw)
	if !known {
		add("oca mode", true, "PONDER_OCA=%q is not auto, on or off (treated as auto)", raw)
	} else {
		add("oca mode", false, "PONDER_OCA=%s", mode)
	}
	if p := getenv("PONDER_PSQL"); p != "" {
		add("psql", false, "PONDER_PSQL=%s is accepted and ignored: this build talks to PostgreSQL through pgx", p)
	}
	if mode == oca.ModeOff {
		add("oca", false, "disabled (PONDER_OCA=off): no connection attempted")
	} else {
		res.OCA = e.Bridge.Probe()
		if res.OCA.Reachable {
			add("oca", false, "reachable at %s (%dms)", res.OCA.DSN, res.OCA.MS)
		} else {
			detail := res.OCA.Note
			if len(res.OCA.Missing) > 0 && !strings.Contains(detail, "missing") {
				detail += "; missing " + strings.Join(res.OCA.Missing, ", ")
			}
			add("oca", true, "unusable at %s: %s", res.OCA.DSN, detail)
		}
	}
	res.OK = res.Problems == 0
	if !res.OK {
		return res, &Error{Code: ExitUsage, Kind: "problems", Message: fmt.Sprintf("doctor found %d problem(s)", res.Problems), Details: []string{}}
	}
	return res, nil
}

// RepairResult is what repair reports.
type RepairResult struct {
	Slug           string  `json:"slug"`
	Repaired       bool    `json:"repaired"`
	MovedTo        *string `json:"movedTo"`
	RemovedBytes   int64   `json:"removedBytes"`
	RemovedRecords int     `json:"removedRecords"`
	Records        int     `json:"records"`
}

// Repair recovers from a torn ledger tail (an append interrupted by a
// crash): the unfinished batch is moved, byte for byte, to
// ledger.torn-<time>.jsonl and the ledger is cut back to its last whole
// batch; units.json is rebuilt. Corrupt ledgers are refused.
func (e *Engine) Repair(slug string) (*RepairResult, error) {
	h, err := e.open(slug, true)
	if err != nil {
		return nil, err
	}
	defer h.release()
	res := &RepairResult{Slug: h.slug}
	torn := filepath.Join(h.dir, "ledger.torn-"+e.now().Format("20060102T150405.000Z")+".jsonl")
	r, err := ledger.Repair(h.ledgerPath(), torn)
	var dmg *ledger.Damage
	switch {
	case errors.As(err, &dmg):
		return nil, stateErr(nil, "repair refused for session %s: %v", h.slug, dmg)
	case errors.Is(err, os.ErrNotExist):
		// No ledger yet: nothing to repair.
	case err != nil:
		return nil, err
	}
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	if r != nil {
		res.Repaired, res.MovedTo, res.RemovedBytes, res.RemovedRecords = true, &r.MovedTo, r.RemovedBytes, r.RemovedRecords
		if st.Seeded {
			if err := h.writeUnits(st); err != nil {
				return nil, err
			}
		}
	}
	res.Records = st.Records
	return res, nil
}
