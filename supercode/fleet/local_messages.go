package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
)

// The local store's messages, one file per agent (under voice/):
//
//	voice/<key>.jsonl    the agent's queue: a line per message said
//	                     ({"say": Message}), per delivery ({"delivered":
//	                     id, "at", "via"}) and per delivery journaled
//	                     ({"journaled": id})
//	voice/pending/<key>  present while a message waits or a delivery is
//	                     not yet journaled: what Deliver looks at first
//
// Every write holds voice/<key>.lock. A delivery is marked before it is
// journaled, so a process that dies in between never hands the message out
// again; the next Deliver for the agent journals what was left (unless the
// journal already holds it).

var _ Messages = (*Local)(nil)

func (l *Local) voicePath(fleet, agent string) string {
	return filepath.Join(l.dir, "voice", fileKey(fleet, agent)+".jsonl")
}

func (l *Local) pendingPath(fleet, agent string) string {
	return filepath.Join(l.dir, "voice", "pending", fileKey(fleet, agent))
}

// voiceLine is one line of an agent's queue file.
type voiceLine struct {
	Say       *Message `json:"say,omitempty"`
	Delivered string   `json:"delivered,omitempty"`
	At        string   `json:"at,omitempty"`
	Via       string   `json:"via,omitempty"`
	Journaled string   `json:"journaled,omitempty"`
}

// queue is an agent's messages as its file says, in order, with which
// deliveries are journaled.
type queue struct {
	msgs      []Message
	journaled map[string]bool
}

// lockQueue takes the queue's lock and reads it; the caller unlocks.
func (l *Local) lockQueue(path string) (*fsx.Lock, queue, error) {
	lk, err := l.lock(path)
	if err != nil {
		return nil, queue{}, err
	}
	q, err := l.readQueue(path)
	if err != nil {
		lk.Unlock()
		return nil, queue{}, err
	}
	return lk, q, nil
}

func (l *Local) readQueue(path string) (queue, error) {
	q := queue{journaled: map[string]bool{}}
	index := map[string]int{}
	// The one JSON-lines reader: a torn last line is a write that never
	// finished (the next append cuts it off), a damaged one before it an
	// error naming its line.
	_, err := jsonl.Decode(path, jsonl.Start, func(v voiceLine, _ int) error {
		switch {
		case v.Say != nil:
			if _, dup := index[v.Say.ID]; !dup {
				index[v.Say.ID] = len(q.msgs)
				q.msgs = append(q.msgs, *v.Say)
			}
		case v.Delivered != "":
			if k, ok := index[v.Delivered]; ok && q.msgs[k].Delivered == nil {
				d := &Delivery{Via: v.Via}
				if t, err := time.Parse(journalTime, v.At); err == nil {
					d.At = t
				}
				q.msgs[k].Delivered = d
			}
		case v.Journaled != "":
			q.journaled[v.Journaled] = true
		}
		return nil
	})
	return q, err
}

func appendLines(path string, lines ...voiceLine) error {
	var buf bytes.Buffer
	for _, v := range lines {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	_, err := jsonl.Append(path, buf.Bytes(), 0o644)
	return err
}

// Say implements Messages.
func (l *Local) Say(ctx context.Context, m Message) (bool, error) {
	if err := validMessage(m); err != nil {
		return false, err
	}
	m.Delivered = nil
	path := l.voicePath(m.Fleet, m.Agent)
	lk, q, err := l.lockQueue(path)
	if err != nil {
		return false, err
	}
	defer lk.Unlock()
	for _, old := range q.msgs {
		if old.ID == m.ID {
			return false, nil
		}
	}
	if err := appendLines(path, voiceLine{Say: &m}); err != nil {
		return false, err
	}
	return true, fsx.WriteFile(l.pendingPath(m.Fleet, m.Agent), []byte(m.Fleet+"\x00"+m.Agent+"\n"), 0o644)
}

// Deliver implements Messages.
func (l *Local) Deliver(ctx context.Context, fleet, agent string, d Delivery) ([]Message, error) {
	if _, err := os.Stat(l.pendingPath(fleet, agent)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	path := l.voicePath(fleet, agent)
	lk, q, err := l.lockQueue(path)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	// Deliveries a process marked and died before journaling.
	var unjournaled []Message
	var out []Message
	var marks []voiceLine
	at := JournalTime(d.At)
	for _, m := range q.msgs {
		switch {
		case m.Delivered == nil:
			m.Delivered = &Delivery{At: d.At.UTC(), Via: d.Via}
			out = append(out, m)
			marks = append(marks, voiceLine{Delivered: m.ID, At: at, Via: d.Via})
		case !q.journaled[m.ID]:
			unjournaled = append(unjournaled, m)
		}
	}
	if len(marks) > 0 {
		if err := appendLines(path, marks...); err != nil {
			return nil, err
		}
	}
	// Handed out: from here on a failure leaves them to be journaled by
	// the next Deliver, never to be handed out again.
	var done []voiceLine
	toJournal := out
	if len(unjournaled) > 0 {
		left, err := notJournaled(ctx, l, fleet, unjournaled)
		if err != nil {
			return out, err
		}
		for _, m := range unjournaled {
			done = append(done, voiceLine{Journaled: m.ID})
		}
		toJournal = append(left, out...)
	}
	for _, m := range toJournal {
		rec, err := DeliveryRecord(m)
		if err != nil {
			return out, err
		}
		if _, err := l.AppendJournal(ctx, rec); err != nil {
			return out, fmt.Errorf("journaling the delivery of %s: %w", m.ID, err)
		}
	}
	for _, m := range out {
		done = append(done, voiceLine{Journaled: m.ID})
	}
	if len(done) > 0 {
		if err := appendLines(path, done...); err != nil {
			return out, err
		}
	}
	if err := os.Remove(l.pendingPath(fleet, agent)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	return out, nil
}

// notJournaled keeps the messages whose delivery the fleet's journal does
// not hold yet (a process died between the two writes after journaling).
func notJournaled(ctx context.Context, j Journal, fleet string, msgs []Message) ([]Message, error) {
	recs, _, err := ReadJournal(ctx, j, fleet)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, r := range recs {
		if r.Kind != JournalDelivery {
			continue
		}
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(r.Data, &d) == nil {
			have[r.Agent+"\x00"+d.ID] = true
		}
	}
	var out []Message
	for _, m := range msgs {
		if !have[m.Agent+"\x00"+m.ID] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Messages implements Messages.
func (l *Local) Messages(ctx context.Context, fleet, agent string) ([]Message, error) {
	q, err := l.readQueue(l.voicePath(fleet, agent))
	return q.msgs, err
}
