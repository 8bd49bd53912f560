package link

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain/localstore"
)

// DefaultHub is the hub a record names when LASERBRAIN_HUB is not set (the
// reference's default; nothing here contacts it).
const DefaultHub = "https://phronesis.world/api/laserbrain"

// DefaultKind is the kind of a record written without one.
const DefaultKind = "note"

// UnknownAgent is the name of a process that did not say who it is.
const UnknownAgent = "unknown"

// Record is one line of the link.
type Record struct {
	// TS is when it was written, UTC, "2006-01-02T15:04:05.000Z" (the
	// reference always writes .000).
	TS    string `json:"ts"`
	Agent string `json:"agent"`
	Hub   string `json:"hub"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	// Goal is the goal the writer was working on, when it said.
	Goal *string `json:"goal,omitempty"`
	// Payload is any JSON value that came with the record, as written.
	Payload json.RawMessage `json:"payload,omitempty"`

	hasAgent bool // "agent" was present (the reference counts a missing one as "unknown")
}

// Link is one link and the identity this process writes under.
type Link struct {
	// Path is the JSONL file (when Log is nil).
	Path string
	// Log, when set, keeps the records instead of the file at Path: a
	// store shared by several machines (a fleet's link in PostgreSQL).
	// The lines are the same either way.
	Log Log
	// Agent names the records this process writes (default "unknown").
	Agent string
	// Hub is recorded in every record (default DefaultHub).
	Hub string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Default is the link the reference would use from this environment:
// $LASERBRAIN_LINK_LOG, else $LASERBRAIN_TANDEM_LOG, else link.jsonl in the
// laserbrain config directory — or tandem.jsonl there when only that older
// file exists, so an un-migrated machine keeps its history. The agent is
// $LASERBRAIN_AGENT, the hub $LASERBRAIN_HUB.
func Default() (*Link, error) {
	l := &Link{Agent: os.Getenv("LASERBRAIN_AGENT"), Hub: os.Getenv("LASERBRAIN_HUB")}
	switch {
	case os.Getenv("LASERBRAIN_LINK_LOG") != "":
		l.Path = os.Getenv("LASERBRAIN_LINK_LOG")
	case os.Getenv("LASERBRAIN_TANDEM_LOG") != "":
		l.Path = os.Getenv("LASERBRAIN_TANDEM_LOG")
	default:
		paths, err := localstore.DefaultPaths()
		if err != nil {
			return nil, fmt.Errorf("no place for the link (set LASERBRAIN_LINK_LOG): %w", err)
		}
		cur, old := filepath.Join(paths.Config, "link.jsonl"), filepath.Join(paths.Config, "tandem.jsonl")
		l.Path = cur
		if exists(old) && !exists(cur) {
			l.Path = old
		}
	}
	return l, nil
}

// Log is where a link's lines are kept. Append stores one line (without
// its line end) as one unit, so that concurrent writers never interleave;
// Lines hands back every stored line, oldest first.
type Log interface {
	Append(line []byte) error
	Lines(fn func(line []byte)) error
	// Where names the log for people (a file path, a masked database).
	Where() string
	// Exists reports whether anything could have been written yet.
	Exists() bool
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (l *Link) agent() string {
	if l.Agent == "" {
		return UnknownAgent
	}
	return l.Agent
}

func (l *Link) hub() string {
	if l.Hub == "" {
		return DefaultHub
	}
	return l.Hub
}

// Entry is what a writer says; Write fills in the rest.
type Entry struct {
	Text string
	// Kind defaults to "note".
	Kind string
	// Goal is recorded when not nil.
	Goal *string
	// Payload is recorded when not nil; it must marshal to JSON. Floats
	// marshalled by encoding/json lose their ".0" (Python writes 1.0): give
	// them a MarshalJSON if a Python reader cares.
	Payload any
	// Agent overrides the link's agent for this record.
	Agent string
}

// Write appends one record and returns it. The record is one line written
// with a single write call on a file opened O_APPEND, so records from any
// number of processes (Python ones included) never interleave or overwrite
// one another, without a lock.
func (l *Link) Write(e Entry) (Record, error) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	kind := e.Kind
	if kind == "" {
		kind = DefaultKind
	}
	agent := e.Agent
	if agent == "" {
		agent = l.agent()
	}
	rec := Record{TS: now().UTC().Format("2006-01-02T15:04:05") + ".000Z", Agent: agent, Hub: l.hub(), Kind: kind, Text: e.Text, Goal: e.Goal, hasAgent: true}
	if e.Payload != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e.Payload); err != nil {
			return Record{}, fmt.Errorf("link payload: %w", err)
		}
		rec.Payload = json.RawMessage(bytes.TrimSpace(buf.Bytes()))
	}
	line, err := rec.MarshalLine()
	if err != nil {
		return Record{}, err
	}
	if l.Log != nil {
		if err := l.Log.Append(line); err != nil {
			return Record{}, fmt.Errorf("link: append to %s: %w", l.Log.Where(), err)
		}
		return rec, nil
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return Record{}, fmt.Errorf("link: %w", err)
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return Record{}, fmt.Errorf("link: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return Record{}, fmt.Errorf("link: append to %s: %w", l.Path, err)
	}
	return rec, nil
}

// MarshalLine renders the record as the reference writes it:
// json.dumps(record, ensure_ascii=False) — keys ts, agent, hub, kind, text,
// then goal and payload when present; ", " and ": " separators; text as
// UTF-8. Unlike the reference, U+0085, U+2028 and U+2029 are written
// escaped: the reference reads with str.splitlines(), which breaks a line
// at them, and would lose the record.
func (r Record) MarshalLine() ([]byte, error) {
	members := []grammar.Member{
		{Key: "ts", Value: str(r.TS)},
		{Key: "agent", Value: str(r.Agent)},
		{Key: "hub", Value: str(r.Hub)},
		{Key: "kind", Value: str(r.Kind)},
		{Key: "text", Value: str(r.Text)},
	}
	if r.Goal != nil {
		members = append(members, grammar.Member{Key: "goal", Value: str(*r.Goal)})
	}
	if r.Payload != nil {
		p, err := grammar.Parse(r.Payload)
		if err != nil {
			return nil, fmt.Errorf("link payload: %w", err)
		}
		members = append(members, grammar.Member{Key: "payload", Value: p})
	}
	line := grammar.RenderLine(grammar.Value{Kind: grammar.Object, Members: members})
	for _, sep := range [][2]string{{"\u0085", `\u0085`}, {"\u2028", `\u2028`}, {"\u2029", `\u2029`}} {
		line = bytes.ReplaceAll(line, []byte(sep[0]), []byte(sep[1]))
	}
	return line, nil
}

func str(s string) grammar.Value { return grammar.Value{Kind: grammar.String, Str: s} }

// Records reads every record, oldest first. Blank lines are skipped, and
// so is a line that is not a JSON object with string fields (a torn or
// foreign line must not blind the reader to the rest); a last line without
// its line feed is a write still under way, read once it is whole. A
// missing file is an empty link.
func (l *Link) Records() ([]Record, error) {
	var out []Record
	err := l.scan(func(r Record) { out = append(out, r) })
	return out, err
}

// Lines are the link's lines as they were written, oldest first, for a
// reader that holds every line to its own rules (the claim gate reads a
// link with one torn line as holding no claims). A missing file is an
// empty link.
func (l *Link) Lines() ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := l.lines(func(line []byte) { out = append(out, json.RawMessage(bytes.Clone(line))) })
	return out, err
}

func (l *Link) scan(fn func(Record)) error {
	return l.lines(func(line []byte) {
		if r, ok := parseLine(line); ok {
			fn(r)
		}
	})
}

// lines hands every line of the link to fn, line ends left off.
func (l *Link) lines(fn func([]byte)) error {
	if l.Log != nil {
		return l.Log.Lines(fn)
	}
	// The one JSON-lines reader: a torn last line is not a record yet. A
	// foreign or damaged line is skipped, as the reference skips it: the
	// link has no lock (any number of processes append, Python ones too),
	// so no writer can cut a torn line off, and the next record ends it.
	_, err := jsonl.Scan(l.Path, jsonl.Start, func(line []byte, _ int) error {
		if line = bytes.TrimRight(line, "\r"); len(line) > 0 {
			fn(line)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	return nil
}

// parseLine decodes one line; ok is false for a line to skip.
func parseLine(line []byte) (Record, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Record{}, false
	}
	var raw struct {
		TS      *string         `json:"ts"`
		Agent   *string         `json:"agent"`
		Hub     *string         `json:"hub"`
		Kind    *string         `json:"kind"`
		Text    *string         `json:"text"`
		Goal    *string         `json:"goal"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(line, &raw) != nil {
		return Record{}, false
	}
	r := Record{Goal: raw.Goal, hasAgent: raw.Agent != nil}
	for dst, src := range map[*string]*string{&r.TS: raw.TS, &r.Agent: raw.Agent, &r.Hub: raw.Hub, &r.Kind: raw.Kind, &r.Text: raw.Text} {
		if src != nil {
			*dst = *src
		}
	}
	if len(raw.Payload) > 0 && string(raw.Payload) != "null" {
		r.Payload = raw.Payload
	}
	return r, true
}

// Filter selects records to read.
type Filter struct {
	// Agent and Kind, when set, keep only records with that agent or kind.
	Agent, Kind string
	// Limit keeps the last Limit records that match (0: all of them).
	Limit int
}

// Read returns the most recent matching records, newest last.
func (l *Link) Read(f Filter) ([]Record, error) {
	var out []Record
	err := l.scan(func(r Record) {
		if (f.Agent == "" || r.Agent == f.Agent) && (f.Kind == "" || r.Kind == f.Kind) {
			out = append(out, r)
		}
	})
	if err != nil {
		return nil, err
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// Voices is who has spoken on a link.
type Voices struct {
	Agents   []string          `json:"agents"` // sorted
	Count    int               `json:"count"`
	Wrote    map[string]int    `json:"wrote"`     // records per agent
	LastSeen map[string]string `json:"last_seen"` // ts of each agent's last record
}

// Agents reads who has written on the link and how much. A record without
// an agent counts as "unknown".
func (l *Link) Agents() (Voices, error) {
	v := Voices{Agents: []string{}, Wrote: map[string]int{}, LastSeen: map[string]string{}}
	err := l.scan(func(r Record) {
		a := r.Agent
		if !r.hasAgent {
			a = UnknownAgent
		}
		v.Wrote[a]++
		v.LastSeen[a] = r.TS
	})
	if err != nil {
		return Voices{}, err
	}
	for a := range v.Wrote {
		v.Agents = append(v.Agents, a)
	}
	slices.Sort(v.Agents)
	v.Count = len(v.Agents)
	return v, nil
}

// Identity is who this process is on the link.
type Identity struct {
	Agent  string `json:"agent"`
	Hub    string `json:"hub"`
	Log    string `json:"log"`
	Exists bool   `json:"exists"`
}

// Whoami says which agent this process writes as, the hub it names, where
// the link lives and whether the file exists yet.
func (l *Link) Whoami() Identity {
	if l.Log != nil {
		return Identity{Agent: l.agent(), Hub: l.hub(), Log: l.Log.Where(), Exists: l.Log.Exists()}
	}
	return Identity{Agent: l.agent(), Hub: l.hub(), Log: l.Path, Exists: exists(l.Path)}
}
