package ponder

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/laserkit/laserkit/ponder/ledger"
)

// The ledger is the record; a pass's judge.json is what judge concluded
// from it. Rule 6 reads two consecutive passes, so the earlier one is
// measured again from the ledger (never taken from its file), and a
// judge.json whose figures the ledger does not bear out is reported.

// snapshot is one measurement taken while the ledger replays: pass Pass as
// the ledger stood after Records records (atEnd: after the pass's last
// record), its phantoms judged by fails.
type snapshot struct {
	Pass    int
	Records int
	atEnd   bool
	fails   func(*Unit) bool
	floor   float64
	// files, when set, is the scope on disk now: the files no unit
	// carried at that point are its Uncovered.
	files   []string
	taken   bool
	Metrics Metrics
}

func (m *snapshot) measure(st *State) {
	m.Metrics, m.taken = ledgerMetrics(st, m.Pass, m.floor, m.fails), true
	if m.files != nil {
		m.Metrics.Uncovered = st.Uncovered(m.files)
	}
}

// snapshots replays records into st and takes each snapshot at its point.
type snapshots struct {
	st    *State
	count int
	marks []*snapshot
}

func (s *snapshots) apply(r *ledger.Record) {
	s.take(r.Pass)
	s.st.apply(r)
	s.count++
}

// take measures the snapshots due before a record of pass next.
func (s *snapshots) take(next int) {
	for _, m := range s.marks {
		if !m.taken && ((m.atEnd && next > m.Pass) || (!m.atEnd && m.Records == s.count)) {
			m.measure(s.st)
		}
	}
}

// finish takes the snapshots still due once every record is in.
func (s *snapshots) finish() {
	for _, m := range s.marks {
		if !m.taken && (m.atEnd || m.Records == s.count) {
			m.measure(s.st)
		}
	}
}

// storedFails is how judge saw the phantoms when it wrote j: the units it
// found on disk again are the ones that count.
func storedFails(j *Judgement) func(*Unit) bool {
	back := map[string]bool{}
	for _, p := range j.Metrics.Phantoms.OnDisk {
		back[p.Unit] = true
	}
	return func(u *Unit) bool { return back[u.ID] }
}

// judgementDiff lists where a stored judgement's figures differ from the
// ledger's (led, measured at the judgement's own prefix) and from the
// pass's deliberation: "churn is 0 there, 1 in the ledger". Empty when
// they agree.
func judgementDiff(j *Judgement, led Metrics, voices *Voices) []string {
	var out []string
	s := j.Metrics
	f := func(name string, stored, ledger any) {
		out = append(out, fmt.Sprintf("%s is %v there, %v in the ledger", name, stored, ledger))
	}
	ints := []struct {
		name         string
		stored, real int
	}{
		{"graded", s.Graded, led.Graded}, {"counted", s.Counted, led.Counted}, {"live", s.Live, led.Live},
		{"revising", s.Revising, led.Revising}, {"deltaVoices", s.DeltaVoices, led.DeltaVoices},
		{"confidenceFloor", s.ConfidenceFloor, led.ConfidenceFloor}, {"reAdds", s.ReAdds, led.ReAdds},
		{"falsified", s.Falsified, led.Falsified},
		{"ops.add", s.Ops.Add, led.Ops.Add}, {"ops.edit", s.Ops.Edit, led.Ops.Edit},
		{"ops.change", s.Ops.Change, led.Ops.Change}, {"ops.delete", s.Ops.Delete, led.Ops.Delete},
	}
	for _, c := range ints {
		if c.stored != c.real {
			f(c.name, c.stored, c.real)
		}
	}
	if s.FloorValue != led.FloorValue {
		f("floorValue", num(s.FloorValue), num(led.FloorValue))
	}
	if s.Coverage != led.Coverage {
		f("coverage", num(s.Coverage), num(led.Coverage))
	}
	for _, c := range []struct {
		name         string
		stored, real *float64
	}{{"churn", s.Churn, led.Churn}, {"novelty", s.Novelty, led.Novelty}, {"thrash", s.Thrash, led.Thrash}} {
		if !sameNum(c.stored, c.real) {
			f(c.name, fnumOrNull(c.stored), fnumOrNull(c.real))
		}
	}
	if voices != nil {
		if n := voices.Count(); s.Voices != n {
			out = append(out, fmt.Sprintf("voices is %d there, %d in the deliberation", s.Voices, n))
		}
		if sk := voices.Skeptic.Argument != nil; s.Skeptic != sk {
			out = append(out, fmt.Sprintf("skeptic is %v there, %v in the deliberation", s.Skeptic, sk))
		}
	}
	return out
}

func sameNum(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func fnumOrNull(f *float64) string {
	if f == nil {
		return "null"
	}
	return num(*f)
}

// storedJudgements reads passes/NN/judge.json of passes 1 … through.
func (h *handle) storedJudgements(through int) (map[int]*Judgement, error) {
	out := map[int]*Judgement{}
	for p := 1; p <= through; p++ {
		var j Judgement
		ok, err := readJSON(filepath.Join(passDir(h.dir, p), judgeFile), &j)
		if err != nil {
			return nil, err
		}
		if ok {
			out[p] = &j
		}
	}
	return out, nil
}

// storedVoices reads pass p's deliberation voices (nil without one).
func (h *handle) storedVoices(p int) (*Voices, error) {
	var d Deliberation
	ok, err := readJSON(filepath.Join(passDir(h.dir, p), deliberationFile), &d)
	if err != nil || !ok {
		return nil, err
	}
	return &d.Voices, nil
}

// judgementFile names pass p's judge.json for messages.
func judgementFile(p int) string {
	return filepath.ToSlash(filepath.Join(passesDir, fmt.Sprintf("%02d", p), judgeFile))
}

// verifyJudgements checks stored judgements against the ledger: each names
// a prefix of this ledger (its record count and that record's hash) and
// its figures are the ledger's at that prefix. It returns one problem per
// judgement that does not hold, by pass. l is the ledger as read with
// chain.Heads set to every judgement's record count; marks the snapshots
// taken at those counts.
func verifyJudgements(js map[int]*Judgement, l *ledger.Log, marks map[int]*snapshot, voices map[int]*Voices) map[int]string {
	out := map[int]string{}
	for p, j := range js {
		n := j.Ledger.Records
		switch {
		case j.Pass != p:
			out[p] = fmt.Sprintf("%s is the judgement of pass %d, not of pass %d", judgementFile(p), j.Pass, p)
		case n > l.Count:
			out[p] = fmt.Sprintf("%s measured %d ledger records, but the ledger holds %d", judgementFile(p), n, l.Count)
		case l.Heads[n] != j.Ledger.Head:
			out[p] = fmt.Sprintf("%s measured a ledger that is not this one: its record %d hashes to %.12s, not %.12s", judgementFile(p), n, l.Heads[n], j.Ledger.Head)
		default:
			m := marks[p]
			if m == nil || !m.taken {
				continue
			}
			if d := judgementDiff(j, m.Metrics, voices[p]); len(d) > 0 {
				out[p] = fmt.Sprintf("%s does not match the ledger: %s", judgementFile(p), joinDiffs(d))
			}
		}
	}
	return out
}

func joinDiffs(d []string) string {
	if len(d) > 4 {
		d = append(d[:4:4], "and "+strconv.Itoa(len(d)-4)+" more")
	}
	out := ""
	for i, s := range d {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// judgementMarks are the snapshots that check js: one per judgement, at
// its own prefix, phantoms as it saw them.
func judgementMarks(js map[int]*Judgement, floor float64) (map[int]*snapshot, []int) {
	marks := map[int]*snapshot{}
	var heads []int
	for p, j := range js {
		marks[p] = &snapshot{Pass: j.Pass, Records: j.Ledger.Records, fails: storedFails(j), floor: floor}
		if !slices.Contains(heads, j.Ledger.Records) {
			heads = append(heads, j.Ledger.Records)
		}
	}
	sort.Ints(heads)
	return marks, heads
}
