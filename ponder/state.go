package ponder

import (
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Unit is one entry of the inventory as the ledger has shaped it.
type Unit struct {
	ID      string
	Paths   []string // every path the unit ever carried; the last is current
	Kind    string
	Deleted bool
	Phantom bool
	Graded  bool
	Grade   *string
	// retracted are the findings deleted on this unit, by normalised text,
	// so that an add re-raising one is recognised (thrash).
	retracted []retraction
}

type retraction struct {
	text string // normalised
	pass int
}

// Path is the unit's current path.
func (u *Unit) Path() string {
	if len(u.Paths) == 0 {
		return ""
	}
	return u.Paths[len(u.Paths)-1]
}

// Counted reports whether u is in the coverage denominator:
// U_counted = U_live ∪ U_ungraded-deleted, where a phantom delete takes an
// ungraded unit out and a unit deleted after grading leaves both sides.
func (u *Unit) Counted() bool {
	if !u.Deleted {
		return true
	}
	return !u.Phantom && !u.Graded
}

// valueAt is one value a finding's field held, and the pass that set it.
type valueAt[T comparable] struct {
	pass    int
	value   T
	changed bool // set by a change (not the add)
}

// Finding is one finding as the ledger has shaped it.
type Finding struct {
	ID             string
	UnitID         string
	Severity       string
	Confidence     float64
	Text           string
	Recommendation *string
	Evidence       *string
	Live           bool
	AddedPass      int
	// ReRaised: the add re-raised a finding deleted before it (same unit,
	// same normalised text).
	ReRaised    bool
	editPasses  []int // distinct passes with an edit, ascending
	severities  []valueAt[string]
	confidences []valueAt[float64]
}

func (f *Finding) editedIn(pass int) bool {
	for i := len(f.editPasses) - 1; i >= 0; i-- {
		if f.editPasses[i] == pass {
			return true
		}
		if f.editPasses[i] < pass {
			return false
		}
	}
	return false
}

// OpCounts are a pass's finding operations (the counts OCA records of a
// judged pass are these).
type OpCounts = oca.OpCounts

// UnitCounts are a pass's unit records.
type UnitCounts struct {
	Seed   int `json:"seed"`
	Add    int `json:"add"`
	Edit   int `json:"edit"`
	Delete int `json:"delete"`
	Grade  int `json:"grade"`
}

// PassStats is what one pass's records did.
type PassStats struct {
	Ops   OpCounts
	Units UnitCounts
	// Thrash counts the records that undo a revision of the previous pass
	// (SPEC.md §7): an edit of a finding edited in k−1, a change back to a
	// value held before a k−1 change, a delete of a finding re-raised in
	// k−1, and an add re-raising a finding deleted in k−1.
	Thrash int
	// ReAdds counts the adds that re-raise a finding deleted in k−1.
	ReAdds int
	// Falsified counts deletes of findings added in k−1 (not re-raised):
	// the Skeptic's falsification, which is convergence, never thrash.
	Falsified int
	voices    uint8
	Records   int
}

// Revising counts the pass's finding edit + change + delete.
func (p *PassStats) Revising() int { return p.Ops.Edit + p.Ops.Change + p.Ops.Delete }

// ThrashBase is thrash's denominator: revising records plus re-raising adds.
func (p *PassStats) ThrashBase() int { return p.Revising() + p.ReAdds }

// DeltaVoices counts distinct voices on the pass's records.
func (p *PassStats) DeltaVoices() int { return bits.OnesCount8(p.voices) }

var voiceBit = map[string]uint8{ledger.Skeptic: 1, ledger.Builder: 2, ledger.Dreamer: 4, ledger.Empath: 8}

// index finds units and findings by id. The engine's ids are dense
// (u0001, u0002, …), so canonical ids live in a slice indexed by their
// number — no hashing on the judge's hot path; anything else in a map.
type index[T any] struct {
	dense  []*T
	sparse map[string]*T
}

// canonicalNumber is n for the canonical id <letter><n, zero-padded to at
// least four digits>, else 0.
func canonicalNumber(id string) int {
	d := len(id) - 1
	if d < 4 || (d > 4 && id[1] == '0') {
		return 0
	}
	n := 0
	for i := 1; i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' || n > 1<<40 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (x *index[T]) get(id string) *T {
	if n := canonicalNumber(id); n > 0 {
		if n < len(x.dense) {
			return x.dense[n]
		}
		return nil
	}
	return x.sparse[id]
}

func (x *index[T]) put(id string, v *T) {
	if n := canonicalNumber(id); n > 0 && n < 1<<24 {
		for n >= len(x.dense) {
			x.dense = append(x.dense, nil)
		}
		x.dense[n] = v
		return
	}
	if x.sparse == nil {
		x.sparse = map[string]*T{}
	}
	x.sparse[id] = v
}

// State is the session's inventory and findings after replaying the ledger.
type State struct {
	Units     []*Unit
	Findings  []*Finding
	Live      int // live findings
	Seeded    bool
	Records   int
	units     index[Unit]
	livePaths map[string]*Unit
	findings  index[Finding]
	passes    map[int]*PassStats
	nextUnit  int
	nextFind  int
	// the pass of the previous record, as records come in pass order
	lastPass   *PassStats
	lastPassNo int
}

func newState() *State {
	return &State{
		livePaths: map[string]*Unit{},
		passes:    map[int]*PassStats{},
		nextUnit:  1,
		nextFind:  1,
	}
}

// Replay builds the state from the ledger's records, in one pass. (The
// engine replays while it reads: see handle.state.)
func Replay(recs []ledger.Record) *State {
	st := newState()
	for i := range recs {
		st.apply(&recs[i])
	}
	return st
}

// Unit returns the unit with id, or nil.
func (st *State) Unit(id string) *Unit { return st.units.get(id) }

// Finding returns the finding with id, or nil.
func (st *State) Finding(id string) *Finding { return st.findings.get(id) }

// Pass returns the stats of a pass (zero when it has no records).
func (st *State) Pass(pass int) *PassStats {
	if p := st.passes[pass]; p != nil {
		return p
	}
	return &PassStats{}
}

func (st *State) pass(pass int) *PassStats {
	if st.lastPass != nil && st.lastPassNo == pass {
		return st.lastPass
	}
	p := st.passes[pass]
	if p == nil {
		p = &PassStats{}
		st.passes[pass] = p
	}
	st.lastPass, st.lastPassNo = p, pass
	return p
}

// Grading is |{u ∈ U_counted : graded(u)}| and |U_counted|: the grading gate.
func (st *State) Grading() (graded, counted int) { return st.gradingWith(nil) }

// gradingWith is Grading where phantomFails, when set, says which
// phantom-deleted units count again (a path of theirs is on disk: the
// phantom does not hold), without changing the units.
func (st *State) gradingWith(phantomFails func(*Unit) bool) (graded, counted int) {
	for _, u := range st.Units {
		c := u.Counted()
		if phantomFails != nil && u.Deleted && u.Phantom && phantomFails(u) {
			c = !u.Graded
		}
		if c {
			counted++
			if u.Graded {
				graded++
			}
		}
	}
	return graded, counted
}

// Uncovered are the files of a scope (names as scan lists them, bytes)
// that no unit carries as its current path, in stored form, in scope
// order: a file renamed or added since the seed. The disk-anchored gate
// counts them as gaps in coverage.
func (st *State) Uncovered(files []string) []string {
	carried := make(map[string]bool, len(st.Units))
	for _, u := range st.Units {
		carried[u.Path()] = true
	}
	out := []string{}
	for _, f := range files {
		if n := ledger.EncodeName(f); !carried[n] {
			out = append(out, n)
		}
	}
	return out
}

// Ungraded lists the counted units not yet graded, in id order.
func (st *State) Ungraded() []*Unit {
	var out []*Unit
	for _, u := range st.Units {
		if u.Counted() && !u.Graded {
			out = append(out, u)
		}
	}
	return out
}

// LiveFindings lists the live findings in id order.
func (st *State) LiveFindings() []*Finding {
	out := make([]*Finding, 0, st.Live)
	for _, f := range st.Findings {
		if f.Live {
			out = append(out, f)
		}
	}
	return out
}

// BelowFloor counts live findings whose confidence is below floor.
func (st *State) BelowFloor(floor float64) int {
	n := 0
	for _, f := range st.Findings {
		if f.Live && f.Confidence < floor {
			n++
		}
	}
	return n
}

func idNumber(id string) int {
	if len(id) < 2 {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil {
		return 0
	}
	return n
}

func unitID(n int) string    { return "u" + pad4(n) }
func findingID(n int) string { return "f" + pad4(n) }

func pad4(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

func (st *State) addUnit(id, path, kind string) *Unit {
	u := &Unit{ID: id, Paths: []string{path}, Kind: kind}
	st.Units = append(st.Units, u)
	st.units.put(id, u)
	st.livePaths[path] = u
	if n := idNumber(id); n >= st.nextUnit {
		st.nextUnit = n + 1
	}
	return u
}

// apply folds one (already validated) record into the state. Records that
// name something unknown are ignored rather than trusted.
func (st *State) apply(r *ledger.Record) {
	st.Records++
	ps := st.pass(r.Pass)
	ps.Records++
	if b, ok := voiceBit[r.Voice]; ok {
		ps.voices |= b
	}
	switch r.Type {
	case ledger.UnitSeed, ledger.UnitAdd:
		if st.units.get(r.UnitID) != nil {
			return
		}
		kind := r.Kind
		if kind == "" {
			kind = "file"
		}
		st.addUnit(r.UnitID, r.Path, kind)
		if r.Type == ledger.UnitSeed {
			st.Seeded = true
			ps.Units.Seed++
		} else {
			ps.Units.Add++
		}
	case ledger.UnitEdit:
		u := st.units.get(r.UnitID)
		if u == nil {
			return
		}
		ps.Units.Edit++
		if r.Path != "" && r.Path != u.Path() {
			if st.livePaths[u.Path()] == u {
				delete(st.livePaths, u.Path())
			}
			u.Paths = append(u.Paths, r.Path)
			st.livePaths[r.Path] = u
		}
		if r.Kind != "" {
			u.Kind = r.Kind
		}
	case ledger.UnitDelete:
		u := st.units.get(r.UnitID)
		if u == nil {
			return
		}
		ps.Units.Delete++
		if st.livePaths[u.Path()] == u {
			delete(st.livePaths, u.Path())
		}
		u.Deleted = true
		if r.Phantom {
			u.Phantom = true
		}
	case ledger.UnitGrade:
		u := st.units.get(r.UnitID)
		if u == nil {
			return
		}
		ps.Units.Grade++
		u.Graded = true
		u.Grade = r.Grade
	case ledger.Finding:
		st.applyFinding(r, ps)
	}
}

func (st *State) applyFinding(r *ledger.Record, ps *PassStats) {
	k := r.Pass
	if r.Op == ledger.OpAdd {
		if st.findings.get(r.FindingID) != nil {
			return
		}
		f := &Finding{ID: r.FindingID, UnitID: r.UnitID, Severity: r.Severity, Live: true, AddedPass: k,
			Recommendation: r.Recommendation, Evidence: r.Evidence}
		if r.Confidence != nil {
			f.Confidence = *r.Confidence
		}
		if r.Text != nil {
			f.Text = *r.Text
		}
		st.Findings = append(st.Findings, f)
		st.findings.put(f.ID, f)
		st.Live++
		if n := idNumber(f.ID); n >= st.nextFind {
			st.nextFind = n + 1
		}
		if u := st.units.get(r.UnitID); u != nil {
			u.Graded = true
			if len(u.retracted) > 0 {
				text := normaliseText(f.Text)
				for i := len(u.retracted) - 1; i >= 0; i-- {
					if u.retracted[i].text == text {
						f.ReRaised = true
						if u.retracted[i].pass == k-1 {
							ps.ReAdds++
							ps.Thrash++
						}
						break
					}
				}
			}
		}
		ps.Ops.Add++
		return
	}
	f := st.findings.get(r.FindingID)
	if f == nil || !f.Live {
		return
	}
	switch r.Op {
	case ledger.OpEdit:
		ps.Ops.Edit++
		if f.editedIn(k - 1) {
			ps.Thrash++
		}
		if len(f.editPasses) == 0 || f.editPasses[len(f.editPasses)-1] != k {
			f.editPasses = append(f.editPasses, k)
		}
		if r.Text != nil {
			f.Text = *r.Text
		}
		if r.Recommendation != nil {
			f.Recommendation = r.Recommendation
		}
		if r.Evidence != nil {
			f.Evidence = r.Evidence
		}
	case ledger.OpChange:
		ps.Ops.Change++
		reverts := false
		// A field's history starts with the add's value, built on the
		// first change (most findings are never changed).
		if f.severities == nil {
			f.severities = []valueAt[string]{{pass: f.AddedPass, value: f.Severity}}
			f.confidences = []valueAt[float64]{{pass: f.AddedPass, value: f.Confidence}}
		}
		if r.Severity != "" {
			reverts = reverts || revertsPrevious(f.severities, k, r.Severity)
			f.severities = append(f.severities, valueAt[string]{pass: k, value: r.Severity, changed: true})
			f.Severity = r.Severity
		}
		if r.Confidence != nil {
			reverts = reverts || revertsPrevious(f.confidences, k, *r.Confidence)
			f.confidences = append(f.confidences, valueAt[float64]{pass: k, value: *r.Confidence, changed: true})
			f.Confidence = *r.Confidence
		}
		if reverts {
			ps.Thrash++
		}
	case ledger.OpDelete:
		ps.Ops.Delete++
		if f.AddedPass == k-1 {
			if f.ReRaised {
				ps.Thrash++ // it was deleted, re-raised in k−1, and deleted again
			} else {
				ps.Falsified++ // a pass-(k−1) claim falsified: not thrash
			}
		}
		f.Live = false
		st.Live--
		if u := st.units.get(f.UnitID); u != nil {
			u.retracted = append(u.retracted, retraction{text: normaliseText(f.Text), pass: k})
		}
	}
}

// normaliseText is a finding's text for "the same finding": lower case and
// every run of white space made one space, trimmed. Text that is already
// so (plain ASCII, as most is) comes back as itself, without allocating.
func normaliseText(s string) string {
	normal := true
	for i := 0; i < len(s) && normal; i++ {
		c := s[i]
		switch {
		case c >= 0x80, c >= 'A' && c <= 'Z', c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			normal = false
		case c == ' ':
			normal = i > 0 && i < len(s)-1 && s[i+1] != ' '
		}
	}
	if normal {
		return s
	}
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// PathsOnDisk lists the paths u ever carried that exist under root, tested
// with lstat (a dangling symlink exists) on the name's exact bytes.
func (u *Unit) PathsOnDisk(root string) []string {
	var present []string
	for _, p := range uniq(u.Paths) {
		raw, err := ledger.DecodeName(p)
		if err != nil {
			raw = p
		}
		full := filepath.FromSlash(raw)
		if !filepath.IsAbs(full) {
			full = filepath.Join(root, full)
		}
		if _, err := os.Lstat(full); err == nil {
			present = append(present, p)
		}
	}
	return present
}

// PhantomOnDisk is a phantom-deleted unit one of whose paths exists again.
type PhantomOnDisk struct {
	Unit  string   `json:"unit"`
	Paths []string `json:"paths"`
}

// ReverifyPhantoms checks every phantom delete against the disk again (a
// phantom holds only while none of the unit's paths exists) and puts a unit
// whose phantom no longer holds back into the coverage denominator. It
// returns how many phantoms it checked and those that failed.
func (st *State) ReverifyPhantoms(root string) (checked int, failed []PhantomOnDisk) {
	failed = []PhantomOnDisk{}
	for _, u := range st.Units {
		if !u.Phantom {
			continue
		}
		checked++
		if present := u.PathsOnDisk(root); len(present) > 0 {
			u.Phantom = false
			failed = append(failed, PhantomOnDisk{Unit: u.ID, Paths: present})
		}
	}
	return checked, failed
}

// revertsPrevious reports whether setting a field to v in pass k changes it
// back to a value it held before a change made in pass k−1 (the third
// kind of thrash). hist is the field's values in order, the add's first.
func revertsPrevious[T comparable](hist []valueAt[T], k int, v T) bool {
	last := -1 // the last change made in pass k−1
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].changed && hist[i].pass == k-1 {
			last = i
			break
		}
		if hist[i].pass < k-1 {
			break
		}
	}
	if last < 0 || hist[last].value == v {
		return false
	}
	for _, h := range hist[:last] {
		if h.value == v {
			return true
		}
	}
	return false
}
