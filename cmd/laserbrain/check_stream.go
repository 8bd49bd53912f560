package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
)

func runCheckStream(cmd *cobra.Command, opts *checkOptions, streams *cli.IOStreams) error {
	for _, name := range []string{"goal", "progress", "distance", "parent-goal", "user-turn", "doing", "next", "blocked", "json"} {
		if cmd.Flags().Changed(name) {
			return cli.Usagef("--%s cannot be used with --stream: each line carries its own state", name)
		}
	}
	if opts.run != "" {
		if err := laserbrain.ValidateRunID(opts.run); err != nil {
			return cli.Usagef("--run: %v", err)
		}
	}
	store, err := openStore()
	if err != nil {
		return cli.Exit(usageExit, err)
	}
	s := newStreamer(store, opts.run)
	bad, err := s.run(streams.In, streams.Out)
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if cerr := store.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("context store not saved: %w", cerr)
	}
	if err != nil {
		return cli.Exit(usageExit, err)
	}
	if bad > 0 {
		return cli.SilentExit(usageExit)
	}
	return nil
}

// maxStreamLine bounds one input line; a longer line is reported as bad and
// skipped, and the stream goes on.
const maxStreamLine = 1 << 20

// saveEvery is how often a stream writes its runs and contexts, so a killed
// stream loses at most this much.
const saveEvery = time.Second

// streamer checks a stream of states, holding each run it touches open for
// the length of the stream.
type streamer struct {
	store      laserbrain.Store
	defaultRun string
	handles    map[string]laserbrain.RunHandle
	dirty      map[string]bool
	lastSave   time.Time
}

func newStreamer(store laserbrain.Store, defaultRun string) *streamer {
	return &streamer{store: store, defaultRun: defaultRun, handles: map[string]laserbrain.RunHandle{},
		dirty: map[string]bool{}, lastSave: time.Now()}
}

// streamError is the output line for a bad input line.
type streamError struct {
	Error string `json:"error"`
	Line  int    `json:"line"`
}

// run reads lines until EOF, writing one line for each non-blank input
// line. It returns how many lines were bad; err is an I/O or store failure
// that ends the stream.
func (s *streamer) run(in io.Reader, out io.Writer) (bad int, err error) {
	r := bufio.NewReaderSize(in, 64<<10)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		line, tooLong, rerr := readLine(r)
		if rerr != nil && rerr != io.EOF {
			return bad, fmt.Errorf("read line %d: %w", n, rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var result any
			if tooLong {
				result = streamError{Error: fmt.Sprintf("line is longer than %d bytes", maxStreamLine), Line: n}
			} else if v, lerr := s.check(line); lerr != nil {
				result = streamError{Error: lerr.Error(), Line: n}
			} else {
				result = v
			}
			if _, isErr := result.(streamError); isErr {
				bad++
			}
			// One Encode is one Write: each verdict leaves as soon as it is made.
			if werr := enc.Encode(result); werr != nil {
				return bad, fmt.Errorf("write: %w", werr)
			}
		}
		if time.Since(s.lastSave) >= saveEvery {
			if err := s.persist(); err != nil {
				return bad, err
			}
		}
		if rerr == io.EOF {
			return bad, s.persist()
		}
	}
}

// readLine returns the next line without its terminator. A line longer than
// maxStreamLine is consumed and reported as tooLong.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !tooLong {
				long = append(long, chunk...)
				if len(long) > maxStreamLine {
					tooLong, long = true, nil
				}
			}
			continue
		case err != nil && err != io.EOF:
			return nil, false, err
		}
		if tooLong {
			return nil, true, err
		}
		if long != nil {
			chunk = append(long, chunk...)
			if len(chunk) > maxStreamLine+1 {
				return nil, true, err
			}
		}
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		chunk = bytes.TrimSuffix(chunk, []byte("\r"))
		return chunk, false, err
	}
}

// streamLine is one input line.
type streamLine struct {
	Goal       *string         `json:"goal"`
	Progress   optString       `json:"progress"`
	Distance   json.RawMessage `json:"distance"`
	ParentGoal *string         `json:"parent_goal"`
	UserTurn   *bool           `json:"user_turn"`
	Doing      *string         `json:"doing"`
	Next       *string         `json:"next"`
	Blocked    *string         `json:"blocked"`
	Run        *string         `json:"run"`
}

// optString tells a missing string from a null one.
type optString struct {
	set bool
	s   string
}

func (o *optString) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &o.s)
}

// parseStreamLine reads one line into a step input and the run it names.
func parseStreamLine(line []byte) (laserbrain.StepInput, string, error) {
	var l streamLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return laserbrain.StepInput{}, "", explainJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return laserbrain.StepInput{}, "", errors.New("not one JSON object: text follows it on the line")
	}
	in := laserbrain.StepInput{Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	in.Goal, in.ParentGoal = str(l.Goal), str(l.ParentGoal)
	in.Doing, in.Next, in.Blocked = str(l.Doing), str(l.Next), str(l.Blocked)
	if l.Progress.set {
		// Present: null (like anything outside the enum) is ungrammatical.
		in.Progress = l.Progress.s
	}
	if l.Distance != nil {
		switch c := bytes.TrimSpace(l.Distance)[0]; {
		case c == '{' || c == '[':
			return laserbrain.StepInput{}, "", errors.New("distance: want a number (0 to 10), a string or null")
		}
		in.Distance = laserbrain.DistanceFromJSON(l.Distance)
	}
	if l.UserTurn != nil {
		in.UserTurn = *l.UserTurn
	}
	run := ""
	if l.Run != nil {
		run = *l.Run
		if err := laserbrain.ValidateRunID(run); err != nil {
			return laserbrain.StepInput{}, "", err
		}
	}
	return in, run, nil
}

// explainJSON turns encoding/json's errors into messages about the line.
func explainJSON(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fmt.Errorf("want a JSON object, got %s", typeErr.Value)
		}
		want := "a string"
		if typeErr.Type.Kind().String() == "bool" {
			want = "true or false"
		}
		return fmt.Errorf("%s: want %s, got %s", typeErr.Field, want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("not JSON: %v (at byte %d)", syntaxErr, syntaxErr.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not JSON: the object is cut short")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(msg)
}

// check runs one line against its run.
func (s *streamer) check(line []byte) (laserbrain.CheckResult, error) {
	in, id, err := parseStreamLine(line)
	if err != nil {
		return laserbrain.CheckResult{}, err
	}
	if id == "" {
		if s.defaultRun == "" {
			s.defaultRun = laserbrain.NewRunID()
		}
		id = s.defaultRun
	}
	h := s.handles[id]
	if h == nil {
		if h, err = s.store.OpenRun(context.Background(), id); err != nil {
			return laserbrain.CheckResult{}, err
		}
		s.handles[id] = h
	}
	s.dirty[id] = true
	v, err := h.Run().Step(in)
	if err != nil {
		return laserbrain.CheckResult{}, err
	}
	return v, nil
}

// persist writes every run changed since the last save, then the contexts.
func (s *streamer) persist() error {
	ctx := context.Background()
	for id := range s.dirty {
		if err := s.handles[id].Save(ctx); err != nil {
			return fmt.Errorf("run %s not saved: %w", id, err)
		}
		delete(s.dirty, id)
	}
	s.lastSave = time.Now()
	if err := s.store.Flush(ctx); err != nil {
		return fmt.Errorf("context store not saved: %w", err)
	}
	return nil
}

// close releases every run.
func (s *streamer) close() error {
	var first error
	for id, h := range s.handles {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.handles, id)
	}
	return first
}
