package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Rounds numbers a fleet's supervisor rounds across supervisors, on any
// number of machines: StartRound waits until no other supervisor of the
// fleet is in a round and returns the last round any of them took; the
// caller runs its round after that one (or after its own count, when that
// is ahead) and ends it with the round's number, which lets the next
// supervisor in. One supervisor at a time observes, decides and journals,
// so a fleet's rounds are numbered once, never twice and never backwards.
// A supervisor that dies mid-round lets the next in (a file lock or a
// database session goes with the process); the round it did not end is
// taken again.
//
// The counter is also the journal's witness: end records, beside the
// round, where the fleet's journal head stood when the round ended
// (RoundMark), and LastRound reads it back. It is kept apart from the
// journal's records and head, so a journal deleted, cut short or rewritten
// from an earlier record is evident against it (CheckJournal). end(round)
// with a round at or below the last moves only the mark, and only forward:
// a writer that appends outside a round (a supervisor's stop, a release)
// takes the lock and ends "no new round" to have its record witnessed. A
// negative round lets the lock go and writes nothing (a writer that found
// the journal broken and appended nothing).
type Rounds interface {
	StartRound(ctx context.Context, fleet string) (last int64, end func(round int64) error, err error)
	// LastRound reads the fleet's counter without waiting for a round:
	// the last round ended and the journal's head then. Zero before the
	// first.
	LastRound(ctx context.Context, fleet string) (RoundMark, error)
}

// RoundMark is what the round counter keeps: the last round ended and the
// furthest journal head a round's end saw (it never moves back). Records 0
// with Round > 0 is a counter written before marks were kept.
type RoundMark struct {
	Round   int64  `json:"round"`
	Records int64  `json:"records"`
	Hash    string `json:"hash"`
}

var _ Rounds = (*Local)(nil)

// StartRound implements Rounds with the fleet's rounds lock (the journal's
// key, .rounds) and the last round in .round beside it, with the journal's
// head when it ended.
func (l *Local) StartRound(ctx context.Context, fleet string) (int64, func(int64) error, error) {
	if fleet == "" {
		return 0, nil, errors.New("a round needs a fleet")
	}
	lk, err := l.lockFile(l.journalPath(fleet, ".rounds"), RoundWait)
	if err != nil {
		return 0, nil, err
	}
	path := l.journalPath(fleet, ".round")
	mark, err := readMark(path)
	if err != nil {
		lk.Unlock()
		return 0, nil, err
	}
	last := mark.Round
	end := func(round int64) error {
		defer lk.Unlock()
		if round < 0 {
			return nil
		}
		head, err := l.readHead(fleet)
		if err != nil {
			return err
		}
		next := RoundMark{Round: max(round, last), Records: head.Records, Hash: head.Hash}
		if head.Records < mark.Records {
			// The head went back (a journal cut short): the mark keeps
			// what it saw, the evidence.
			next.Records, next.Hash = mark.Records, mark.Hash
		}
		if next == mark {
			return nil
		}
		data, err := json.Marshal(next)
		if err != nil {
			return err
		}
		return fsx.WriteFile(path, append(data, '\n'), 0o644)
	}
	return last, end, nil
}

// LastRound implements Rounds: the .round file, read without the lock (it
// is replaced whole).
func (l *Local) LastRound(ctx context.Context, fleet string) (RoundMark, error) {
	return readMark(l.journalPath(fleet, ".round"))
}

func readMark(path string) (RoundMark, error) {
	var m RoundMark
	switch data, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
		return RoundMark{}, nil
	case err != nil:
		return RoundMark{}, err
	default:
		if err := json.Unmarshal(data, &m); err != nil {
			return RoundMark{}, fmt.Errorf("%s is damaged (fix or move it): %w", path, err)
		}
	}
	return m, nil
}

// RoundWait is how long StartRound waits for another supervisor's round.
var RoundWait = 2 * time.Minute
