package hook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// When the store is a database and it is out of reach, no observed event
// is lost: the observer hooks append the event to a queue on this machine
// ($LASERBRAIN_HOME/queue/pending.jsonl, one synced line each) and the
// next observer hook that reaches the database replays the queue, oldest
// first, before its own event. Replays are idempotent: every event a
// queued hook records gets an id derived from the queue entry (or the
// tool call's own id), so an entry replayed twice — a flush cut short —
// is recorded once, and the machine's evidence, counted when the event was
// queued, is not counted again.
//
// Appenders hold queue.lock shared; a flusher takes flush.lock (one
// flusher at a time, the others go on without waiting), then queue.lock
// exclusively just long enough to rename pending.jsonl to flushing.jsonl,
// and replays that file; what it could not replay stays there, first in
// line for the next flush.
//
// Each session is told once, on the first hook that finds the database out
// of reach, what that means; told/<session> remembers it until a flush
// empties the queue.

// queued is one queue entry.
type queued struct {
	ID    string           `json:"id"`
	At    time.Time        `json:"at"`
	Event client.EventName `json:"event"`
	// Client is whose payload Input is ("": Claude Code).
	Client client.Name       `json:"client,omitempty"`
	Input  json.RawMessage   `json:"input"`
	Env    map[string]string `json:"env"`
	// Decision is the gate's answer, for an entry that records one.
	Decision *gateDecision `json:"decision,omitempty"`
}

// gateDecision is a pre-tool-use answer to record on the run.
type gateDecision struct {
	OK     bool            `json:"ok"`
	Text   string          `json:"text"`
	Result json.RawMessage `json:"result,omitempty"`
}

// queueEnv is the environment a replay needs to find the caller's run.
var queueEnv = append([]string{agentrun.EnvRun, agentrun.EnvAgent, agentrun.EnvFleet, "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ATTENDED"}, agentrun.SessionEnv...)

func (h *Handler) queueDir() (string, error) {
	if h.QueueDir != "" {
		return h.QueueDir, nil
	}
	return localstore.InHome(queueName)
}

// QueueDirOf is the queue's directory in a laserbrain home.
func QueueDirOf(home string) string { return filepath.Join(home, queueName) }

const queueName = "queue"

func newQueueID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// enqueue keeps one event for later.
func (h *Handler) enqueue(e *event, dec *gateDecision) error {
	dir, err := h.queueDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The entry is dated when the event came, not when the store was
	// given up on: a replay orders it among the checks by that time.
	at := e.arrived
	if at.IsZero() {
		at = h.now()
	}
	q := queued{ID: newQueueID(), At: at, Event: e.Name, Client: h.Client, Input: json.RawMessage(bytes.TrimSpace(e.input)), Env: map[string]string{}, Decision: dec}
	if !json.Valid(q.Input) {
		return errors.New("the event is not JSON")
	}
	for _, k := range queueEnv {
		if v := h.Tracker.Getenv; v != nil {
			if x := v(k); x != "" {
				q.Env[k] = x
			}
		} else if x := os.Getenv(k); x != "" {
			q.Env[k] = x
		}
	}
	line, err := json.Marshal(q)
	if err != nil {
		return err
	}
	lk := flock.New(filepath.Join(dir, "queue.lock"))
	if err := lk.Lock(); err != nil {
		return err
	}
	defer lk.Unlock()
	_, err = jsonl.Append(filepath.Join(dir, "pending.jsonl"), append(line, '\n'), 0o644)
	return err
}

// QueueLength counts the events waiting in the queue under dir.
func QueueLength(dir string) int {
	n := 0
	for _, name := range []string{"flushing.jsonl", "pending.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			n += bytes.Count(data, []byte("\n"))
		}
	}
	return n
}

// Flush replays the queue, if there is one and nobody else is replaying
// it. It stops at the first entry the database cannot take (still out of
// reach) and reports how many it replayed; entries that fail for any
// other reason are logged and dropped, so one bad entry cannot hold the
// queue up.
func (h *Handler) Flush(ctx context.Context) (replayed int, err error) {
	dir, err := h.queueDir()
	if err != nil {
		return 0, err
	}
	pending, flushing := filepath.Join(dir, "pending.jsonl"), filepath.Join(dir, "flushing.jsonl")
	if !exists(pending) && !exists(flushing) {
		return 0, nil
	}
	fl := flock.New(filepath.Join(dir, "flush.lock"))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return 0, err
	}
	defer fl.Unlock()
	for {
		if exists(flushing) {
			n, err := h.replayFile(ctx, flushing)
			replayed += n
			if err != nil {
				return replayed, err
			}
		}
		if !exists(pending) {
			break
		}
		ql := flock.New(filepath.Join(dir, "queue.lock"))
		if err := ql.Lock(); err != nil {
			return replayed, err
		}
		err := os.Rename(pending, flushing)
		ql.Unlock()
		if err != nil {
			return replayed, err
		}
	}
	// The outage is over: a later one is announced again.
	told, _ := filepath.Glob(filepath.Join(dir, "told", "*"))
	for _, p := range told {
		os.Remove(p)
	}
	return replayed, nil
}

func exists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Size() > 0
}

// replayFile replays the entries of path in order, then removes it; on an
// unreachable database it rewrites path with the entries left.
func (h *Handler) replayFile(ctx context.Context, path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	// The one JSON-lines reader: a torn last line (a hook killed mid-append)
	// is not an entry; the next append cuts it off.
	var (
		lines [][]byte
		nums  []int
	)
	if _, err := jsonl.ScanBytes(path, data, jsonl.Start, func(line []byte, n int) error {
		lines, nums = append(lines, bytes.Clone(line)), append(nums, n)
		return nil
	}); err != nil {
		return 0, err
	}
	for i, line := range lines {
		var q queued
		if err := json.Unmarshal(line, &q); err != nil {
			h.log(fmt.Sprintf("laserbrain hook queue: dropped a damaged entry: %v", &jsonl.LineError{Path: path, Line: nums[i], Err: err}))
			continue
		}
		if err := h.replay(ctx, q); err != nil {
			if isUnreachable(err) {
				rest := bytes.Join(lines[i:], []byte("\n"))
				if werr := fsx.WriteFile(path, append(rest, '\n'), 0o644); werr != nil {
					return i, werr
				}
				return i, err
			}
			h.log(fmt.Sprintf("laserbrain hook queue: dropped %s entry %s: %v", q.Event, q.ID, err))
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return len(lines), err
	}
	return len(lines), nil
}

// replay records one queued event through this handler's stores, as the
// hook would have when it ran.
func (h *Handler) replay(ctx context.Context, q queued) error {
	sup := &agentrun.Tracker{
		Getenv:    func(k string) string { return q.Env[k] },
		Now:       func() time.Time { return q.At },
		Stores:    h.Tracker.Shared(),
		Replaying: true,
	}
	r := &Handler{Tracker: sup, Client: q.Client, Format: h.Format, Now: sup.Now, QueueDir: h.QueueDir, ValidatePolicy: h.ValidatePolicy, replayID: q.ID}
	ad, err := r.adapter()
	if err != nil {
		return err
	}
	p, err := r.decode(ad, q.Event, q.Input)
	if err != nil {
		return err
	}
	e := &event{Payload: p}
	if q.Decision != nil {
		return r.appendFound(ctx, e, fleet.RunEvent{ID: gateEventID(e, r.eventID("gate")), At: r.now(), Kind: fleet.KindGate, Name: toolName(e), OK: laserbrain.OKOf(q.Decision.OK),
			Result: q.Decision.Result, Text: q.Decision.Text, Session: p.Session, Subagent: subagentOf(e)})
	}
	switch q.Event {
	case PostToolUse, PostToolUseFailure:
		_, err = r.postToolUse(ctx, e)
	case UserPromptSubmit:
		_, err = r.userPromptSubmit(ctx, e)
	case Stop:
		err = r.appendFound(ctx, e, fleet.RunEvent{ID: r.eventID("stop"), At: q.At, Kind: fleet.KindStop, Name: "stop", OK: laserbrain.OKTrue,
			Session: p.Session, Text: "not judged: the store was out of reach when the agent stopped"})
	case SessionStart:
		_, err = r.sessionStart(ctx, e)
	case SessionEnd:
		err = r.sessionEnd(ctx, e)
	default:
		err = fmt.Errorf("no replay for %s", q.Event)
	}
	return err
}

// appendFound appends ev to the caller's run, when it has one (a replayed
// event whose run is gone is dropped).
func (h *Handler) appendFound(ctx context.Context, e *event, ev fleet.RunEvent) error {
	run, found, err := h.Tracker.Find(ctx, h.caller(e))
	if err != nil || !found {
		return err
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return err
	}
	_, err = st.AppendEvent(ctx, run.ID, ev)
	return err
}

// eventID is the id an event recorded by this hook gets: none (a fresh
// one) live, one derived from the queue entry in a replay.
func (h *Handler) eventID(kind string) string {
	if h.replayID == "" {
		return ""
	}
	return kind + ":" + h.replayID
}

// unreachable is the answer of an observer hook whose event went to the
// queue: exit 0, and the first time in the session, a word to the person
// (systemMessage) and to the model (additionalContext, where the event
// takes it).
func (h *Handler) unreachable(ev client.EventName, e *event, cause error) client.Reply {
	if !h.firstTold(e.Session) {
		return client.Reply{}
	}
	msg := outageNotice(cause)
	return client.Reply{Notice: msg, Context: msg}
}

func outageNotice(cause error) string {
	return "laserbrain: " + reasonOf(cause) + ". Until the store is back, irreversible and outward actions are refused, " +
		"reversible ones go on, and what happens in this session is kept on this machine and recorded when it returns."
}

// reasonOf is an unreachable error's message, without the wrapping of the
// layers it came through.
func reasonOf(err error) string {
	var ue *laserbrain.UnavailableError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	return err.Error()
}

// firstTold reports whether this is the session's first word about the
// outage (and remembers that it was said).
func (h *Handler) firstTold(session string) bool {
	if session == "" {
		session = "no-session"
	}
	if laserbrain.ValidateRunID(session) != nil {
		return false
	}
	dir, err := h.queueDir()
	if err != nil {
		return false
	}
	if err := os.MkdirAll(filepath.Join(dir, "told"), 0o755); err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, "told", session), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// late is " in time" when the store did not answer within the hook's
// deadline (StoreDeadline): it was reached and did not answer, or could
// not be reached in that time.
func late(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return " in time (" + StoreDeadline.String() + ")"
	}
	return ""
}

// isUnreachable reports whether err means the store's database is out of
// reach.
func isUnreachable(err error) bool { return err != nil && errors.Is(err, laserbrain.ErrUnavailable) }
