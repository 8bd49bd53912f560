package ponder

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/editdist"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/scan"
)

// allowedFields is the rule on a delta's keys and its unit counterpart: the keys
// each kind of record may carry. change may alter only severity and
// confidence; edit only text, recommendation and location (evidence).
var allowedFields = map[string][]string{
	ledger.UnitAdd:    {"type", "voice", "path", "kind", "reason"},
	ledger.UnitEdit:   {"type", "voice", "unitId", "path", "kind", "reason"},
	ledger.UnitDelete: {"type", "voice", "unitId", "phantom", "reason"},
	ledger.OpAdd:      {"type", "voice", "op", "unitId", "path", "severity", "confidence", "text", "recommendation", "evidence", "reason"},
	ledger.OpEdit:     {"type", "voice", "op", "findingId", "text", "recommendation", "evidence", "reason"},
	ledger.OpChange:   {"type", "voice", "op", "findingId", "severity", "confidence", "reason"},
	ledger.OpDelete:   {"type", "voice", "op", "findingId", "reason"},
}

// cleanUnitPath normalises a unit path given in stored form (ledger.
// EncodeName) and returns it in stored form; see cleanRawPath.
func cleanUnitPath(p string) (string, error) {
	raw, err := ledger.DecodeName(p)
	if err != nil {
		return "", err
	}
	c, err := cleanRawPath(raw)
	if err != nil {
		return "", err
	}
	return ledger.EncodeName(c), nil
}

// cleanRawPath normalises a file name as bytes and refuses one that is
// absolute or climbs out of the scan root.
func cleanRawPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("the path is empty")
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "/") || strings.HasPrefix(c, "../") || filepath.IsAbs(p) {
		return "", fmt.Errorf("path %s must be relative to the scan root and stay inside it", strconv.Quote(p))
	}
	return c, nil
}

// admit validates a batch against the state and the disk, applying each
// acceptable record to st as it goes (so later records see earlier ones).
// It returns the records to append, or every violation; on violations the
// state is half-applied and must be discarded.
func (st *State) admit(ds []ledger.Delta, pass int, diskRoot, scanRoot string) ([]ledger.Record, []ledger.Violation) {
	var (
		out      []ledger.Record
		viol     []ledger.Violation
		phantoms []int // indexes into ds of phantom deletes
	)
	for i := range ds {
		d := &ds[i]
		if d.Invalid {
			continue
		}
		bad := func(msg string) {
			viol = append(viol, ledger.Violation{Record: i + 1, Line: d.Line, Message: msg})
		}
		what := d.Type
		if d.Type == ledger.Finding {
			what = d.Op
		}
		if problems := shapeProblems(d, what); len(problems) > 0 {
			for _, p := range problems {
				bad(p)
			}
			continue
		}
		rec, problem := st.record(d, what, scanRoot)
		if problem != "" {
			bad(problem)
			continue
		}
		if rec.Phantom {
			phantoms = append(phantoms, i)
		}
		rec.Pass = pass
		st.apply(&rec)
		out = append(out, rec)
	}
	viol = append(viol, st.phantomProblems(ds, phantoms, diskRoot)...)
	sort.SliceStable(viol, func(a, b int) bool { return viol[a].Record < viol[b].Record })
	if len(viol) > 0 {
		return nil, viol
	}
	return out, nil
}

// shapeProblems are what is wrong with a delta before the state is asked:
// (1) the voice–operation bijection, (4) only the fields this kind of
// record (what) may touch.
func shapeProblems(d *ledger.Delta, what string) []string {
	var problems []string
	want := ledger.VoiceFor(d.Type, d.Op)
	switch {
	case d.Type == ledger.Finding && d.Voice != want:
		problems = append(problems, fmt.Sprintf("voice %s may not %s: %s belongs to the %s (the %s may only %s)", d.Voice, d.Op, d.Op, want, d.Voice, ledger.OpOf(d.Voice)))
	case d.Type != ledger.Finding && d.Voice != "" && d.Voice != want:
		problems = append(problems, fmt.Sprintf("voice %s may not write %s: it belongs to the %s (the %s may only %s)", d.Voice, d.Type, want, d.Voice, ledger.OpOf(d.Voice)))
	}
	allowed := allowedFields[what]
	var extra []string
	for _, f := range d.Fields {
		if !slices.Contains(allowed, f) {
			extra = append(extra, f)
		}
	}
	if len(extra) > 0 {
		problems = append(problems, fmt.Sprintf("%s may not carry %s (it may carry only %s)", what, strings.Join(extra, ", "), strings.Join(allowed, ", ")))
	}
	return problems
}

// record is the record a delta of kind what makes against the state, or
// the problem that refuses it: units and findings it names must exist and
// be live, and a path may be carried by one live unit only.
func (st *State) record(d *ledger.Delta, what, scanRoot string) (ledger.Record, string) {
	rec := ledger.Record{Type: d.Type, Voice: d.Voice, Reason: d.Reason}
	if d.Type == ledger.Finding {
		rec.Op = d.Op
	}
	switch what {
	case ledger.UnitAdd:
		p, err := cleanUnitPath(*d.Path)
		if err != nil {
			return rec, err.Error()
		}
		if u := st.livePaths[p]; u != nil {
			return rec, fmt.Sprintf("unit-add: path %s is already carried by live unit %s", p, u.ID)
		}
		rec.UnitID, rec.Path, rec.Kind = unitID(st.nextUnit), p, d.Kind
	case ledger.UnitEdit:
		u := st.units.get(d.UnitID)
		switch {
		case u == nil:
			return rec, fmt.Sprintf("unit-edit: unknown unit %s", d.UnitID)
		case u.Deleted:
			return rec, fmt.Sprintf("unit-edit: unit %s is deleted", d.UnitID)
		}
		rec.UnitID, rec.Kind = u.ID, d.Kind
		if d.Path != nil {
			p, err := cleanUnitPath(*d.Path)
			if err != nil {
				return rec, err.Error()
			}
			if o := st.livePaths[p]; o != nil && o != u {
				return rec, fmt.Sprintf("unit-edit: path %s is already carried by live unit %s", p, o.ID)
			}
			rec.Path = p
		}
	case ledger.UnitDelete:
		u := st.units.get(d.UnitID)
		phantom := d.Phantom != nil && *d.Phantom
		switch {
		case u == nil:
			return rec, fmt.Sprintf("unit-delete: unknown unit %s", d.UnitID)
		case u.Deleted && (u.Phantom || !phantom):
			return rec, fmt.Sprintf("unit-delete: unit %s is already deleted", d.UnitID)
		}
		rec.UnitID, rec.Phantom = u.ID, phantom
	case ledger.OpAdd:
		var u *Unit
		if d.UnitID != "" {
			u = st.units.get(d.UnitID)
			if u == nil {
				return rec, fmt.Sprintf("add names an unknown unit %s", d.UnitID)
			}
		}
		if d.Path != nil {
			p, err := cleanUnitPath(*d.Path)
			if err != nil {
				return rec, err.Error()
			}
			byPath := st.livePaths[p]
			switch {
			case byPath == nil && u == nil:
				return rec, fmt.Sprintf("add names an unknown unit: no live unit carries path %s%s", p, st.pathHint(p, scanRoot))
			case u != nil && byPath != u:
				return rec, fmt.Sprintf("add: unit %s does not carry path %s", u.ID, p)
			}
			u = byPath
		}
		if u == nil {
			return rec, "add names no unit (give unitId or path)"
		}
		if u.Deleted {
			return rec, fmt.Sprintf("add names unit %s, which is deleted", u.ID)
		}
		rec.FindingID, rec.UnitID = findingID(st.nextFind), u.ID
		rec.Severity, rec.Confidence, rec.Text = d.Severity, d.Confidence, d.Text
		rec.Recommendation, rec.Evidence = d.Recommendation, d.Evidence
	case ledger.OpEdit, ledger.OpChange, ledger.OpDelete:
		f := st.findings.get(d.FindingID)
		switch {
		case f == nil:
			return rec, fmt.Sprintf("%s targets unknown finding %s", d.Op, d.FindingID)
		case !f.Live:
			return rec, fmt.Sprintf("%s targets finding %s, which is not live (it was deleted)", d.Op, d.FindingID)
		}
		rec.FindingID, rec.UnitID = f.ID, f.UnitID
		rec.Text, rec.Recommendation, rec.Evidence = d.Text, d.Recommendation, d.Evidence
		rec.Severity, rec.Confidence = d.Severity, d.Confidence
	}
	return rec, ""
}

// phantomProblems verifies the batch's phantom deletes, over every path
// the unit ever carried (including edits earlier in this batch): none may
// be on disk, and none may be a file git knows — a phantom is a unit that
// never existed, and a file in the last commit or the index did (renamed
// or deleted since: neither is a phantom).
func (st *State) phantomProblems(ds []ledger.Delta, phantoms []int, diskRoot string) []ledger.Violation {
	var viol []ledger.Violation
	for _, i := range phantoms {
		u := st.units.get(ds[i].UnitID)
		if present := u.PathsOnDisk(diskRoot); len(present) > 0 {
			viol = append(viol, ledger.Violation{Record: i + 1, Line: ds[i].Line, Message: fmt.Sprintf(
				"phantom delete of %s rejected: it carried %d path(s) and %s still exist(s) on disk (checked with lstat under %s)",
				u.ID, len(uniq(u.Paths)), strings.Join(present, ", "), diskRoot)})
			continue
		}
		if msg := st.knownToGit(u, diskRoot); msg != "" {
			viol = append(viol, ledger.Violation{Record: i + 1, Line: ds[i].Line, Message: "phantom delete of " + u.ID + " rejected: " + msg})
		}
	}
	return viol
}

func uniq(list []string) []string {
	seen := make(map[string]bool, len(list))
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// pathHint says what an unknown unit path may have meant. Unit paths are
// relative to the scan root, so a path written from the project (src/f3.go
// after units --scan src) is the commonest slip: the hint says so and names
// the live unit nearest to it — one whose path the given one ends with, else
// the closest by edit distance, if any is close.
func (st *State) pathHint(p, scanRoot string) string {
	where := "relative to the scan root"
	if scanRoot != "" && scanRoot != "." {
		where += " (" + scanRoot + ")"
	}
	var best *Unit
	bestLen, bestDist := 0, len(p)/3+2
	for path, u := range st.livePaths {
		switch {
		case strings.HasSuffix(p, "/"+path):
			if len(path) > bestLen || len(path) == bestLen && best != nil && path < best.Path() {
				best, bestLen = u, len(path)
			}
		case bestLen == 0:
			// The limit is one past bestDist, so a d equal to bestDist is a
			// true tie, not a capped farther path winning on name order.
			if d := editdist.Within(p, path, bestDist+1); d < bestDist || d == bestDist && best != nil && path < best.Path() {
				best, bestDist = u, d
			}
		}
	}
	if best == nil {
		return " (unit paths are " + where + "; ponder units --list shows them)"
	}
	return fmt.Sprintf(" (unit paths are %s; the nearest live unit is %s, %s)", where, best.Path(), best.ID)
}

// knownToGit says why u is no phantom when git knows one of its paths (in
// the last commit or the index), naming the file it was renamed to when a
// file in scope that no unit carries has the same content; "" when git
// knows none (or there is no work tree to ask).
func (st *State) knownToGit(u *Unit, diskRoot string) string {
	paths := uniq(u.Paths)
	raw := make([]string, len(paths))
	for i, p := range paths {
		if r, err := ledger.DecodeName(p); err == nil {
			raw[i] = r
		} else {
			raw[i] = p
		}
	}
	known, ok := scan.Known(diskRoot, raw)
	if !ok {
		return ""
	}
	for i, r := range raw {
		blob, found := known[r]
		if !found {
			continue
		}
		where := "in HEAD"
		if blob == "" {
			where = "in the index"
		}
		msg := fmt.Sprintf("%s is not on disk, but git knows it (%s): it existed, so it is no phantom", paths[i], where)
		if to := st.renamedTo(diskRoot, blob); to != "" {
			return msg + fmt.Sprintf("; it was renamed to %s (same content): give %s its new path (a unit-edit)", to, u.ID)
		}
		return msg + fmt.Sprintf(": if it was renamed, give %s its new path (a unit-edit); if it was deleted, delete %s without phantom (it stays counted until graded)", u.ID, u.ID)
	}
	return ""
}

// renamedTo is the file in scope that no unit carries whose content is
// blob (a git blob id), in stored form; "" when none is.
func (st *State) renamedTo(diskRoot, blob string) string {
	if blob == "" {
		return ""
	}
	res, err := scan.Dir(diskRoot, nil)
	if err != nil {
		return ""
	}
	var raw []string
	for _, p := range st.Uncovered(res.Paths) {
		if r, err := ledger.DecodeName(p); err == nil {
			raw = append(raw, r)
		}
		if len(raw) == maxRenameCandidates {
			break
		}
	}
	hashes := scan.Hashes(diskRoot, raw)
	for _, r := range raw {
		if hashes[r] == blob {
			return ledger.EncodeName(r)
		}
	}
	return ""
}

// maxRenameCandidates bounds the files hashed looking for a rename.
const maxRenameCandidates = 256
