package supervise

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A supervisor resumes from its fleet's journal, and a start that read and
// verified the whole journal every time cost more the longer the fleet was
// supervised (a supervisor run from cron read every round every run). So
// every CheckpointEvery records a supervisor journals a checkpoint: what
// the records before it amount to (resumeState), as a record of the chain
// like any other. A start reads the journal from the last checkpoint the
// round counter has seen — the counter's mark is at or past it — verifies
// the records from it to the head (fleet.VerifyJournalFrom: the checkpoint
// hashes to what its successor names, and so on to the head, which the
// counter witnesses), and applies them on top of it. A checkpoint changed
// in place no longer hashes; one rewritten with every later record, the
// head and the counter is a consistent forgery, as a journal rewritten
// whole is. The records before the checkpoint are not read at a start:
// laserbrain supervise verify (fleet.CheckJournal) still checks them all.
var CheckpointEvery int64 = 64

// resumeState is what the journal's records amount to for a supervisor
// that resumes from them: the data of a checkpoint record.
type resumeState struct {
	// Round is the last round journaled; Seen the last record folded in.
	Round int64 `json:"round"`
	Seen  int64 `json:"seen"`
	// Asked are the questions asked, in the order first asked; Answered
	// those whose command exited 0; Questions the rest, as last asked.
	Asked     []string     `json:"asked"`
	Answered  []string     `json:"answered"`
	Questions []Escalation `json:"questions"`
	// Halts are the halts journaled that the store may not have yet (put
	// again at a start; idempotent on the id).
	Halts []fleet.Halt `json:"halts"`
	// Agents is every agent as the journal last recorded it, and Route
	// the last journaled route's digest: a round journals what differs.
	Agents map[string]agentLine `json:"agents"`
	Route  string               `json:"route"`
	// Collisions are the collisions the journal last recorded standing
	// (a round journals those that began and ended since).
	Collisions collisionSet `json:"collisions"`

	// lastCheckpoint is the seq of the last checkpoint folded in, its
	// size, and the bytes of the records folded in since.
	lastCheckpoint int64
	checkpointSize int
	since          int
}

// agentLine is one agent as a round's journal record has it.
type agentLine struct {
	Agent    string   `json:"agent"`
	Steps    int      `json:"steps"`
	Verdict  *string  `json:"verdict"`
	Drifting bool     `json:"drifting"`
	Status   string   `json:"status"`
	Advice   string   `json:"advice,omitempty"`
	Files    int      `json:"files,omitempty"`
	Catches  []string `json:"catches,omitempty"`
}

func (a agentLine) same(b agentLine) bool {
	return a.Agent == b.Agent && a.Steps == b.Steps && (a.Verdict == nil) == (b.Verdict == nil) &&
		(a.Verdict == nil || *a.Verdict == *b.Verdict) && a.Drifting == b.Drifting && a.Status == b.Status && a.Advice == b.Advice &&
		a.Files == b.Files && slices.Equal(a.Catches, b.Catches)
}

// roundData is a round record's data: the agents whose line changed since
// the last journaled round (a record from before checkpoints lists them
// all, which reads the same), the collisions that began and ended since
// then, and the round's decisions. The route is not repeated: it follows
// from the collisions and the agents' lines (catches, steps, verdicts),
// and each halt and question it led to is a record of its own with its
// route; its digest says whether it changed.
type roundData struct {
	Agents    []agentLine `json:"agents"`
	Unchanged int         `json:"unchanged"`
	// Began and Ended are the collisions that began and ended since the
	// last journaled round; Standing counts those standing after it.
	Began    [][2]string `json:"collisions_began,omitempty"`
	Ended    [][2]string `json:"collisions_ended,omitempty"`
	Standing int         `json:"collisions_standing"`
	// Collisions and Route are what records from before the deltas held:
	// every collision standing, and the whole route.
	Collisions  [][2]string `json:"collisions,omitempty"`
	Route       any         `json:"route,omitempty"`
	RouteDigest string      `json:"route_digest,omitempty"`
	Halts       []string    `json:"halts"`
	Escalations []string    `json:"escalations"`
	// Advice is where records from before checkpoints kept the advice.
	Advice map[string]string `json:"advice,omitempty"`
	Self   string            `json:"self"`
}

// apply folds one record in.
func (st *resumeState) apply(r fleet.JournalRecord) {
	st.Round = max(st.Round, r.Round)
	st.Seen = max(st.Seen, r.Seq)
	st.since += len(r.Raw)
	switch r.Kind {
	case fleet.JournalEscalation:
		var e Escalation
		if json.Unmarshal(r.Data, &e) != nil || e.ID == "" {
			return
		}
		if !slices.Contains(st.Asked, e.ID) {
			st.Asked = append(st.Asked, e.ID)
		}
		if slices.Contains(st.Answered, e.ID) {
			return
		}
		if i := slices.IndexFunc(st.Questions, func(q Escalation) bool { return q.ID == e.ID }); i >= 0 {
			st.Questions[i] = e
		} else {
			st.Questions = append(st.Questions, e)
		}
	case fleet.JournalAnswer:
		var a struct {
			ID string `json:"id"`
			Resolution
		}
		if json.Unmarshal(r.Data, &a) == nil && a.Delivered() {
			if !slices.Contains(st.Answered, a.ID) {
				st.Answered = append(st.Answered, a.ID)
			}
			st.Questions = slices.DeleteFunc(st.Questions, func(q Escalation) bool { return q.ID == a.ID })
		}
	case fleet.JournalHalt:
		var h fleet.Halt
		if json.Unmarshal(r.Data, &h) == nil && h.ID != "" {
			st.Halts = append(st.Halts, h)
		}
	case fleet.JournalCheckpoint:
		st.lastCheckpoint, st.checkpointSize, st.since = r.Seq, len(r.Raw), 0
	case fleet.JournalRound:
		var d roundData
		if json.Unmarshal(r.Data, &d) != nil {
			return
		}
		if st.Agents == nil {
			st.Agents = map[string]agentLine{}
		}
		for _, a := range d.Agents {
			if adv, ok := d.Advice[a.Agent]; ok && a.Advice == "" {
				a.Advice = adv
			}
			st.Agents[a.Agent] = a
		}
		st.Route = d.RouteDigest
		st.applyCollisions(d)
	}
}

// applyCollisions folds a round's collisions in: the whole set in a record
// from before the deltas, else what began and ended.
func (st *resumeState) applyCollisions(d roundData) {
	if d.Collisions != nil {
		st.Collisions = pairsOf(d.Collisions)
		return
	}
	if st.Collisions == nil {
		st.Collisions = collisionSet{}
	}
	for _, p := range d.Ended {
		delete(st.Collisions, pairKey(p[0], p[1]))
	}
	for _, p := range d.Began {
		st.Collisions[pairKey(p[0], p[1])] = true
	}
}

// loadJournal reads the fleet's journal back for a start: from the last
// checkpoint the round counter has seen when there is one (verifying the
// records from it on), else whole (verifying it all, and against the
// counter). problem is the first thing wrong with what was read.
func (s *Supervisor) loadJournal(ctx context.Context) (st resumeState, problem *fleet.JournalProblem, err error) {
	head, err := s.o.Fleet.JournalHead(ctx, s.fleet)
	if err != nil {
		return st, nil, fmt.Errorf("reading the journal: %w", err)
	}
	limit := head.Records
	var mark *fleet.RoundMark
	if rl, ok := s.o.Fleet.(fleet.Rounds); ok {
		m, err := rl.LastRound(ctx, s.fleet)
		if err != nil {
			return st, nil, fmt.Errorf("reading the fleet's round counter: %w", err)
		}
		mark, limit = &m, min(limit, m.Records)
	}
	var recs []fleet.JournalRecord
	cp := -1
	for window := 4 * CheckpointEvery; ; window *= 4 {
		after := max(0, head.Records-window)
		if recs, err = s.o.Fleet.JournalRecords(ctx, s.fleet, after); err != nil {
			return st, nil, fmt.Errorf("reading the journal: %w", err)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if r := recs[i]; r.Kind == fleet.JournalCheckpoint && r.Seq > after && r.Seq <= limit {
				cp = i
				break
			}
		}
		if cp >= 0 || after == 0 {
			break
		}
	}
	if cp >= 0 && json.Unmarshal(recs[cp].Data, &st) == nil {
		tail := recs[cp:]
		if _, problem = fleet.VerifyJournalFrom(tail, head); problem == nil && mark != nil {
			problem = checkMarkFrom(tail, *mark)
		}
		st.Seen = tail[0].Seq - 1
		for _, r := range tail {
			st.apply(r)
		}
		return st, problem, nil
	}
	if cp >= 0 { // a checkpoint that is not one: read the journal whole
		if recs, err = s.o.Fleet.JournalRecords(ctx, s.fleet, 0); err != nil {
			return st, nil, fmt.Errorf("reading the journal: %w", err)
		}
	}
	st = resumeState{}
	if _, problem = fleet.VerifyJournal(recs, head); problem == nil && mark != nil {
		problem = fleet.CheckMark(recs, *mark)
	}
	for _, r := range recs {
		st.apply(r)
	}
	return st, problem, nil
}

// checkMarkFrom holds the records from a checkpoint on to the round
// counter: the record the counter saw last is among them with the hash it
// recorded (the checkpoint was chosen at or before it).
func checkMarkFrom(tail []fleet.JournalRecord, mark fleet.RoundMark) *fleet.JournalProblem {
	i := mark.Records - tail[0].Seq
	if i < 0 || i >= int64(len(tail)) {
		return &fleet.JournalProblem{Index: int(mark.Records), Seq: mark.Records, Kind: fleet.TamperDeleted, Detail: fmt.Sprintf(
			"record %d, the last one the fleet's round counter saw, is missing: the journal was cut short", mark.Records)}
	}
	if tail[i].Hash != mark.Hash {
		return &fleet.JournalProblem{Index: int(mark.Records), Seq: mark.Records, Kind: fleet.TamperEdited, Detail: fmt.Sprintf(
			"it is not the record the fleet's round counter saw there (hash %s): the journal was rewritten up to it", text.Clip(mark.Hash, 12))}
	}
	return nil
}

// checkpoint journals what the records so far amount to, when
// CheckpointEvery records went by since the last one and they take at
// least as many bytes as it did (a large fleet's checkpoint is large: the
// journal grows by at most as much again in checkpoints as in records);
// halts the store has are left out of it (they need no putting again).
func (s *Supervisor) checkpoint(ctx context.Context) error {
	if s.o.ReadOnly || s.fold.Seen-s.fold.lastCheckpoint < CheckpointEvery || s.fold.since < s.fold.checkpointSize {
		return nil
	}
	if len(s.fold.Halts) > 0 {
		stored, err := s.o.Fleet.ListHalts(ctx, s.fleet)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, h := range stored {
			have[h.ID] = true
		}
		s.fold.Halts = slices.DeleteFunc(s.fold.Halts, func(h fleet.Halt) bool { return have[h.ID] })
	}
	data, err := json.Marshal(s.fold)
	if err != nil {
		return err
	}
	_, err = s.journal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalCheckpoint,
		Round: s.round, Text: fmt.Sprintf("checkpoint: records 1–%d summed up (round %d)", s.fold.Seen, s.fold.Round), Data: data})
	return err
}
