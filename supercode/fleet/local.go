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
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
)

// Local is the fleet store in files under one directory (by default
// $LASERBRAIN_HOME/fleet):
//
//	runs/<id>.run              a run, in a file of two sealed slots written
//	                           in place in turn (local_runs.go)
//	events/<id>.jsonl          its events, one JSON object a line, appended
//	sessions/<session>         the id of the run a Claude session belongs to
//	authorizations/<id>.json   one authorization
//	halts/, journal/           halts and the supervisor's journal (local_supervise.go)
//
// Every write takes the file's advisory lock (<file>.lock) and replaces,
// appends or writes a sealed slot atomically, so hooks of one session
// running at once never lose each other's updates.
type Local struct {
	dir     string
	runsDir string // dir/runs
	// readOnly: opened by OpenLocalReader; every write is refused.
	readOnly bool
	seen     seenCache
}

var _ Store = (*Local)(nil)

// LockTimeout is how long a writer waits for a lock another process holds.
var LockTimeout = 10 * time.Second

// DefaultDir is $LASERBRAIN_HOME/fleet, else <user config dir>/laserbrain/fleet.
func DefaultDir() (string, error) { return localstore.InHome("fleet") }

// OpenLocal opens (creating) the store in dir.
func OpenLocal(dir string) (*Local, error) {
	for _, sub := range []string{"runs", "events", "sessions", "authorizations", "halts/active", "journal"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open fleet store: %w", err)
		}
	}
	return &Local{dir: dir, runsDir: filepath.Join(dir, "runs")}, nil
}

// OpenLocalReader opens the store in dir for reading only: nothing is
// created (a store never written reads as empty), and every write is
// refused with laserbrain.ErrReadOnly. Commands that only read use it, so
// asking about a fleet never makes a home.
func OpenLocalReader(dir string) *Local {
	return &Local{dir: dir, runsDir: filepath.Join(dir, "runs"), readOnly: true}
}

// Dir is where the store lives.
func (l *Local) Dir() string { return l.dir }

// Close implements Store; the local store holds nothing open.
func (l *Local) Close() error { return nil }

func (l *Local) eventPath(id string) string { return filepath.Join(l.dir, "events", id+".jsonl") }
func (l *Local) authPath(id string) string {
	return filepath.Join(l.dir, "authorizations", id+".json")
}

// lockFile takes the advisory lock at path, waiting up to wait; every write
// takes one first, so this is where a read-only store refuses writes.
func (l *Local) lockFile(path string, wait time.Duration) (*fsx.Lock, error) {
	if l.readOnly {
		return nil, fmt.Errorf("fleet store %s: %w", l.dir, laserbrain.ErrReadOnly)
	}
	return fsx.LockFile(path, wait)
}

func (l *Local) lock(path string) (*fsx.Lock, error) { return l.lockFile(path+".lock", LockTimeout) }

func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return fsx.WriteFile(path, buf.Bytes(), 0o644)
}

// readAll reads every record of one of the store's directories (sub/*.json)
// that keep accepts, in file-name order; a file removed while it is read is
// passed over.
func readAll[T any](l *Local, sub string, keep func(*T) bool) ([]T, error) {
	names, err := filepath.Glob(filepath.Join(l.dir, sub, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []T
	for _, n := range names {
		var v T
		if err := readJSON(n, &v); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if keep(&v) {
			out = append(out, v)
		}
	}
	return out, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return decodeJSON(path, data, v)
}

// decodeJSON decodes data, read from path, into v.
func decodeJSON(path string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is damaged (fix or move it; nothing was changed): %w", path, err)
	}
	return nil
}

// createJSON writes v as the new file p under p's lock, then runs after
// (if any) under the same lock; a file already there is ErrExists, named.
func (l *Local) createJSON(p, name string, v any, after func() error) error {
	return l.createFile(p, name, func() error { return writeJSON(p, v) }, after)
}

// createFile makes the new file p with write under p's lock, then runs
// after (if any) under the same lock; a file already there at p or at any
// of taken is ErrExists, named.
func (l *Local) createFile(p, name string, write, after func() error, taken ...string) error {
	lk, err := l.lock(p)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	for _, q := range append([]string{p}, taken...) {
		if _, err := os.Stat(q); err == nil {
			return fmt.Errorf("%s: %w", name, ErrExists)
		}
	}
	if err := write(); err != nil {
		return err
	}
	if after == nil {
		return nil
	}
	return after()
}

// oldestFirst orders a listing by its time, then by id.
func oldestFirst[T any](out []T, key func(*T) (time.Time, string)) {
	sort.SliceStable(out, func(i, j int) bool {
		ti, idi := key(&out[i])
		tj, idj := key(&out[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return idi < idj
	})
}

// AttachSession implements Runs.
func (l *Local) AttachSession(ctx context.Context, id, session string) error {
	if err := validateSession(session); err != nil {
		return err
	}
	_, err := l.UpdateRun(ctx, id, func(r *Run) error {
		r.AddSession(session)
		return nil
	})
	if err != nil {
		return err
	}
	return l.indexSession(session, id)
}

func validateSession(s string) error {
	// Claude Code's session ids are UUIDs; anything usable as a file name
	// and as a run id is accepted.
	if err := laserbrain.ValidateRunID(s); err != nil {
		return fmt.Errorf("session id: %w", err)
	}
	return nil
}

func (l *Local) indexSession(session, run string) error {
	if err := validateSession(session); err != nil {
		return err
	}
	p := filepath.Join(l.dir, "sessions", session)
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == run {
		return nil
	}
	return fsx.WriteFile(p, []byte(run+"\n"), 0o644)
}

// RunForSession implements Runs.
func (l *Local) RunForSession(ctx context.Context, session string) (Run, error) {
	if err := validateSession(session); err != nil {
		return Run{}, err
	}
	b, err := os.ReadFile(filepath.Join(l.dir, "sessions", session))
	if errors.Is(err, fs.ErrNotExist) {
		return Run{}, fmt.Errorf("session %s: %w", session, ErrNotFound)
	}
	if err != nil {
		return Run{}, err
	}
	return l.Run(ctx, strings.TrimSpace(string(b)))
}

// maxEventLine bounds one stored event; a larger result is cut (the text
// keeps its start) so one huge tool output cannot bloat the run's file.
const maxEventLine = 64 << 10

// AppendEvent implements Events.
func (l *Local) AppendEvent(ctx context.Context, run string, e RunEvent) (bool, error) {
	n, err := l.AppendEvents(ctx, run, []RunEvent{e})
	return n == 1, err
}

// AppendEvents implements Events: one lock, one append and one fsync for
// the batch. Only events that come with an ID of their own are looked for
// in the run's file (a fresh id cannot be there).
func (l *Local) AppendEvents(ctx context.Context, run string, es []RunEvent) (int, error) {
	if err := ValidateRunID(run); err != nil {
		return 0, err
	}
	if len(es) == 0 {
		return 0, nil
	}
	p := l.eventPath(run)
	lk, err := l.lock(p)
	if err != nil {
		return 0, err
	}
	defer lk.Unlock()
	wanted := map[string]bool{}
	for _, e := range es {
		if e.ID != "" {
			wanted[e.ID] = false
		}
	}
	if len(wanted) > 0 {
		if err := l.seenEvents(p, wanted); err != nil {
			return 0, err
		}
	}
	// A fresh id is nobody else's: it is kept in wanted only when some
	// event of the batch came with an id of its own to compare with.
	named := len(wanted) > 0
	buf := make([]byte, 0, 256*len(es))
	n := 0
	now := time.Now().UTC()
	for _, e := range es {
		if e.ID == "" {
			e.ID = NewID()
		} else if wanted[e.ID] {
			continue // the run has it, or an earlier event of the batch
		}
		if named {
			wanted[e.ID] = true
		}
		if e.At.IsZero() {
			e.At = now
		}
		if buf, err = appendEvent(buf, e); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := jsonl.Append(p, buf, 0o644); err != nil {
		return 0, err
	}
	return n, nil
}

// appendEvent appends e's line (marshalEvent's) to b. The common event —
// no result, a time RFC 3339 can hold, a line within maxEventLine — is
// written by hand, without reflection: a stream's checks append one each.
// TestAppendEventMatchesMarshal holds the two together byte for byte.
func appendEvent(b []byte, e RunEvent) ([]byte, error) {
	start := len(b)
	if len(e.Result) == 0 {
		b = append(b, `{"id":`...)
		b = jsonl.AppendString(b, e.ID, true)
		b = append(b, `,"at":"`...)
		// AppendText is the time's MarshalJSON without the quotes (an
		// error, a year RFC 3339 cannot hold, is marshalEvent's to say).
		if at, err := e.At.AppendText(b); err == nil {
			b = append(at, `","kind":`...)
			b = jsonl.AppendString(b, e.Kind, true)
			b = appendOmitEmpty(b, `,"name":`, e.Name)
			b = append(b, `,"ok":`...)
			b = e.OK.AppendJSON(b)
			b = appendOmitEmpty(b, `,"text":`, e.Text)
			b = appendOmitEmpty(b, `,"session":`, e.Session)
			b = appendOmitEmpty(b, `,"subagent":`, e.Subagent)
			b = append(b, "}\n"...)
			if len(b)-start <= maxEventLine+1 {
				return b, nil
			}
		}
		b = b[:start]
	}
	line, err := marshalEvent(e)
	if err != nil {
		return b, err
	}
	return append(b, line...), nil
}

// appendOmitEmpty appends a string member, as encoding/json writes one
// tagged omitempty: nothing when s is empty.
func appendOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return jsonl.AppendString(append(b, key...), s, true)
}

func marshalEvent(e RunEvent) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(b) > maxEventLine {
		e.Result = nil
		if len(e.Text) > maxEventLine/2 {
			e.Text = e.Text[:maxEventLine/2] + "…"
		}
		if b, err = json.Marshal(e); err != nil {
			return nil, err
		}
	}
	return append(b, '\n'), nil
}

// eventID reads the id an event line starts with (marshalEvent writes it
// first) without decoding the rest of the line.
func eventID(line []byte) (string, bool) {
	const prefix = `{"id":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	for i := len(prefix); i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '"':
			var id string
			if json.Unmarshal(line[len(prefix)-1:i+1], &id) != nil {
				return "", false
			}
			return id, true
		}
	}
	return "", false
}

// Events implements Events, through the one JSON-lines reader: a line a
// crash left half-written at the end is not an event yet, a damaged line
// before it is an error naming it.
func (l *Local) Events(ctx context.Context, run string) ([]RunEvent, error) {
	if err := ValidateRunID(run); err != nil {
		return nil, err
	}
	var out []RunEvent
	path := l.eventPath(run)
	in := &jsonl.Interner{}
	_, err := jsonl.Scan(path, jsonl.Start, func(line []byte, n int) error {
		e, err := parseEventIn(line, in)
		if err != nil {
			return &jsonl.LineError{Path: path, Line: n, Err: err}
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// AddAuthorization implements Authorizations.
func (l *Local) AddAuthorization(ctx context.Context, a Authorization) error {
	if err := validAuthorizationID(a.ID); err != nil {
		return err
	}
	return l.createJSON(l.authPath(a.ID), "authorization "+a.ID, a, nil)
}

// ListAuthorizations implements Authorizations.
func (l *Local) ListAuthorizations(ctx context.Context, fleet string) ([]Authorization, error) {
	out, err := readAll(l, "authorizations", func(a *Authorization) bool { return fleet == "" || a.Fleet == fleet })
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// validAuthorizationID holds an authorization id to the rule run ids
// follow (it names a file), in words about an authorization.
func validAuthorizationID(id string) error {
	if laserbrain.ValidateRunID(id) != nil {
		return fmt.Errorf("authorization id %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

func (l *Local) updateAuthorization(id string, f func(*Authorization) error) error {
	if err := validAuthorizationID(id); err != nil {
		return err
	}
	p := l.authPath(id)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		// Authorizations are never deleted: one missing now was never
		// there, and no lock file is left for it.
		return fmt.Errorf("authorization %s: %w", id, ErrNotFound)
	}
	lk, err := l.lock(p)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	var a Authorization
	if err := readJSON(p, &a); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("authorization %s: %w", id, ErrNotFound)
		}
		return err
	}
	if err := f(&a); err != nil {
		return err
	}
	return writeJSON(p, a)
}

// UseAuthorization implements Authorizations.
func (l *Local) UseAuthorization(ctx context.Context, id string, u Use) error {
	return l.updateAuthorization(id, func(a *Authorization) error {
		if !a.Live(u.At) {
			return fmt.Errorf("authorization %s: %w", id, ErrSpent)
		}
		a.Used = append(a.Used, u)
		return nil
	})
}

// RevokeAuthorization implements Authorizations.
func (l *Local) RevokeAuthorization(ctx context.Context, id string, t time.Time) error {
	return l.updateAuthorization(id, func(a *Authorization) error {
		if a.Revoked.IsZero() {
			a.Revoked = t
		}
		return nil
	})
}

// runNotFound is "run <id>: not found", an ErrNotFound, formatted only
// when read: most lookups are of runs that are not registered.
type runNotFound string

func (e runNotFound) Error() string { return "run " + string(e) + ": " + ErrNotFound.Error() }
func (e runNotFound) Unwrap() error { return ErrNotFound }
