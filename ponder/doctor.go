package ponder

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	if _, err := exec.LookPath("git"); err != nil {
		res.add("git", false, "git not found: units --scan will walk the directory instead of git ls-files")
	} else {
		res.add("git", false, "git found: units --scan uses git ls-files inside a work tree")
	}
	slugs, err := e.doctorSlugs(res, slug)
	if err != nil {
		return nil, err
	}
	for _, sl := range slugs {
		e.doctorSession(res, sl)
	}
	e.doctorOCA(res, getenv)
	res.OK = res.Problems == 0
	if !res.OK {
		return res, &Error{Kind: KindProblems, Message: fmt.Sprintf("doctor found %d problem(s)", res.Problems), Details: []string{}}
	}
	return res, nil
}

// add records one check, counting a problem.
func (res *DoctorResult) add(name string, problem bool, format string, a ...any) {
	res.Checks = append(res.Checks, Check{Name: name, OK: !problem, Problem: problem, Detail: fmt.Sprintf(format, a...)})
	if problem {
		res.Problems++
	}
}

// doctorSlugs are the sessions to check: the one named, else every one
// (checking .ponder/current on the way).
func (e *Engine) doctorSlugs(res *DoctorResult, slug string) ([]string, error) {
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
			res.add("current", true, "%v", err)
		case cur == "":
			res.add("current", false, "no current session (.ponder/current absent)")
		default:
			if _, rerr := e.resolve(cur); rerr != nil {
				res.add("current", true, ".ponder/current names %q, which is not a session: %v", cur, rerr)
			} else {
				res.add("current", false, "current session %s", cur)
			}
		}
		entries, err := os.ReadDir(e.stateDir())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			res.add("sessions", true, "%v", err)
		}
		for _, ent := range entries {
			if ent.IsDir() {
				slugs = append(slugs, ent.Name())
			}
		}
	}
	return slugs, nil
}

// doctorSession checks one session's files: session.json, the ledger and
// its chain, each pass's judge.json against the ledger, and units.json.
func (e *Engine) doctorSession(res *DoctorResult, sl string) {
	dir := e.sessionDir(sl)
	s, err := readSession(dir)
	if err != nil {
		res.add("session "+sl, true, "session.json unreadable: %v", err)
		return
	}
	// Each pass's judge.json is checked against the ledger at the
	// prefix it measured, in the same read.
	h := &handle{e: e, slug: sl, dir: dir, s: s}
	js, jerr := h.storedJudgements(s.CurrentPass)
	if jerr != nil {
		res.add("judge "+sl, true, "%v", jerr)
	}
	marks, heads := judgementMarks(js, s.ConfidenceFloorValue)
	st := newState()
	snaps := &snapshots{st: st}
	for _, p := range slices.Sorted(maps.Keys(marks)) {
		snaps.marks = append(snaps.marks, marks[p])
	}
	chain := s.Chain()
	chain.Heads = heads
	l, err := ledger.Read(filepath.Join(dir, ledgerFile), chain, snaps.apply)
	switch {
	case err != nil:
		res.add("session "+sl, true, "ledger unreadable: %v", err)
	case l.Damage != nil:
		res.add("session "+sl, true, "%v", l.Damage)
	default:
		snaps.finish()
		res.add("session "+sl, false, "session.json and ledger.jsonl (%d records, hash chain intact) are sound", l.Count)
		voices := map[int]*Voices{}
		for p := range js {
			if v, err := h.storedVoices(p); err == nil {
				voices[p] = v
			}
		}
		problems := verifyJudgements(js, l, marks, voices)
		for _, p := range slices.Sorted(maps.Keys(problems)) {
			res.add("judge "+sl, true, "%s", problems[p])
		}
		// units.json is a view of the ledger; a write that failed after
		// the ledger's commit can leave it behind.
		if st.Seeded {
			if same, _, err := holdsJSON(filepath.Join(dir, unitsFile), unitsView(st)); err == nil && !same {
				res.add("units "+sl, true, "units.json does not match the ledger (a write failed after a commit?): `ponder repair --slug %s` rebuilds it", sl)
			}
		}
	}
}

// doctorOCA checks the OCA mode asked for and, unless it is off, that OCA
// can be used.
func (e *Engine) doctorOCA(res *DoctorResult, getenv func(string) string) {
	raw := getenv("PONDER_OCA")
	mode, known := oca.ParseMode(raw)
	if !known {
		res.add("oca mode", true, "PONDER_OCA=%q is not auto, on or off: every other command refuses it (exit 2); doctor probes as under auto", raw)
	} else {
		res.add("oca mode", false, "PONDER_OCA=%s", mode)
	}
	if p := getenv("PONDER_PSQL"); p != "" {
		res.add("psql", false, "PONDER_PSQL=%s is accepted and ignored: this build talks to PostgreSQL through pgx", p)
	}
	if mode == oca.ModeOff {
		res.add("oca", false, "disabled (PONDER_OCA=off): no connection attempted")
	} else {
		res.OCA = e.Bridge.Probe()
		if res.OCA.Reachable {
			res.add("oca", false, "reachable at %s (%dms)", res.OCA.DSN, res.OCA.MS)
		} else {
			detail := res.OCA.Note
			if len(res.OCA.Missing) > 0 && !strings.Contains(detail, "missing") {
				detail += "; missing " + strings.Join(res.OCA.Missing, ", ")
			}
			res.add("oca", true, "unusable at %s: %s", res.OCA.DSN, detail)
		}
	}
}

// RepairResult is what repair reports.
type RepairResult struct {
	Slug           string  `json:"slug"`
	Repaired       bool    `json:"repaired"`
	MovedTo        *string `json:"movedTo"`
	RemovedBytes   int64   `json:"removedBytes"`
	RemovedRecords int     `json:"removedRecords"`
	Records        int     `json:"records"`
	// TailBase64 carries the cut bytes when they could not be kept in a
	// file (a full disk); null otherwise.
	TailBase64 *string  `json:"tailBase64"`
	Warnings   []string `json:"warnings"`
}

// Repair recovers from a torn ledger tail (an append interrupted by a
// crash, past the last acknowledged append): the ledger is cut back in
// place to its last whole batch — no copy, so it works on a full disk —
// and the cut bytes are then kept in ledger.torn-<time>.jsonl (or, if even
// that cannot be written, returned in the result). The hash chain of what
// remains is whole, since only an unacknowledged batch goes. units.json is
// rebuilt when it differs from the ledger. Corrupt and forged ledgers are
// refused.
func (e *Engine) Repair(slug string) (*RepairResult, error) {
	h, err := e.open(slug, access{cmd: "repair", evenDamaged: true})
	if err != nil {
		return nil, err
	}
	defer h.release()
	res := &RepairResult{Slug: h.slug, Warnings: []string{}}
	torn := filepath.Join(h.dir, "ledger.torn-"+e.now().Format("20060102T150405.000Z")+".jsonl")
	r, err := ledger.Repair(h.ledgerPath(), torn, h.s.Chain())
	var dmg *ledger.Damage
	switch {
	case errors.As(err, &dmg):
		return nil, stateErr(nil, "repair refused for session %s: %v", h.slug, dmg)
	case errors.Is(err, os.ErrNotExist):
		// No ledger yet: nothing to repair.
	case err != nil:
		return nil, err
	}
	if r != nil {
		res.Repaired, res.RemovedBytes, res.RemovedRecords = true, r.RemovedBytes, r.RemovedRecords
		if r.MovedTo != "" {
			res.MovedTo = &r.MovedTo
		} else {
			tail := base64.StdEncoding.EncodeToString(r.Tail)
			res.TailBase64 = &tail
			res.Warnings = append(res.Warnings, fmt.Sprintf("the ledger is repaired, but its cut %d bytes could not be kept in %s (%v): they are in tailBase64", len(r.Tail), torn, r.SaveError))
		}
	}
	st, _, err := h.state()
	if err != nil {
		return nil, err
	}
	if st.Seeded {
		if err := h.writeUnits(st); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("units.json could not be rebuilt: %v", err))
		}
	}
	for _, w := range res.Warnings {
		e.Warn(w)
	}
	res.Records = st.Records
	return res, nil
}
