package ponder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/ponder/ledger"
)

// Halt is a stop put on a session from outside ponder — laserkit's
// supervisor halts the yielding one of two sessions doing the same job.
// While it holds, every writing command refuses (exit 2, a state error)
// with the reason and the way back; reading commands go on.
type Halt struct {
	// Reason is why, in the halting party's words.
	Reason string
	// Release is how a person lifts it (a command line).
	Release string
}

// Halts says whether a session is halted. ponder defines it and never
// imports the party that halts: the ponder binary wires laserkit's fleet
// store in, and an Engine without Halts is never halted.
type Halts interface {
	// SessionHalt is the halt in force on the session slug of the project
	// at root, nil when there is none. An error refuses the command too:
	// a halt that cannot be read is not assumed away.
	SessionHalt(root, slug string) (*Halt, error)
}

// Messages hands a session what it is told from outside ponder: laserkit's
// supervisor's messages to it (its drift advice, a person's answer to its
// escalation, a halt and its release, a collision it should yield in).
// ponder defines it and never imports the party that sends them; the ponder
// binary wires laserkit's fleet store in, and an Engine without Messages is
// told nothing.
type Messages interface {
	// SessionMessages hands out what waits for the session slug of the
	// project at root, each message once, as the text to show.
	SessionMessages(root, slug string) ([]string, error)
}

// tellMessages shows what waits for a session (Engine.Tell), once; a store
// that cannot be read is a warning, never a refusal: being told is not a
// precondition of the work.
func (e *Engine) tellMessages(slug string) {
	if e.Messages == nil || e.Tell == nil {
		return
	}
	msgs, err := e.Messages.SessionMessages(e.Root, slug)
	if err != nil {
		e.Warn("what the supervisor said to session " + slug + " cannot be read: " + err.Error())
		return
	}
	for _, m := range msgs {
		e.Tell(m)
	}
}

// sessionHalt is the halt in force on a session, nil when there is none
// (or no Halts is wired); an error when the halts cannot be read.
func (e *Engine) sessionHalt(slug string) (*Halt, error) {
	if e.Halts == nil {
		return nil, nil
	}
	h, err := e.Halts.SessionHalt(e.Root, slug)
	if err != nil {
		return nil, stateErr(nil, "session %s: cannot tell whether it is halted, so nothing was changed: %v", slug, err)
	}
	return h, nil
}

// checkHalt refuses a writing command on a halted session.
func (e *Engine) checkHalt(slug string) error {
	h, err := e.sessionHalt(slug)
	if err != nil || h == nil {
		return err
	}
	msg := fmt.Sprintf("session %s is halted: %s", slug, strings.TrimSuffix(h.Reason, "."))
	if h.Release != "" {
		msg += fmt.Sprintf("; nothing is written until a person releases it (%s)", h.Release)
	}
	return stateErr(nil, "%s; ending it is allowed (ponder abort)", msg)
}

// SessionFacts is a session as its files show it, pass by pass: the one
// read API for readers outside the engine — laserkit's supervisor judges
// the session on it (observed facts, not what the agent driving it says),
// and ponder/report draws it. It is read-only and takes no lock.
type SessionFacts struct {
	Slug      string  `json:"slug"`
	Subject   string  `json:"subject"`
	Lens      *string `json:"lens"`
	Status    string  `json:"status"`
	Phase     string  `json:"phase"`
	Pass      int     `json:"pass"`
	Budget    int     `json:"passBudget"`
	CreatedAt string  `json:"createdAt"`
	// Root is where unit paths resolve: the scan root, else the project
	// root (absolute when the engine's root is).
	Root string `json:"root"`
	// Ledger is the prefix these facts describe.
	Ledger ledger.Anchor `json:"ledger"`
	// Grading and Live are the session now, as status reports them.
	Grading Grading `json:"coverage"`
	Live    int     `json:"live"`
	// Passes are 1 … Pass, each as the ledger stood at its end.
	Passes []PassFacts `json:"passes"`
	// Files is every path a unit ever carried (its units and so its
	// findings' paths), sorted, as stored (names are bytes: SPEC.md §4).
	Files []string `json:"files"`
}

// PassFacts is one pass of SessionFacts: what session.json, the pass's
// judge.json and predict.json say about it, and what its ledger records
// did.
type PassFacts struct {
	Pass       int  `json:"pass"`
	OverBudget bool `json:"overBudget"`
	Skipped    bool `json:"skipped"`
	// Decision is "continue" or "stop" once decide ran for the pass.
	Decision  *string `json:"decision"`
	DecidedAt *string `json:"decidedAt"`
	// Judgement is the pass's judge.json (the last judge run), nil before
	// judge: the verdict, its rule and reason, and the metrics judge
	// measured (voices and the Skeptic included).
	Judgement *Judgement `json:"judgement"`
	// Forecast is the churn predicted for the pass (predict.json), nil
	// without one.
	Forecast *Forecast `json:"forecast"`
	// Graded and Counted are the coverage after the pass's records, with
	// every phantom delete re-verified against the disk now (SPEC.md §6).
	Graded  int `json:"graded"`
	Counted int `json:"counted"`
	Live    int `json:"live"`
	// Churn, Novelty and Thrash are computed as judge computes them; nil
	// on pass 1.
	Churn   *float64   `json:"churn"`
	Novelty *float64   `json:"novelty"`
	Thrash  *float64   `json:"thrash"`
	Ops     OpCounts   `json:"ops"`
	UnitOps UnitCounts `json:"unitOps"`
	// Quiet: the pass meets every Rule-6 threshold the ledger shows —
	// coverage 1, novelty < 0.05, churn < 0.10, thrash ≤ 0.25. (Voices and
	// the Skeptic come from the deliberation, not the ledger.)
	Quiet bool `json:"quiet"`
	// Graded units, finding records and phantom deletes of the pass, in
	// ledger order.
	GradedUnits []GradedUnit  `json:"gradedUnits"`
	FindingOps  []FindingOp   `json:"findingOps"`
	Phantoms    []PhantomFact `json:"phantoms"`
}

// Rule6Thresholds are Rule 6's convergence thresholds (SPEC.md §7), for
// readers that draw a session's course against them.
type Rule6Thresholds struct {
	MaxNovelty float64 `json:"maxNovelty"` // novelty < MaxNovelty
	MaxChurn   float64 `json:"maxChurn"`   // churn < MaxChurn
	MaxThrash  float64 `json:"maxThrash"`  // thrash ≤ MaxThrash (above it R3 escalates)
	MinVoices  int     `json:"minVoices"`  // voices ≥ MinVoices
	// Skeptic: from pass 2 on a pass counts only if the Skeptic argued.
	Skeptic bool `json:"skeptic"`
}

// Rule6 returns the thresholds the verdict applies.
func Rule6() Rule6Thresholds {
	return Rule6Thresholds{MaxNovelty: maxNovelty, MaxChurn: maxChurn, MaxThrash: maxThrash, MinVoices: minVoices, Skeptic: true}
}

// GradedUnit is a unit graded for the first time in a pass: by a
// unit-grade record ("grade") or a finding raised on it ("finding").
type GradedUnit struct {
	Unit  string  `json:"unit"`
	Path  string  `json:"path"`
	By    string  `json:"by"`
	Grade *string `json:"grade,omitempty"`
}

// FindingOp is one finding record of a pass.
type FindingOp struct {
	Op      string `json:"op"`
	Finding string `json:"finding"`
	Unit    string `json:"unit"`
	Path    string `json:"path"`
	Text    string `json:"text,omitempty"`
}

// PhantomFact is a phantom delete made in a pass, verified again now:
// OnDisk lists the unit's paths that exist (a phantom that no longer holds).
type PhantomFact struct {
	Unit   string   `json:"unit"`
	Paths  []string `json:"paths"`
	OnDisk []string `json:"onDisk"`
}

// Facts reads a session — its ledger, and each pass's stored judgement and
// forecast — without changing anything. A damaged ledger is refused as every reader refuses it
// (a state error naming the first forged record).
func (e *Engine) Facts(slug string) (*SessionFacts, error) {
	h, err := e.open(slug, reader)
	if err != nil {
		return nil, err
	}
	root := h.diskRoot()
	var b *factsBuilder
	st, l, err := h.stateWith(func(st *State) func(*ledger.Record) {
		b = &factsBuilder{st: st, root: root, onDisk: map[*Unit][]string{}}
		return b.apply
	})
	if err != nil {
		return nil, err
	}
	s := h.s
	b.closeThrough(max(s.CurrentPass, b.cur))
	f := &SessionFacts{Slug: s.Slug, Subject: s.Subject, Lens: s.Lens, Status: s.Status, Phase: s.Phase,
		Pass: s.CurrentPass, Budget: s.PassBudget, CreatedAt: s.CreatedAt, Root: root, Ledger: l.Anchor(),
		Grading: gradingOf(st), Live: st.Live, Passes: b.passes, Files: []string{}}
	if f.Passes == nil {
		f.Passes = []PassFacts{}
	}
	for i := range f.Passes {
		if err := h.passFiles(&f.Passes[i]); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, u := range st.Units {
		for _, p := range u.Paths {
			if !seen[p] {
				seen[p] = true
				f.Files = append(f.Files, p)
			}
		}
	}
	sort.Strings(f.Files)
	return f, nil
}

// passFiles fills in what the session's files say about pass p: its line
// in session.json, its judge.json and its predict.json.
func (h *handle) passFiles(p *PassFacts) error {
	for _, ph := range h.s.History {
		if ph.Pass == p.Pass {
			p.OverBudget, p.Skipped, p.Decision, p.DecidedAt = ph.OverBudget, ph.Skipped, ph.Decision, ph.DecidedAt
		}
	}
	dir := passDir(h.dir, p.Pass)
	var j Judgement
	if ok, err := readJSON(filepath.Join(dir, judgeFile), &j); err != nil {
		return err
	} else if ok {
		p.Judgement = &j
	}
	var f Forecast
	if ok, err := readJSON(filepath.Join(dir, predictFile), &f); err != nil {
		return err
	} else if ok {
		p.Forecast = &f
	}
	return nil
}

// factsBuilder replays the ledger and cuts it into passes.
type factsBuilder struct {
	st     *State
	root   string
	cur    int // the pass records are coming in for
	open   *PassFacts
	passes []PassFacts
	onDisk map[*Unit][]string // phantom re-verification, once per unit
}

func (b *factsBuilder) apply(r *ledger.Record) {
	if r.Pass > b.cur {
		b.closeThrough(r.Pass - 1)
		b.cur = r.Pass
	}
	if b.open == nil {
		b.open = &PassFacts{Pass: b.cur}
	}
	st, p := b.st, b.open
	var u *Unit
	switch {
	case r.Type == ledger.UnitGrade, r.Type == ledger.Finding && r.Op == ledger.OpAdd:
		u = st.Unit(r.UnitID)
	case r.Type == ledger.Finding:
		if f := st.Finding(r.FindingID); f != nil {
			u = st.Unit(f.UnitID)
		}
	}
	wasGraded := u != nil && u.Graded
	st.apply(r)
	switch r.Type {
	case ledger.UnitGrade:
		if u != nil && !wasGraded && u.Graded {
			p.GradedUnits = append(p.GradedUnits, GradedUnit{Unit: u.ID, Path: u.Path(), By: "grade", Grade: r.Grade})
		}
	case ledger.Finding:
		if u == nil {
			return
		}
		if r.Op == ledger.OpAdd && !wasGraded && u.Graded {
			p.GradedUnits = append(p.GradedUnits, GradedUnit{Unit: u.ID, Path: u.Path(), By: "finding"})
		}
		op := FindingOp{Op: r.Op, Finding: r.FindingID, Unit: u.ID, Path: u.Path()}
		if r.Text != nil {
			op.Text = *r.Text
		}
		p.FindingOps = append(p.FindingOps, op)
	case ledger.UnitDelete:
		if r.Phantom {
			if pu := st.Unit(r.UnitID); pu != nil {
				p.Phantoms = append(p.Phantoms, PhantomFact{Unit: pu.ID, Paths: uniq(pu.Paths), OnDisk: b.pathsOnDisk(pu)})
			}
		}
	}
}

func (b *factsBuilder) pathsOnDisk(u *Unit) []string {
	if got, ok := b.onDisk[u]; ok {
		return got
	}
	got := u.PathsOnDisk(b.root)
	if got == nil {
		got = []string{}
	}
	b.onDisk[u] = got
	return got
}

// closeThrough ends every pass up to k, each with the state as it is now:
// the records of the passes after it have not been applied yet.
func (b *factsBuilder) closeThrough(k int) {
	for len(b.passes) < k {
		n := len(b.passes) + 1
		p := PassFacts{Pass: n}
		if b.open != nil && b.open.Pass == n {
			p = *b.open
			b.open = nil
		}
		b.measure(&p)
		b.passes = append(b.passes, p)
	}
}

func (b *factsBuilder) measure(p *PassFacts) {
	st := b.st
	// A phantom whose path is on disk does not hold: the unit counts again.
	p.Graded, p.Counted = st.gradingWith(func(u *Unit) bool { return len(b.pathsOnDisk(u)) > 0 })
	ps := st.Pass(p.Pass)
	p.Live, p.Ops, p.UnitOps = st.Live, ps.Ops, ps.Units
	full := p.Counted > 0 && p.Graded == p.Counted
	if p.Pass >= 2 {
		churn, novelty, thrash := passRatios(ps, st.Live)
		p.Churn, p.Novelty, p.Thrash = &churn, &novelty, &thrash
		p.Quiet = full && novelty < maxNovelty && churn < maxChurn && thrash <= maxThrash
	}
	if p.GradedUnits == nil {
		p.GradedUnits = []GradedUnit{}
	}
	if p.FindingOps == nil {
		p.FindingOps = []FindingOp{}
	}
	if p.Phantoms == nil {
		p.Phantoms = []PhantomFact{}
	}
}

// SessionStamp changes whenever a session's state may have: session.json
// and the ledger, by size and modification time. A reader polling many
// sessions reads Facts again only when it changed. ErrNoSession when the
// session is gone.
func (e *Engine) SessionStamp(slug string) (string, error) {
	if !validSlug(slug) {
		return "", usageErr("%q is not a session slug", slug)
	}
	dir := e.sessionDir(slug)
	var b strings.Builder
	for _, name := range []string{sessionFile, ledgerFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist) && name == sessionFile:
			return "", fmt.Errorf("session %s: %w", slug, ErrNoSession)
		case errors.Is(err, os.ErrNotExist):
			b.WriteString("-;")
		case err != nil:
			return "", err
		default:
			fmt.Fprintf(&b, "%d.%d;", info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String(), nil
}

// ErrNoSession: the session does not exist (any more).
var ErrNoSession = errors.New("no such session")

// Slugs lists the sessions under .ponder/, sorted: every directory holding
// a session.json.
func (e *Engine) Slugs() ([]string, error) {
	entries, err := os.ReadDir(e.stateDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ent := range entries {
		if !ent.IsDir() || !validSlug(ent.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(e.sessionDir(ent.Name()), sessionFile)); err == nil {
			out = append(out, ent.Name())
		}
	}
	return out, nil
}
