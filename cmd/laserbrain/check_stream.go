package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

func runCheckStream(cmd *cobra.Command, opts *checkOptions, streams *cli.IOStreams) error {
	for _, name := range []string{"goal", "progress", "distance", "parent-goal", "user-turn", "doing", "next", "blocked"} {
		if cmd.Flags().Changed(name) {
			return cli.Usagef("--%s cannot be used with --stream: each line carries its own state", name)
		}
	}
	if opts.run != "" {
		if err := laserbrain.ValidateRunID(opts.run); err != nil {
			return cli.Usagef("%s: %v", opts.runSource(), err)
		}
	}
	store, err := openStore()
	if err != nil {
		return cli.Failure(err)
	}
	s := newStreamer(store, opts.run)
	if opts.run != "" {
		// The --run run is checked before any line is read: a mistyped id
		// fails the whole stream, not each line.
		r, err := s.agents.lookup(context.Background(), opts.run)
		if err == nil && r == nil {
			var h laserbrain.RunHandle
			if h, err = openCheckedRun(context.Background(), store, opts.run, opts.newRun, opts.runWords()); err == nil {
				s.handles[opts.run] = h
			}
		}
		if err == nil && r != nil && opts.newRun && r.Checks > 0 {
			err = cli.Usagef("run %q exists already: %s", opts.run, flagRunWords.exists)
		}
		if err != nil {
			_ = s.close()
			_ = store.Close()
			return err
		}
	}
	bad, err := s.run(streams.In, streams.Out)
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if cerr := store.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("context store not saved: %w", cerr)
	}
	if err != nil {
		return cli.Failure(err)
	}
	switch {
	case s.failed > 0:
		return cli.SilentExit(cli.ExitFailure)
	case bad > 0:
		return cli.SilentExit(cli.ExitUsage)
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
	intern     interner
	failed     int // lines the store could not check (a run held elsewhere too long)
	// agents are the registered agent runs: their lines are checked
	// through their supervision, one by one, not held here.
	agents *agentRuns
	// fresh: defaultRun is an id the stream made up (nobody registered it).
	fresh bool
}

func newStreamer(store laserbrain.Store, defaultRun string) *streamer {
	return &streamer{store: store, defaultRun: defaultRun, handles: map[string]laserbrain.RunHandle{},
		dirty: map[string]bool{}, lastSave: time.Now(), agents: newAgentRuns()}
}

// streamError is the output line for a bad input line: the error envelope
// every --json error uses, and the line it is about.
type streamError struct {
	Error cli.ErrorObject `json:"error"`
	Line  int             `json:"line"`
}

// lineFailure is a line the store could not check (the line itself was
// good): exit 8 rather than 2.
type lineFailure struct{ err error }

func (f lineFailure) Error() string { return f.err.Error() }

func appendStreamError(b []byte, err error, line int) []byte {
	obj := cli.ErrorObject{Code: cli.ExitUsage, Kind: "usage", Message: err.Error()}
	if _, ok := err.(lineFailure); ok {
		obj.Code, obj.Kind = cli.ExitFailure, "failure"
	}
	var out bytes.Buffer
	// Encoding two strings and two numbers cannot fail.
	_ = cli.WriteJSONLine(&out, streamError{Error: obj, Line: line})
	return append(b, bytes.TrimSuffix(out.Bytes(), []byte("\n"))...)
}

// run reads lines until EOF, writing one line for each non-blank input
// line. It returns how many lines were bad; err is an I/O or store failure
// that ends the stream.
func (s *streamer) run(in io.Reader, out io.Writer) (bad int, err error) {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	bad, err = s.loop(r, w)
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write: %w", ferr)
	}
	return bad, err
}

// lineReady reports whether a whole input line is already buffered, so that
// reading it cannot block.
func lineReady(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

func (s *streamer) loop(r *bufio.Reader, w *bufio.Writer) (bad int, err error) {
	var buf []byte
	for n := 1; ; n++ {
		line, tooLong, rerr := readLine(r)
		if rerr != nil && rerr != io.EOF {
			return bad, fmt.Errorf("read line %d: %w", n, rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			buf = buf[:0]
			var lerr error
			if tooLong {
				lerr = fmt.Errorf("line is longer than %d bytes", maxStreamLine)
			} else {
				var v laserbrain.CheckResult
				if v, lerr = s.check(line); lerr == nil {
					buf = v.AppendJSON(buf)
				} else if f, ok := lerr.(fatalError); ok {
					return bad, f.err
				}
			}
			if lerr != nil {
				bad++
				if _, ok := lerr.(lineFailure); ok {
					s.failed++
				}
				buf = appendStreamError(buf, lerr, n)
			}
			if _, werr := w.Write(append(buf, '\n')); werr != nil {
				return bad, fmt.Errorf("write: %w", werr)
			}
			// Every verdict for the input read so far leaves before the
			// stream could wait for more input; lines that arrived together
			// leave together, in one write.
			if !lineReady(r) {
				if werr := w.Flush(); werr != nil {
					return bad, fmt.Errorf("write: %w", werr)
				}
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

// check runs one line against its run.
func (s *streamer) check(line []byte) (laserbrain.CheckResult, error) {
	in, run, err := parseStreamLineInterned(line, &s.intern)
	if err != nil {
		return laserbrain.CheckResult{}, err
	}
	id, newRun := run.ID, run.New
	if id == "" {
		if s.defaultRun == "" {
			s.defaultRun, s.fresh = laserbrain.NewRunID(), true
			newRun = true
		}
		id = s.defaultRun
	}
	h := s.handles[id]
	if h == nil && !(s.fresh && id == s.defaultRun) {
		r, err := s.agents.lookup(context.Background(), id)
		if err != nil {
			return laserbrain.CheckResult{}, lineFailure{err}
		}
		if r != nil {
			v, _, err := s.agents.check(context.Background(), r, in, run.New, lineRunWords, agentrun.ViaStream)
			if cli.CodeOf(err) == cli.ExitFailure {
				return v, lineFailure{err}
			}
			return v, err
		}
	}
	switch {
	case h != nil && run.New:
		return laserbrain.CheckResult{}, fmt.Errorf("run %q exists already: drop \"new_run\" to continue it", id)
	case h == nil:
		if h, err = openCheckedRun(context.Background(), s.store, id, newRun, lineRunWords); err != nil {
			if cli.CodeOf(err) == cli.ExitFailure {
				return laserbrain.CheckResult{}, lineFailure{err}
			}
			return laserbrain.CheckResult{}, err
		}
		s.handles[id] = h
	}
	s.dirty[id] = true
	v, err := h.Run().Step(in)
	if err != nil {
		return laserbrain.CheckResult{}, err
	}
	if sp, ok := h.(spiller); ok {
		if err := sp.Spill(); err != nil {
			return laserbrain.CheckResult{}, fatalError{fmt.Errorf("run %s: %w", id, err)}
		}
	}
	return v, nil
}

var lineRunWords = runWords{
	missing: `to start a new run under this id, add "new_run": true to the line`,
	exists:  `drop "new_run" to continue it, or choose another id`,
}

// fatalError ends the stream: the store failed, not the line.
type fatalError struct{ err error }

func (f fatalError) Error() string { return f.err.Error() }

// spiller is a run handle that can move history out of memory between
// saves (the directory store does).
type spiller interface{ Spill() error }

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
	first := s.agents.close()
	for id, h := range s.handles {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.handles, id)
	}
	return first
}
