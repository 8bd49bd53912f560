package ponder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

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
	Slug     string   `json:"slug"`
	Source   string   `json:"source"` // scan | list
	ScanRoot *string  `json:"scanRoot"`
	Method   *string  `json:"method"`  // git | walk; null without a scan
	Scanned  *int     `json:"scanned"` // files the scan found; null without a scan
	Units    int      `json:"units"`
	Missing  []string `json:"missing"` // --strict-scope omissions ([] when none)
}

// listedUnit is one entry of an agent's --from list.
type listedUnit struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// parseUnitList reads an agent's unit list: a JSON array of paths or of
// {path, kind}, or {"units": [...]} (a units.json), or plain text with one
// path per line.
func parseUnitList(data []byte) ([]listedUnit, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("the list is empty")
	}
	var raw []json.RawMessage
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
				out = append(out, listedUnit{Path: l})
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

// Units seeds the session's inventory, once.
func (e *Engine) Units(slug string, o UnitsOptions) (*UnitsResult, error) {
	if o.Scan == "" && o.FromName == "" {
		return nil, usageErr("units needs --scan <dir> or --from FILE|-")
	}
	if o.StrictScope && (o.Scan == "" || o.FromName == "") {
		return nil, usageErr("--strict-scope checks an agent's --from list against --scan <dir>: give both")
	}
	var listed []listedUnit
	if o.FromName != "" {
		var err error
		if listed, err = parseUnitList(o.From); err != nil {
			return nil, usageErr("--from %s: %v", o.FromName, err)
		}
	}
	h, err := e.open(slug, true)
	if err != nil {
		return nil, err
	}
	defer h.release()
	if err := h.requireActive("units"); err != nil {
		return nil, err
	}
	st, l, err := h.state()
	if err != nil {
		return nil, err
	}
	if st.Seeded {
		return nil, stateErr(nil, "units refused: session %s is already seeded with %d unit(s); change the inventory with unit-add, unit-edit and unit-delete deltas", h.slug, len(st.Units))
	}
	res := &UnitsResult{Slug: h.slug, Missing: []string{}}
	var scanned *scan.Result
	if o.Scan != "" {
		root := filepath.ToSlash(filepath.Clean(o.Scan))
		res.ScanRoot = &root
		h.s.ScanRoot = &root
		dir := h.diskRoot()
		var prog Progress
		if e.Progress != nil {
			prog = e.Progress("scanning " + root)
		}
		var update func(int)
		if prog != nil {
			update = prog.Update
		}
		if scanned, err = scan.Dir(dir, update); err != nil {
			return nil, stateErr(nil, "units --scan %s: %v", o.Scan, err)
		}
		if prog != nil {
			prog.Done(len(scanned.Paths))
		}
		n := len(scanned.Paths)
		res.Method, res.Scanned = &scanned.Method, &n
	}
	var recs []ledger.Record
	seen := map[string]bool{}
	add := func(p, kind string) {
		if kind == "" {
			kind = "file"
		}
		seen[p] = true
		recs = append(recs, ledger.Record{Type: ledger.UnitSeed, UnitID: unitID(len(recs) + 1), Path: p, Kind: kind})
	}
	if o.FromName != "" {
		res.Source = "list"
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
			return nil, &Error{Code: ExitUsage, Kind: "usage", Message: "--from " + o.FromName + " is not a usable unit list", Details: bad}
		}
		if o.StrictScope {
			for _, p := range scanned.Paths {
				if !seen[p] {
					res.Missing = append(res.Missing, p)
				}
			}
			if len(res.Missing) > 0 {
				return nil, stateErr(res.Missing, "--strict-scope: the list omits %d file(s) on disk under %s; nothing was seeded", len(res.Missing), o.Scan)
			}
		}
	} else {
		res.Source = "scan"
		for _, p := range scanned.Paths {
			add(p, "file")
		}
	}
	if len(recs) == 0 {
		return nil, stateErr(nil, "units refused: nothing to seed (the scope is empty)")
	}
	// scanRoot first: a crash before the append leaves an unseeded session
	// that a second units simply re-scans.
	if err := h.save(); err != nil {
		return nil, err
	}
	if err := h.appendBatch(l, recs); err != nil {
		return nil, err
	}
	for i := range recs {
		st.apply(&recs[i])
	}
	if err := h.writeUnits(st); err != nil {
		return nil, err
	}
	res.Units = len(recs)
	return res, nil
}
