package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
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
type Rounds interface {
	StartRound(ctx context.Context, fleet string) (last int64, end func(round int64) error, err error)
}

var _ Rounds = (*Local)(nil)

// StartRound implements Rounds with the fleet's rounds lock (the journal's
// key, .rounds) and the last round in .round beside it.
func (l *Local) StartRound(ctx context.Context, fleet string) (int64, func(int64) error, error) {
	if fleet == "" {
		return 0, nil, errors.New("a round needs a fleet")
	}
	lk, err := l.lockFile(l.journalPath(fleet, ".rounds"), RoundWait)
	if err != nil {
		return 0, nil, err
	}
	path := l.journalPath(fleet, ".round")
	var last int64
	switch data, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		lk.Unlock()
		return 0, nil, err
	default:
		var r struct {
			Round int64 `json:"round"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			lk.Unlock()
			return 0, nil, fmt.Errorf("%s is damaged (fix or move it): %w", path, err)
		}
		last = r.Round
	}
	end := func(round int64) error {
		defer lk.Unlock()
		if round <= last {
			return nil
		}
		return fsx.WriteFile(path, []byte(`{"round":`+strconv.FormatInt(round, 10)+"}\n"), 0o644)
	}
	return last, end, nil
}

// RoundWait is how long StartRound waits for another supervisor's round.
var RoundWait = 2 * time.Minute
