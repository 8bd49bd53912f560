package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/scan"
)

// UnitsOptions are units' arguments: --scan <dir>, --from FILE|- (its bytes
// in From), --strict-scope.
type UnitsOptions struct {
	Scan        string
	From        []byte
	FromName    string // for messages; "" when there is no --from
	StrictScope bool
}

// UnitsResult is what units reports.
type UnitsResult struct {
	Slug     string  `json:"slug"`
	Source   string  `json:"source"` // scan | list
	From     *string `json:"from"`   // the list's name (a file, "-", or the agent's units.json); null for a scan
	ScanRoot *string `json:"scanRoot"`
	Method   *string `json:"method"`  // git | walk; null without a scan
	Scanned  *int    `json:"scanned"` // files the scan found; null without a scan
	Units    int     `json:"units"`
	// Missing are the files on disk under the scan root that the list
	// omits (stored names); --strict-scope refuses the list instead.
	Missing []string `json:"missing"`
}

// listedUnit is one entry of an agent's list: a name in stored form.
type listedUnit struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// parseUnitList reads an agent's unit list: a JSON array of paths or of
// {path, kind}, or {"units": [...]} (a units.json), with names in stored
// form (ledger.EncodeName); or plain text with one file name per line, as
// bytes. A UTF-8 byte order mark is accepted.
func parseUnitList(data []byte) ([]listedUnit, error) {
	data = trimBOM(data)
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("the list is empty")
	}
	var raw []json.RawMessage
	switch t[0] {
	case '{', '[':
		if !utf8.Valid(t) {
			return nil, fmt.Errorf(`a JSON list must be UTF-8: write a name that is not UTF-8 in ponder's quoted form ("\"caf\\xe9.go\""), or give a plain list, one name a line`)
		}
	}
	switch t[0] {
	case '{':
		var doc struct {
			Units []json.RawMessage `json:"units"`
		}
		if err := json.Unmarshal(t, &doc); err != nil {
			return nil, err
		}
		raw = doc.Units
	case '[':
		if err := json.Unmarshal(t, &raw); err != nil {
			return nil, err
		}
	default:
		var out []listedUnit
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
				out = append(out, listedUnit{Path: ledger.EncodeName(l)})
			}
		}
		return out, nil
	}
	out := make([]listedUnit, 0, len(raw))
	for i, r := range raw {
		var u listedUnit
		var p string
		if err := json.Unmarshal(r, &p); err == nil {
			u.Path = p
		} else if err := json.Unmarshal(r, &u); err != nil {
			return nil, fmt.Errorf("entry %d: want a path or {\"path\", \"kind\"}: %v", i+1, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// trimBOM drops a leading UTF-8 byte order mark.
func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) }

// Units seeds the session's inventory, once. The scope is what is on disk
// under --scan (a "disk-anchored" gate); the agent's own list comes from
// --from or from a units.json the agent wrote
// into the unseeded session. With a list and a scan the files the list
// omits are reported, and --strict-scope refuses the list instead.
func (e *Engine) Units(slug string, o UnitsOptions) (*UnitsResult, error) {
	if o.Scan == "" && o.FromName == "" {
		return nil, usageErr("units needs --scan <dir> or --from FILE|- to seed the inventory; ponder units --list prints it")
	}
	if o.StrictScope && o.Scan == "" {
		return nil, usageErr("--strict-scope checks the inventory against the files on disk under --scan <dir>: give --scan")
	}
	var listed []listedUnit
	if o.FromName != "" {
		var err error
		if listed, err = parseUnitList(o.From); err != nil {
			return nil, usageErr("--from %s: %v", o.FromName, err)
		}
	}
	h, st, l, err := e.write(slug, "units")
	if err != nil {
		return nil, err
	}
	defer h.release()
	if st.Seeded {
		return nil, stateErr(nil, "units refused: session %s is already seeded with %d unit(s); change the inventory with unit-add, unit-edit and unit-delete deltas", h.slug, len(st.Units))
	}
	fromName := o.FromName
	if fromName == "" {
		if listed, fromName, err = h.agentUnitList(); err != nil {
			return nil, err
		}
	}
	res := &UnitsResult{Slug: h.slug, Missing: []string{}}
	scanned, err := e.scanScope(h, o.Scan, res)
	if err != nil {
		return nil, err
	}
	recs, err := e.seedRecords(res, o, fromName, listed, scanned)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, stateErr(nil, "units refused: nothing to seed (the scope is empty)")
	}
	// scanRoot first: a failure before the append leaves an unseeded
	// session that a second units simply re-scans.
	if err := h.save(); err != nil {
		return nil, err
	}
	if err := h.appendBatch(l, recs); err != nil {
		return nil, err
	}
	for i := range recs {
		st.apply(&recs[i])
	}
	res.Units = len(recs)
	if err := h.writeUnits(st); err != nil {
		return res, viewErr(err)
	}
	return res, nil
}

// agentUnitList is the units.json the agent wrote into the unseeded
// session, which `units --scan <dir> [--strict-scope]` checks against the
// disk (an unseeded session has no units.json of ponder's making): its
// entries and its path, or none.
func (h *handle) agentUnitList() ([]listedUnit, string, error) {
	agentList := filepath.Join(h.dir, unitsFile)
	data, err := readFileIfExists(agentList)
	if err != nil || data == nil {
		return nil, "", err
	}
	listed, err := parseUnitList(data)
	if err != nil {
		return nil, "", usageErr("%s (the agent's own list): %v", agentList, err)
	}
	return listed, agentList, nil
}

// scanScope scans the files under dir (none when dir is ""), the scope
// the inventory is checked against, noting it on res and the session.
func (e *Engine) scanScope(h *handle, dir string, res *UnitsResult) (*scan.Result, error) {
	if dir == "" {
		return nil, nil
	}
	root := filepath.ToSlash(filepath.Clean(dir))
	res.ScanRoot = &root
	h.s.ScanRoot = &root
	var prog Progress
	if e.Progress != nil {
		prog = e.Progress("scanning " + root)
	}
	var update func(int)
	if prog != nil {
		update = prog.Update
	}
	scanned, err := scan.Dir(h.diskRoot(), update)
	if err != nil {
		return nil, stateErr(nil, "units --scan %s: %v", dir, err)
	}
	if prog != nil {
		prog.Done(len(scanned.Paths))
	}
	n := len(scanned.Paths)
	res.Method, res.Scanned = &scanned.Method, &n
	return scanned, nil
}

// seedRecords are the units to seed: the list's (checked against the
// scan, which --strict-scope holds it to), else the scan's files.
func (e *Engine) seedRecords(res *UnitsResult, o UnitsOptions, fromName string, listed []listedUnit, scanned *scan.Result) ([]ledger.Record, error) {
	var recs []ledger.Record
	seen := map[string]bool{}
	add := func(p, kind string) {
		if kind == "" {
			kind = "file"
		}
		seen[p] = true
		recs = append(recs, ledger.Record{Type: ledger.UnitSeed, UnitID: unitID(len(recs) + 1), Path: p, Kind: kind})
	}
	if fromName != "" {
		res.Source, res.From = "list", &fromName
		var bad []string
		for i, u := range listed {
			p, err := cleanUnitPath(u.Path)
			switch {
			case err != nil:
				bad = append(bad, fmt.Sprintf("entry %d: %v", i+1, err))
			case seen[p]:
				bad = append(bad, fmt.Sprintf("entry %d: %s is listed twice", i+1, p))
			default:
				add(p, u.Kind)
			}
		}
		if len(bad) > 0 {
			return nil, &Error{Kind: KindUsage, Message: fromName + " is not a usable unit list", Details: bad}
		}
		if scanned != nil {
			for _, p := range scanned.Paths {
				if name := ledger.EncodeName(p); !seen[name] {
					res.Missing = append(res.Missing, name)
				}
			}
		}
		if o.StrictScope && len(res.Missing) > 0 {
			return nil, stateErr(res.Missing, "--strict-scope: the list omits %d file(s) on disk under %s; nothing was seeded", len(res.Missing), o.Scan)
		}
		if len(res.Missing) > 0 {
			e.Warn(fmt.Sprintf("the list omits %d file(s) on disk under %s (listed in \"missing\"); --strict-scope would refuse it", len(res.Missing), o.Scan))
		}
	} else {
		res.Source = "scan"
		for _, p := range scanned.Paths {
			add(ledger.EncodeName(p), "file")
		}
	}
	return recs, nil
}

// UnitEntry is one unit in units --list.
type UnitEntry struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"` // current path, stored form
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind"`
	Graded  bool     `json:"graded"`
	Grade   *string  `json:"grade"`
	Deleted bool     `json:"deleted"`
	Phantom bool     `json:"phantom"`
	Counted bool     `json:"counted"`
}

// UnitListResult is what units --list reports.
type UnitListResult struct {
	Slug     string      `json:"slug"`
	ScanRoot *string     `json:"scanRoot"`
	Grading  Grading     `json:"coverage"`
	Units    []UnitEntry `json:"units"`
}

// UnitList lists the inventory — the way from a unit id to its path and
// back — without changing anything.
func (e *Engine) UnitList(slug string) (*UnitListResult, error) {
	h, st, err := e.read(slug)
	if err != nil {
		return nil, err
	}
	res := &UnitListResult{Slug: h.slug, ScanRoot: h.s.ScanRoot, Grading: gradingOf(st), Units: make([]UnitEntry, 0, len(st.Units))}
	for _, u := range st.Units {
		res.Units = append(res.Units, UnitEntry{ID: u.ID, Path: u.Path(), Paths: uniq(u.Paths), Kind: u.Kind, Graded: u.Graded,
			Grade: u.Grade, Deleted: u.Deleted, Phantom: u.Phantom, Counted: u.Counted()})
	}
	return res, nil
}

// scope is what is on disk in the session's scope now: the files under
// its scan root (nil for a session seeded without a scan: its scope is its
// list).
func (h *handle) scope() ([]string, error) {
	if h.s.ScanRoot == nil {
		return nil, nil
	}
	res, err := scan.Dir(h.diskRoot(), nil)
	if err != nil {
		return nil, stateErr(nil, "the scan root %s cannot be scanned (%v): ponder cannot tell which files are on disk", *h.s.ScanRoot, err)
	}
	if res.Paths == nil {
		res.Paths = []string{}
	}
	return res.Paths, nil
}

// uncovered are the files on disk in the session's scope that no unit
// carries ([] without a scan root).
func (h *handle) uncovered(st *State) ([]string, error) {
	files, err := h.scope()
	if err != nil || files == nil {
		return []string{}, err
	}
	return st.Uncovered(files), nil
}
