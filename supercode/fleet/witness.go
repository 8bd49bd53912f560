package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/laserkit/laserkit/internal/text"
)

// The journal witnesses a person's records. An authorization is honoured
// only when the journal holds the record its command wrote
// (JournalAuthorize, with the authorization's terms), a revocation
// when it holds one (JournalRevoke, or the file says so: revoking only
// takes away), and a halt is lifted only by a journaled release
// (JournalRelease). A file under authorizations/ that no record witnesses,
// one whose terms changed, a "released" added to a halt by hand or a halt
// index removed is ignored by the gate and named by Unwitnessed
// (laserbrain supervise verify, laserbrain doctor). A halt that appears
// without a record still holds: it can only stop an agent.
//
// The gate reads the witness cheaply: what the journal amounts to is kept
// on the machine (Machine) with the head it was read at, and only records
// past that head are read and chained onto it; a head that does not chain
// is read from the start and verified whole.

// Journal kinds of a person's records.
const (
	JournalRevoke = "revoke" // a person revoked one (Data: {"id"})
)

// Witness is what a fleet's journal says of its halts and authorizations,
// read up to record Records (whose hash is Hash).
type Witness struct {
	Fleet   string `json:"fleet"`
	Records int64  `json:"records"`
	Hash    string `json:"hash"`
	// Halts are the journaled halts no journaled release lifted.
	Halts []Halt `json:"halts,omitempty"`
	// Released are the ids of halts a journaled release lifted.
	Released []string `json:"released,omitempty"`
	// Terms are the journaled authorizations' terms, by id.
	Terms map[string]string `json:"terms,omitempty"`
	// Revoked are the ids of journaled revocations.
	Revoked []string `json:"revoked,omitempty"`
	// Problem: the chain does not hold, or no longer holds what this
	// machine verified, so it witnesses no authorization and no release
	// (its halts still hold).
	Problem *JournalProblem `json:"problem,omitempty"`
	// VerifiedAt is when this machine last verified it (Machine).
	VerifiedAt time.Time `json:"verified_at,omitempty"`
}

// AuthorizationTerms is what the journal fixes of an authorization: all but
// its uses and its revocation, which the gate and a person's revoke change
// later. A digest, so a record does not repeat them.
func AuthorizationTerms(a Authorization) string {
	t := a
	t.Used, t.Revoked = nil, time.Time{}
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (w *Witness) apply(r JournalRecord) {
	switch r.Kind {
	case JournalHalt:
		var h Halt
		if json.Unmarshal(r.Data, &h) == nil && h.ID != "" && !slices.Contains(w.Released, h.ID) {
			h.Released = nil
			w.Halts = append(slices.DeleteFunc(w.Halts, func(x Halt) bool { return x.ID == h.ID }), h)
		}
	case JournalRelease:
		var h Halt
		if json.Unmarshal(r.Data, &h) == nil && h.ID != "" {
			if !slices.Contains(w.Released, h.ID) {
				w.Released = append(w.Released, h.ID)
			}
			w.Halts = slices.DeleteFunc(w.Halts, func(x Halt) bool { return x.ID == h.ID })
		}
	case JournalAuthorize:
		var a Authorization
		if json.Unmarshal(r.Data, &a) == nil && a.ID != "" {
			if w.Terms == nil {
				w.Terms = map[string]string{}
			}
			w.Terms[a.ID] = AuthorizationTerms(a)
		}
	case JournalRevoke:
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(r.Data, &v) == nil && v.ID != "" && !slices.Contains(w.Revoked, v.ID) {
			w.Revoked = append(w.Revoked, v.ID)
		}
	}
}

// Witnesses reports whether the journal witnesses a as it stands: its
// record is there with the same terms, and no journaled revocation. It is
// the gate's decision (Authorize); Standing says why not.
func (w *Witness) Witnesses(a Authorization) bool {
	ok, _ := w.Standing(a)
	return ok
}

// Why an authorization is ignored (Standing).
const (
	IgnoredNoRecord = "no journal record witnesses it (not written by laserbrain authorize)"
	IgnoredChanged  = "its terms differ from what laserbrain authorize journaled"
	IgnoredRevoked  = "the journal holds its revocation"
)

// Standing is the journal's word on a: honoured (the gate may spend it
// while it is live) or ignored, with why — no record of it, its terms
// changed since, a journaled revocation, or a journal whose chain does not
// hold (which witnesses no authorization).
func (w *Witness) Standing(a Authorization) (honoured bool, why string) {
	if w == nil {
		return false, "the journal was not read"
	}
	if w.Problem != nil {
		return false, "the journal's chain does not hold (" + w.Problem.Error() + ")"
	}
	t, ok := w.Terms[a.ID]
	switch {
	case !ok:
		return false, IgnoredNoRecord
	case t != AuthorizationTerms(a):
		return false, IgnoredChanged
	case slices.Contains(w.Revoked, a.ID):
		return false, IgnoredRevoked
	}
	return true, ""
}

// AcceptJournalCommand is what a person runs to go on from a fleet's
// journal as it stands, once laserbrain supervise verify showed what it
// lost or what broke it.
const AcceptJournalCommand = "laserbrain supervise accept-journal --reason WHY"

// MachineDamagedFix is what a person runs when machine.json cannot be read.
const MachineDamagedFix = "laserbrain supervise verify, then " + AcceptJournalCommand

// JournalDoesNotHold says why a halt holds whatever the store says: the
// fleet's journal does not hold (p), so no release in it is honoured, and
// what a person does.
func JournalDoesNotHold(p *JournalProblem) string {
	return "the fleet's journal does not hold (" + p.Error() + "), so no release or authorization in it is honoured: a person runs laserbrain supervise verify, then " + AcceptJournalCommand
}

// HaltOn is the journaled halt in force on agent (or on run, an agent run's
// id), if any.
func (w *Witness) HaltOn(agent, run string) (Halt, bool) {
	if w == nil {
		return Halt{}, false
	}
	for _, h := range w.Halts {
		if h.Agent == agent || (run != "" && h.Run == run) {
			return h, true
		}
	}
	return Halt{}, false
}

// ReadWitness is what fleet's journal witnesses, read on from known (what
// this machine verified before: Machine) or from the start.
//
// Nothing past a break in the chain is applied: a release or an
// authorization after it is not honoured, and Problem says why. A journal
// that no longer holds what known verified — deleted, emptied, cut short,
// or rewritten, whatever its head and round counter say now — releases
// nothing either: the witness returned is known itself, its halts holding,
// with Problem naming the loss.
func ReadWitness(ctx context.Context, j Journal, fleet string, known *Witness) (Witness, error) {
	head, err := j.JournalHead(ctx, fleet)
	if err != nil {
		return Witness{}, err
	}
	k := known
	if k != nil && (k.Fleet != fleet || k.Records == 0 || k.Problem != nil) {
		k = nil
	}
	if k != nil && k.Records <= head.Records {
		if k.Records == head.Records && k.Hash == head.Hash {
			return *k, nil
		}
		if w, ok, err := readOn(ctx, j, *k, head); err != nil || ok {
			return w, err
		}
	}
	c, err := CheckJournal(ctx, j, fleet)
	if err != nil {
		return Witness{}, err
	}
	good := c.Records
	first := JournalFrom(good)
	if p := c.Problem; p != nil && int64(p.Index)-first < int64(len(good)) {
		good = good[:max(int64(p.Index)-first, 0)]
	}
	if k != nil && !holdsRecord(good, k.Records, k.Hash) {
		if c.Problem == nil && k.Records < first {
			w, problem, err := acrossRotation(ctx, j, *k, good)
			if err != nil || problem == nil {
				w.Records, w.Hash = head.Records, head.Hash
				return w, err
			}
			lost := k.clone()
			lost.Problem = problem
			return lost, nil
		}
		lost := k.clone()
		lost.Problem = c.Problem
		if lost.Problem == nil || !holdsRecord(c.Records, k.Records, k.Hash) {
			lost.Problem = lossProblem(*k, good)
		}
		return lost, nil
	}
	w := Witness{Fleet: fleet}
	if rot, rotated, _ := liveRotation(good); rotated {
		// What the archived records witness, as the rotation recorded it.
		w = rot.Witness.clone()
		w.Fleet = fleet
	}
	for _, r := range good {
		w.apply(r)
	}
	w.Problem = c.Problem
	w.Records, w.Hash = head.Records, head.Hash
	return w, nil
}

// acrossRotation reads on from k, which a rotation archived since, through
// the archive to the live journal (live, whose chain holds): the record k
// verified must be in the archive as verified, and chain from it to the
// live journal's first record. A rotation forged to hide what k verified
// — the records before a checkpoint cut, with no archive that holds them —
// is a loss.
func acrossRotation(ctx context.Context, j Journal, k Witness, live []JournalRecord) (Witness, *JournalProblem, error) {
	first := JournalFrom(live)
	lost := func(detail string) (Witness, *JournalProblem, error) {
		return Witness{}, &JournalProblem{Index: int(k.Records), Seq: k.Records, Kind: TamperDeleted, Detail: detail + ": " + verifiedWhat(k)}, nil
	}
	a, ok := j.(JournalArchive)
	if !ok {
		return lost(fmt.Sprintf("the journal starts at seq %d, and its store keeps no archive", first))
	}
	old, err := a.ArchivedRecords(ctx, k.Fleet, k.Records, first-1)
	var gone *ArchiveMissingError
	if errors.As(err, &gone) {
		return lost(gone.Error())
	}
	if err != nil {
		return Witness{}, nil, err
	}
	prev, seq := "", k.Records-1
	for i, r := range old {
		got, herr := JournalHash(r.Prev, r.Raw)
		if herr != nil || r.Seq != seq+1 || got != r.Hash || (i > 0 && r.Prev != prev) || (i == 0 && r.Hash != k.Hash) {
			return lost(fmt.Sprintf("the archive does not hold record %d as verified, chained on to the journal", seq+1))
		}
		prev, seq = r.Hash, r.Seq
	}
	if seq != first-1 || prev != live[0].Prev {
		return lost(fmt.Sprintf("the archive does not chain on to the journal's first record (seq %d)", first))
	}
	w := k.clone()
	for _, r := range old[1:] {
		w.apply(r)
	}
	for _, r := range live {
		w.apply(r)
	}
	return w, nil, nil
}

// verifiedWhat says what this machine verified of a journal (k).
func verifiedWhat(k Witness) string {
	when := ""
	if !k.VerifiedAt.IsZero() {
		when = " at " + k.VerifiedAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("this machine verified %s (head %s)%s", text.Plural(k.Records, "record"), text.Clip(k.Hash, 12), when)
}

// holdsRecord reports whether recs, read from the start (a rotated
// journal's: from its first live record), hold record seq with hash.
func holdsRecord(recs []JournalRecord, seq int64, hash string) bool {
	i := seq - JournalFrom(recs)
	return i >= 0 && i < int64(len(recs)) && recs[i].Seq == seq && recs[i].Hash == hash
}

// lossProblem says what became of the records k verified: good are the
// journal's records that still chain from its start.
func lossProblem(k Witness, good []JournalRecord) *JournalProblem {
	n := int64(0)
	if len(good) > 0 {
		n = good[len(good)-1].Seq
	}
	saw := verifiedWhat(k)
	if n < k.Records {
		what := missing(n+1, k.Records) + " missing"
		if n == 0 {
			what = "the journal is missing or empty"
		}
		return &JournalProblem{Index: int(n) + 1, Seq: n + 1, Kind: TamperDeleted, Detail: what + ": " + saw}
	}
	return &JournalProblem{Index: int(k.Records), Seq: k.Records, Kind: TamperEdited, Detail: fmt.Sprintf(
		"it is not the record %s there: the journal was rewritten up to it", saw)}
}

// clone is a copy of w that shares nothing with it.
func (w Witness) clone() Witness {
	c := w
	c.Halts, c.Released, c.Revoked = slices.Clone(w.Halts), slices.Clone(w.Released), slices.Clone(w.Revoked)
	if w.Terms != nil {
		c.Terms = make(map[string]string, len(w.Terms))
		for id, t := range w.Terms {
			c.Terms[id] = t
		}
	}
	return c
}

// readOn chains the records after k onto it, up to head; ok is false when
// they do not chain (read from the start instead).
func readOn(ctx context.Context, j Journal, k Witness, head JournalHead) (Witness, bool, error) {
	recs, err := j.JournalRecords(ctx, k.Fleet, k.Records-1)
	if err != nil {
		return Witness{}, false, err
	}
	if len(recs) == 0 || recs[0].Seq != k.Records || recs[0].Hash != k.Hash {
		return Witness{}, false, nil
	}
	if got, err := JournalHash(recs[0].Prev, recs[0].Raw); err != nil || got != k.Hash {
		return Witness{}, false, nil
	}
	w := k.clone()
	prev, seq := k.Hash, k.Records
	for _, r := range recs[1:] {
		if r.Seq > head.Records {
			break // past the head: not acknowledged yet
		}
		got, err := JournalHash(r.Prev, r.Raw)
		if err != nil || r.Seq != seq+1 || r.Prev != prev || got != r.Hash {
			return Witness{}, false, nil
		}
		w.apply(r)
		prev, seq = r.Hash, r.Seq
	}
	if seq != head.Records || prev != head.Hash {
		return Witness{}, false, nil
	}
	w.Records, w.Hash = seq, prev
	return w, true, nil
}

// Unwitnessed names the fleet's records that changed outside a person's
// command — what the gate ignores: authorizations no journal record
// witnesses (or whose terms changed), halts the store shows lifted that no
// journaled release lifted, and halts in force that were never journaled
// (they hold; they are named).
func Unwitnessed(ctx context.Context, st Store, fleet string) ([]string, error) {
	w, err := ReadWitness(ctx, st, fleet, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	auths, err := st.ListAuthorizations(ctx, fleet)
	if err != nil {
		return nil, err
	}
	loc := func(kind, id string) string {
		if l, ok := st.(interface{ RecordLocation(kind, id string) string }); ok {
			return l.RecordLocation(kind, id)
		}
		return kind + " " + id
	}
	for _, a := range auths {
		// A journaled revocation only takes away: the file not saying so
		// is no change to report. A broken chain is the journal's own
		// problem (supervise verify names it); the records read before it
		// still say which files changed.
		terms := w
		terms.Problem = nil
		if ok, why := terms.Standing(a); !ok && why != IgnoredRevoked {
			out = append(out, fmt.Sprintf("%s: %s: ignored", loc("authorization", a.ID), why))
		}
	}
	halts, err := st.ListHalts(ctx, fleet)
	if err != nil {
		return nil, err
	}
	journaled := map[string]bool{}
	for _, h := range w.Halts {
		journaled[h.ID] = true
	}
	for _, id := range w.Released {
		journaled[id] = true
	}
	for _, h := range halts {
		inForce := false
		if cur, ok, err := st.ActiveHalt(ctx, fleet, h.Agent); err == nil && ok && cur.ID == h.ID {
			inForce = true
		}
		switch {
		case !inForce && !slices.Contains(w.Released, h.ID) && journaled[h.ID]:
			out = append(out, fmt.Sprintf("%s: the halt on %s is lifted in the store, and no journaled release lifted it (a hand-edited release): the gate still holds it", loc("halt", h.ID), h.Agent))
		case inForce && !journaled[h.ID]:
			out = append(out, fmt.Sprintf("%s: the halt on %s was never journaled (it holds all the same)", loc("halt", h.ID), h.Agent))
		}
	}
	return out, nil
}

// RecordLocation implements the optional location of a record: its file.
func (l *Local) RecordLocation(kind, id string) string {
	switch kind {
	case "authorization":
		return l.authPath(id)
	case "halt":
		return l.haltPath(id)
	}
	return kind + " " + id
}

// HaltInForce is the halt in force on agent (run: its run id) in fleet:
// the store's, or else one the journal witnesses that no journaled release
// lifted — a halt lifted by hand in the store still holds. known is what
// was read of the journal before (Machine); the witness read is returned
// for it.
func HaltInForce(ctx context.Context, st Store, fleet, agent, run string, known *Witness) (Halt, bool, *Witness, error) {
	h, ok, err := st.ActiveHalt(ctx, fleet, agent)
	if err != nil {
		return Halt{}, false, nil, err
	}
	w, err := ReadWitness(ctx, st, fleet, known)
	if err != nil {
		if ok {
			return h, true, nil, nil
		}
		return Halt{}, false, nil, err
	}
	if ok {
		return h, true, &w, nil
	}
	h, ok = w.HaltOn(agent, run)
	return h, ok, &w, nil
}

// AuthorizationRecord is the journal record that witnesses a: laserbrain
// authorize appends it before it stores a.
func AuthorizationRecord(a Authorization) JournalRecord {
	data, _ := json.Marshal(a) // strings, times and numbers: cannot fail
	return JournalRecord{At: JournalTime(a.Created), Fleet: a.Fleet, Kind: JournalAuthorize, Agent: a.Agent,
		Text: "authorized by " + a.By + ": " + a.Action, Data: data}
}
