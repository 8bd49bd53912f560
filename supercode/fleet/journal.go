package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/text"
)

// JournalRecord is one entry of the supervisor's journal: a round's
// decisions, a halt, a release, an escalation and what became of it.
//
// The chain is the reference's audit chain (laserbrain-sdk export_audit /
// verify_audit): every record carries prev, the hash of the record before
// it ("" for the first), and hash = SHA-256, in hex, of prev followed by
// the record without its hash key, written as Python's
// json.dumps(record, sort_keys=True, separators=(",", ":")) — keys sorted,
// no spaces, non-ASCII escaped as \uXXXX, numbers as Python writes them. A
// journal read back as a list of dicts therefore passes the reference's
// verify_audit, and the hash depends only on the record's content, never on
// how a backend stores it.
type JournalRecord struct {
	// Seq numbers the fleet's records 1, 2, 3, … without a gap.
	Seq int64 `json:"seq"`
	// At is when it was appended, UTC, "2006-01-02T15:04:05.000Z".
	At    string `json:"at"`
	Fleet string `json:"fleet"`
	// Kind is one of the Journal* kinds.
	Kind  string `json:"kind"`
	Round int64  `json:"round,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Text says what happened, for a person reading the log.
	Text string `json:"text,omitempty"`
	// Data is the decision as data (a round's route, an escalation's
	// question, a command's exit status).
	Data json.RawMessage `json:"data,omitempty"`
	Prev string          `json:"prev"`
	Hash string          `json:"hash"`

	// Raw is the record exactly as stored, without its line end: what
	// verification hashes. A backend must hand back the bytes it was given
	// (a text column, not jsonb), so that any change to them is evident.
	Raw []byte `json:"-"`
}

// Journal record kinds.
const (
	JournalRound      = "round"      // a round's decisions: route, advice, self-check
	JournalHalt       = "halt"       // an agent halted
	JournalRelease    = "release"    // a halt lifted by a person
	JournalEscalation = "escalation" // a question sent to a person (before the command runs)
	JournalAnswer     = "answer"     // what the escalation command did: exit status, output
	JournalStart      = "start"      // a supervisor started (or resumed) on the fleet
	JournalStop       = "stop"       // a supervisor stopped, after its last round
	// JournalCheckpoint sums up every record before it (what a supervisor
	// resumes from), so that a start reads and verifies only the records
	// from the last checkpoint the round counter has seen on.
	JournalCheckpoint = "checkpoint"
	JournalAuthorize  = "authorize" // a person authorized one action (laserbrain authorize, laserbrain ui)
	// JournalAct witnesses laserbrain act: an agent asked the supervisor to
	// carry a command out outside its boundary; Data says what, on which
	// run, by what leave (the policy's rule or a person's authorization),
	// or why it was refused, and how it ended.
	JournalAct = "act"
	// JournalAccept starts a new chain: a person accepted the fleet's
	// journal as it stood after a loss or a break (laserbrain supervise
	// accept-journal); the old one is set aside.
	JournalAccept = "accept"
)

// JournalHead is where a fleet's chain ends, as the store recorded it with
// the last acknowledged append. It is kept apart from the records, so that
// records cut from the end of the journal are evident too.
type JournalHead struct {
	Records int64  `json:"records"`
	Hash    string `json:"hash"`
}

// Journal is the supervisor's append-only, hash-chained journal, one chain
// per fleet.
type Journal interface {
	// AppendJournal chains rec after the last record of rec.Fleet's journal
	// — it sets Seq, At (when empty), Prev, Hash and Raw — stores it and
	// moves the head, as one step against every other writer: records from
	// any number of supervisors form one line, never a fork.
	AppendJournal(ctx context.Context, rec JournalRecord) (JournalRecord, error)
	// JournalRecords reads a fleet's records with Seq > after, oldest first,
	// each with Raw, as stored and unchecked (VerifyJournal checks them). A
	// line that is not a record comes back with only Raw set.
	JournalRecords(ctx context.Context, fleet string, after int64) ([]JournalRecord, error)
	// JournalHead is the fleet's head; zero before the first append.
	JournalHead(ctx context.Context, fleet string) (JournalHead, error)
}

// journalTime is the format of JournalRecord.At.
const journalTime = "2006-01-02T15:04:05.000Z"

// JournalTime formats t as JournalRecord.At.
func JournalTime(t time.Time) string { return t.UTC().Format(journalTime) }

// SealJournal fills in rec's chain fields after prev (the hash of the record
// before it, "" for the first) and renders it: Prev, Hash and Raw. Backends
// call it inside their append, after choosing Seq.
func SealJournal(rec JournalRecord, prev string) (JournalRecord, error) {
	rec.Prev, rec.Hash, rec.Raw = prev, "", nil
	body, err := json.Marshal(rec)
	if err != nil {
		return JournalRecord{}, fmt.Errorf("journal record: %w", err)
	}
	h, err := JournalHash(prev, body)
	if err != nil {
		return JournalRecord{}, err
	}
	rec.Hash = h
	raw, err := json.Marshal(rec)
	if err != nil {
		return JournalRecord{}, err
	}
	rec.Raw = raw
	return rec, nil
}

// JournalHash is a record's link: SHA-256 of prev and the canonical form
// of the record's JSON without its "hash" key.
func JournalHash(prev string, record []byte) (string, error) {
	v, err := grammar.Parse(record)
	if err != nil {
		return "", fmt.Errorf("not a JSON record: %w", err)
	}
	if v.Kind != grammar.Object {
		return "", fmt.Errorf("not a JSON object")
	}
	var b strings.Builder
	b.WriteString(prev)
	writeCanonical(&b, v, true)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:]), nil
}

// writeCanonical writes v as Python's json.dumps(v, sort_keys=True,
// separators=(",", ":")) does, leaving out the top object's "hash".
func writeCanonical(b *strings.Builder, v grammar.Value, top bool) {
	switch v.Kind {
	case grammar.Null:
		b.WriteString("null")
	case grammar.Bool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case grammar.Number:
		b.WriteString(grammar.PythonNumber(v.Num))
	case grammar.String:
		grammar.WritePythonString(b, v.Str)
	case grammar.Array:
		b.WriteByte('[')
		for i, item := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, item, false)
		}
		b.WriteByte(']')
	case grammar.Object:
		members := slices.Clone(v.Members)
		// Python sorts str keys by code point; UTF-8 bytes sort the same.
		slices.SortFunc(members, func(x, y grammar.Member) int { return strings.Compare(x.Key, y.Key) })
		b.WriteByte('{')
		first := true
		for _, m := range members {
			if top && m.Key == "hash" {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			grammar.WritePythonString(b, m.Key)
			b.WriteByte(':')
			writeCanonical(b, m.Value, false)
		}
		b.WriteByte('}')
	}
}

// JournalProblem is the first thing wrong with a journal.
type JournalProblem struct {
	// Index is the 1-based position of the first bad record in the journal
	// as read (its line, for the local store); Seq is the seq that belongs
	// there.
	Index int   `json:"index"`
	Seq   int64 `json:"seq"`
	// Kind is edited, deleted, inserted, reordered or corrupt.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

func (p *JournalProblem) Error() string {
	return fmt.Sprintf("record %d (seq %d) %s: %s", p.Index, p.Seq, p.Kind, p.Detail)
}

// Journal problem kinds.
const (
	TamperEdited    = "edited"
	TamperDeleted   = "deleted"
	TamperInserted  = "inserted"
	TamperReordered = "reordered"
	TamperCorrupt   = "corrupt"
)

// VerifyJournal checks a whole journal, read from the start, against its
// head, and returns the first bad record, or nil when the chain holds. One
// change is classified precisely: a record edited in place (its hash no
// longer matches, or was rewritten so that the next record's prev does not),
// records deleted (a seq gap whose prev names a record that is gone, or
// records the head counts missing from the end), a record inserted (a seq
// the chain already had, or a record the next one skips) and records
// reordered (a prev naming a record that comes later). Like any chain
// without a key, it makes a change evident; a forger who rewrites every
// later hash and the head too is not stopped.
//
// unacknowledged counts records past the head that chain correctly: a
// writer died after writing them and before moving the head. They are not
// a problem.
//
// A rotated journal starts at the checkpoint its last rotation kept: it is
// checked from there (the records before are the archive's: CheckArchive),
// and holds only when a rotation record in it archived exactly the
// records before its first.
func VerifyJournal(recs []JournalRecord, head JournalHead) (unacknowledged int, problem *JournalProblem) {
	if _, rotated, p := liveRotation(recs); p != nil {
		return 0, p
	} else if rotated {
		return verifyChain(recs, recs[0].Seq, recs[0].Prev, head)
	}
	return verifyChain(recs, 1, "", head)
}

// VerifyJournalFrom checks the journal from one of its records on: recs
// starts with that record (a checkpoint), whose own content must match its
// hash and whose prev is taken as it stands — the records before it are
// not read — and goes on to the end, checked as VerifyJournal checks a
// whole journal. A change before the first record is left to
// VerifyJournal (laserbrain supervise verify).
func VerifyJournalFrom(recs []JournalRecord, head JournalHead) (unacknowledged int, problem *JournalProblem) {
	if len(recs) == 0 {
		return VerifyJournal(nil, head)
	}
	var probe struct {
		Seq  int64  `json:"seq"`
		Prev string `json:"prev"`
	}
	if json.Unmarshal(recs[0].Raw, &probe) != nil || probe.Seq < 1 {
		return 0, &JournalProblem{Index: int(recs[0].Seq), Seq: recs[0].Seq, Kind: TamperCorrupt, Detail: fmt.Sprintf("not a journal record: %q", text.Clip(string(recs[0].Raw), 80))}
	}
	return verifyChain(recs, probe.Seq, probe.Prev, head)
}

// verifyChain checks recs, which should be seq first, first+1, … after a
// record hashing to prev.
func verifyChain(recs []JournalRecord, first int64, prev string, head JournalHead) (unacknowledged int, problem *JournalProblem) {
	hashes := make(map[string]int, len(recs)) // hash → index
	for i := range recs {
		if recs[i].Hash != "" {
			if _, dup := hashes[recs[i].Hash]; !dup {
				hashes[recs[i].Hash] = i
			}
		}
	}
	for i := range recs {
		r := &recs[i]
		want := first + int64(i)
		// at names the bad record by its 0-based index.
		at := func(idx int, seq int64, kind, format string, a ...any) (int, *JournalProblem) {
			return 0, &JournalProblem{Index: int(first) + idx, Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, a...)}
		}
		var probe struct {
			Seq  *int64  `json:"seq"`
			Prev *string `json:"prev"`
			Hash *string `json:"hash"`
		}
		if json.Unmarshal(r.Raw, &probe) != nil || probe.Seq == nil || probe.Prev == nil || probe.Hash == nil {
			return at(i, want, TamperCorrupt, "not a journal record: %q", text.Clip(string(r.Raw), 80))
		}
		seq := *probe.Seq
		got, err := JournalHash(*probe.Prev, r.Raw)
		if err != nil {
			return at(i, want, TamperCorrupt, "%v", err)
		}
		if got != *probe.Hash {
			return at(i, seq, TamperEdited, "its content no longer matches its hash (changed after it was written)")
		}
		if *probe.Prev != prev {
			j, known := hashes[*probe.Prev]
			switch {
			case known && j > i:
				return at(i, seq, TamperReordered, "it follows seq %d, which comes after it", recs[j].Seq)
			case known && j < i-1:
				if orig := hashes[*probe.Hash]; orig < i {
					return at(i, seq, TamperInserted, "it is a copy of the record at %d", int(first)+orig)
				}
				return at(j+1, recs[j+1].Seq, TamperInserted, "seq %d follows seq %d directly, so the records between them were inserted", seq, recs[j].Seq)
			case seq > want && !known:
				return at(i, want, TamperDeleted, "%s missing: seq jumps to %d, whose prev names a record that is gone", missing(want, seq-1), seq)
			case i > 0 && !known:
				// The record before this one hashes consistently, but not to
				// what this one says it follows: it was changed and its hash
				// rewritten.
				return at(i-1, recs[i-1].Seq, TamperEdited, "it was changed and its hash rewritten (seq %d follows another hash)", seq)
			default:
				return at(i, seq, TamperCorrupt, "its prev matches no record before it")
			}
		}
		if seq != want {
			if seq < want {
				return at(i, seq, TamperInserted, "seq %d repeats (expected %d)", seq, want)
			}
			return at(i, want, TamperDeleted, "seq jumps from %d to %d", want-1, seq)
		}
		prev = *probe.Hash
		if want == head.Records && head.Hash != "" && prev != head.Hash {
			return at(i, want, TamperEdited, "it was changed and its hash rewritten (the head records another hash for it)")
		}
	}
	n := first - 1 + int64(len(recs)) // the last seq read
	switch {
	case n < head.Records:
		return 0, &JournalProblem{Index: int(n) + 1, Seq: n + 1, Kind: TamperDeleted,
			Detail: fmt.Sprintf("%s missing from the end (the head counts %d)", missing(n+1, head.Records), head.Records)}
	case n > head.Records:
		return int(n - head.Records), nil
	}
	return 0, nil
}

// missing names the records from…to as the subject of "missing":
// "record 7 is", "records 7–9 are".
func missing(from, to int64) string {
	if from == to {
		return fmt.Sprintf("record %d is", from)
	}
	return fmt.Sprintf("records %d–%d are", from, to)
}

// ErrJournalBroken is wrapped by the refusal of a writer that will not
// append to a journal whose chain does not hold (see JournalBrokenError).
var ErrJournalBroken = errors.New("the journal's chain does not hold")

// JournalBrokenError is that refusal: the fleet, the first problem found
// and where the journal is kept.
type JournalBrokenError struct {
	Fleet    string
	Problem  *JournalProblem
	Location string
}

func (e *JournalBrokenError) Error() string {
	where := ""
	if e.Location != "" {
		where = " (" + e.Location + ")"
	}
	return fmt.Sprintf("the journal of fleet %s%s is broken at %v; nothing was appended to it — run laserbrain supervise verify, and restore the journal or move it aside", e.Fleet, where, e.Problem)
}

func (e *JournalBrokenError) Unwrap() error { return ErrJournalBroken }

// JournalLocator is an optional method of a store: where a fleet's journal
// is kept, in words a person can follow (a file, a table).
type JournalLocator interface {
	JournalLocation(fleet string) string
}

// JournalLocation is where st keeps fleet's journal ("" when it does not
// say).
func JournalLocation(st any, fleet string) string {
	if l, ok := st.(JournalLocator); ok {
		return l.JournalLocation(fleet)
	}
	return ""
}

// CheckMark checks a journal read whole, whose chain holds, against the
// fleet's round counter: the journal must hold at least the records the
// counter saw at the last round's end, the last of them with the hash it
// recorded — and, once any round ran, at least one record (a supervisor
// journals its start before its first round). This catches what the chain
// and head alone cannot: the journal deleted with its head, or cut short
// and its head rewritten to match. It cannot catch what the counter did
// not see (records appended by a writer that died before ending its round
// or taking the lock), nor a journal, head and counter rewritten together:
// without a key, whoever can write all three can forge a consistent
// history.
func CheckMark(recs []JournalRecord, mark RoundMark) *JournalProblem {
	base := JournalFrom(recs) - 1 // records archived before the first read
	if base > 0 && mark.Records <= base {
		return nil // in the archive: CheckArchive holds it
	}
	n := base + int64(len(recs))
	switch {
	case mark.Round == 0 && mark.Records == 0:
		return nil
	case n == 0 && mark.Records == 0:
		return &JournalProblem{Index: 1, Seq: 1, Kind: TamperDeleted, Detail: fmt.Sprintf(
			"the journal is missing: the fleet's round counter says round %d ran, and the journal holds no record (a supervisor journals its start before its first round)", mark.Round)}
	case n < mark.Records:
		what := missing(n+1, mark.Records) + " missing from the end"
		if n == 0 {
			what = "the journal is missing"
		}
		return &JournalProblem{Index: int(n) + 1, Seq: n + 1, Kind: TamperDeleted, Detail: fmt.Sprintf(
			"%s: the fleet's round counter saw %s (head %s) %s", what, text.Plural(mark.Records, "record"), text.Clip(mark.Hash, 12), markWhen(mark))}
	case mark.Records > 0 && recs[mark.Records-base-1].Hash != mark.Hash:
		return &JournalProblem{Index: int(mark.Records), Seq: mark.Records, Kind: TamperEdited, Detail: fmt.Sprintf(
			"it is not the record the fleet's round counter saw there %s (hash %s): the journal was rewritten up to it", markWhen(mark), text.Clip(mark.Hash, 12))}
	}
	return nil
}

// markWhen says when the counter saw the journal.
func markWhen(m RoundMark) string {
	if m.Round == 0 {
		return "before any round"
	}
	return fmt.Sprintf("by the end of round %d", m.Round)
}

// JournalCheck is a fleet's journal read whole and checked.
type JournalCheck struct {
	Records []JournalRecord
	Head    JournalHead
	// Mark is the fleet's round counter; nil for a store without one.
	Mark *RoundMark
	// Unacknowledged counts records past the head that chain correctly.
	Unacknowledged int
	// Problem is the first thing wrong, nil when the journal holds.
	Problem *JournalProblem
}

// CheckJournal reads fleet's journal whole, with its head and (when st
// keeps one) its round counter, and checks the chain (VerifyJournal) and
// then the counter (CheckMark).
func CheckJournal(ctx context.Context, st Journal, fleet string) (JournalCheck, error) {
	var c JournalCheck
	var err error
	if rl, ok := st.(Rounds); ok {
		m, err := rl.LastRound(ctx, fleet)
		if err != nil {
			return c, fmt.Errorf("reading the fleet's round counter: %w", err)
		}
		c.Mark = &m
	}
	if c.Head, err = st.JournalHead(ctx, fleet); err != nil {
		return c, err
	}
	if c.Records, err = st.JournalRecords(ctx, fleet, 0); err != nil {
		return c, err
	}
	c.Unacknowledged, c.Problem = VerifyJournal(c.Records, c.Head)
	if c.Problem == nil && c.Mark != nil {
		c.Problem = CheckMark(c.Records, *c.Mark)
	}
	return c, nil
}

// CheckJournalTail is the check a writer makes before it appends, reading
// only the journal's end: the record the head names is there and hashes to
// the head, and the record the round counter names is there and hashes to
// what the counter recorded. An edit further back is left to CheckJournal
// (laserbrain supervise verify, and a supervisor when it starts).
func CheckJournalTail(ctx context.Context, st Journal, fleet string) (*JournalProblem, error) {
	var mark RoundMark
	if rl, ok := st.(Rounds); ok {
		m, err := rl.LastRound(ctx, fleet)
		if err != nil {
			return nil, fmt.Errorf("reading the fleet's round counter: %w", err)
		}
		mark = m
	}
	head, err := st.JournalHead(ctx, fleet)
	if err != nil {
		return nil, err
	}
	from := head.Records
	if mark.Records > 0 && mark.Records < from {
		from = mark.Records
	}
	if from == 0 {
		if mark.Round == 0 && mark.Records == 0 {
			return nil, nil
		}
		recs, err := st.JournalRecords(ctx, fleet, 0)
		if err != nil {
			return nil, err
		}
		if _, p := VerifyJournal(recs, head); p != nil {
			return p, nil
		}
		return CheckMark(recs, mark), nil
	}
	recs, err := st.JournalRecords(ctx, fleet, from-1)
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]*JournalRecord, len(recs))
	for i := range recs {
		if recs[i].Seq > 0 {
			bySeq[recs[i].Seq] = &recs[i]
		}
	}
	// holds checks that record seq is there and hashes to want.
	holds := func(seq int64, want, whose string) *JournalProblem {
		r := bySeq[seq]
		if r == nil {
			return &JournalProblem{Index: int(seq), Seq: seq, Kind: TamperDeleted, Detail: fmt.Sprintf(
				"record %d, the last one %s counts, is missing: the journal was cut short", seq, whose)}
		}
		if got, err := JournalHash(r.Prev, r.Raw); err != nil || got != r.Hash || r.Hash != want {
			return &JournalProblem{Index: int(seq), Seq: seq, Kind: TamperEdited, Detail: fmt.Sprintf(
				"its content no longer hashes to what %s recorded for it", whose)}
		}
		return nil
	}
	if head.Records > 0 {
		if p := holds(head.Records, head.Hash, "the head"); p != nil {
			return p, nil
		}
	}
	switch {
	case mark.Records > head.Records:
		return &JournalProblem{Index: int(head.Records) + 1, Seq: head.Records + 1, Kind: TamperDeleted, Detail: fmt.Sprintf(
			"%s missing from the end: the fleet's round counter saw %s %s, the head counts %d",
			missing(head.Records+1, mark.Records), text.Plural(mark.Records, "record"), markWhen(mark), head.Records)}, nil
	case mark.Records > 0:
		if p := holds(mark.Records, mark.Hash, "the fleet's round counter"); p != nil {
			return p, nil
		}
	}
	return nil, nil
}

// JournalRestarter is an optional method of a store: a person's new start
// of a fleet's journal, after laserbrain supervise verify showed it broken
// or short of what this machine verified.
type JournalRestarter interface {
	// RestartJournal sets the fleet's journal aside whole — its records,
	// its head and the round counter's mark, kept under a name of their
	// own as evidence — and starts a new chain whose first record is first
	// (sealed here as seq 1). The round counter keeps its last round and
	// marks the new record, so rounds go on being numbered after it. It
	// returns the record and where the old journal was set aside.
	RestartJournal(ctx context.Context, fleet string, first JournalRecord) (JournalRecord, string, error)
}
