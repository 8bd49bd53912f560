package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func runCheckStream(opts *checkOptions) error {
	if len(opts.stateFlags) > 0 {
		return cli.Usagef("--%s cannot be used with --stream: each line carries its own state", opts.stateFlags[0])
	}
	if opts.run != "" {
		if err := laserbrain.ValidateRunID(opts.run); err != nil {
			return cli.Usagef("%s: %v", opts.runSource(), err)
		}
	}
	open := opts.RunStore
	if opts.StreamStore != nil {
		open = opts.StreamStore
	}
	store, err := open()
	if err != nil {
		return cli.Failure(err)
	}
	s := newStreamer(store, opts.run, agentrun.NewChecks(opts.Tracker()))
	s.onlyRun = opts.onlyRun
	if opts.run != "" {
		// The --run run is checked before any line is read: a mistyped id
		// fails the whole stream, not each line.
		r, err := s.agents.Registered(context.Background(), opts.run)
		if err == nil && r == nil {
			var h laserbrain.RunHandle
			if h, err = agentrun.OpenUnregistered(context.Background(), store, opts.run, opts.newRun); err == nil {
				s.handles[opts.run] = h
			}
		}
		err = runError(err, opts.runWords())
		if err == nil && r != nil && opts.newRun && r.Checks > 0 {
			err = cli.Usagef("run %q exists already: %s", opts.run, flagRunWords.exists)
		}
		if err != nil {
			_ = s.close()
			_ = store.Close()
			return err
		}
	}
	if opts.onlyRun == "" {
		// In the supervisor's process the signals are the supervisor's:
		// the stream ends when its agent's input does.
		stopOnSignal(s, store)
	}
	bad, err := s.run(opts.IO.In, opts.IO.Out)
	var endless *endlessLineError
	if errors.As(err, &endless) {
		err = nil
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if cerr := store.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("context store not saved: %w", cerr)
	}
	switch {
	case err != nil:
		return cli.Failure(err)
	case endless != nil:
		return cli.Usagef("%v", endless)
	}
	switch {
	case s.failed > 0:
		return cli.SilentExit(cli.ExitFailure)
	case bad > 0:
		return cli.SilentExit(cli.ExitUsage)
	}
	return nil
}

// stopOnSignal makes SIGTERM and an interrupt end the stream as its input's
// end would, but at once: the batch in flight is committed and answered,
// the store closed, and then the process goes as the signal says (killed
// by it, exit status 128+N to a shell). A stream waiting for input has
// nothing uncommitted; one in the middle of a line finishes that line
// first.
func stopOnSignal(s *streamer, store laserbrain.Store) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	go func() {
		sig := <-sigs
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "laserbrain: %v\n", err)
		}
		_ = store.Close()
		signal.Reset(sig)
		if n, ok := sig.(syscall.Signal); ok {
			_ = syscall.Kill(os.Getpid(), n)
			time.Sleep(time.Second) // the signal is on its way
			os.Exit(128 + int(n))
		}
		os.Exit(int(cli.ExitFailure))
	}()
}

// maxStreamLine bounds one input line; a longer line is reported as bad and
// skipped, and the stream goes on — unless no line end comes within
// maxStreamSkip bytes of its start: then the line is reported and the
// stream ends (endlessLineError), so that input with no line end at all
// (/dev/zero) ends it after a bounded read, in bounded memory.
const (
	maxStreamLine = 1 << 20
	maxStreamSkip = 16 << 20
)

// endlessLineError ends a stream whose line went on past maxStreamSkip
// bytes without a line end.
type endlessLineError struct{ line int }

func (e *endlessLineError) Error() string {
	return fmt.Sprintf("line %d: longer than %d bytes (the line limit), and no line end came within %d bytes: the stream ends here",
		e.line, maxStreamLine, maxStreamSkip)
}

// The stream's group commit: the checks of the lines read since the last
// commit are made durable together, then answered. A batch is committed
// when no whole line is waiting in the input (its answers are due), when it
// holds batchMax lines, when its first line was read batchWindow ago, at
// the end of the input, and on SIGTERM or an interrupt.
var (
	batchMax    = 4096
	batchWindow = 50 * time.Millisecond
)

// heldRuns is how many runs a stream keeps open between commits: past it,
// the runs idle longest are closed once the commit has made them durable,
// and one a later line names again is reopened. A stream over many runs
// then holds as much memory and as many locks as one over heldRuns.
var heldRuns = 1024

// streamer checks a stream of states, holding the runs it touched last
// open (heldRuns of them) for the next line on them.
type streamer struct {
	store      laserbrain.Store
	defaultRun string
	handles    map[string]laserbrain.RunHandle
	dirty      map[string]bool
	// used is when each held run was last stepped (a count of lines).
	used   map[string]int
	lines  int
	intern interner
	bad    int // lines answered with an error
	failed int // lines the store could not check (a run held elsewhere too long)
	// agents are the registered agent runs: their lines are checked
	// through their supervision (agentrun.Tracker.CheckBatch), a batch
	// at a time.
	agents *agentrun.Checks
	// fresh: defaultRun is an id the stream made up (nobody registered it).
	fresh bool
	// onlyRun is the one run a confined agent's stream may check ("":
	// any).
	onlyRun string

	// The batch: every line read since the last commit, in order, and
	// when the first of them was read. mu is held while a line is handled
	// or a batch committed, so a signal commits between lines, never in
	// the middle of one.
	mu      sync.Mutex
	w       *bufio.Writer
	batch   []pending
	batchAt time.Time
	stopped bool // a signal committed the batch: read nothing more
}

// pending is one line of the batch: its answer once known, or the
// registered run whose batch checks it at the commit.
type pending struct {
	line   int
	answer []byte // the verdict or the error object, without its line feed
	// verdict is a registered run's verdict, written as the answer when
	// the batch is answered (no copy of its own in between).
	verdict *laserbrain.CheckResult
	err     error
	agent   *fleet.Run // a line on a registered run, checked at the commit
	in      laserbrain.StepInput
	newRun  bool
	local   bool // a verdict of laserbrain's store: durable at the commit's flush
}

func newStreamer(store laserbrain.Store, defaultRun string, agents *agentrun.Checks) *streamer {
	return &streamer{store: store, defaultRun: defaultRun, handles: map[string]laserbrain.RunHandle{},
		dirty: map[string]bool{}, used: map[string]int{}, agents: agents}
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
	// A large read buffer: lines that arrive together are read together,
	// and committed as one batch.
	r := bufio.NewReaderSize(in, 256<<10)
	s.mu.Lock()
	s.w = bufio.NewWriterSize(out, 64<<10)
	s.mu.Unlock()
	err = s.loop(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ferr := s.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write: %w", ferr)
	}
	return s.bad, err
}

// lineReady reports whether a whole input line is already buffered, so that
// reading it cannot block.
func lineReady(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

func (s *streamer) loop(r *bufio.Reader) error {
	for n := 1; ; n++ {
		line, tooLong, rerr := readLine(r)
		endless := errors.Is(rerr, errEndlessLine)
		if rerr != nil && rerr != io.EOF && !endless {
			return fmt.Errorf("read line %d: %w", n, rerr)
		}
		s.mu.Lock()
		err := s.take(n, line, tooLong)
		// Every verdict for the input read so far leaves before the stream
		// could wait for more input, and only once its check is durable.
		if err == nil && (rerr != nil || !lineReady(r) || len(s.batch) >= batchMax ||
			(len(s.batch) > 0 && time.Since(s.batchAt) >= batchWindow)) {
			err = s.commit()
		}
		stopped := s.stopped
		s.mu.Unlock()
		if err == nil && endless {
			err = &endlessLineError{line: n}
		}
		if err != nil || rerr != nil || stopped {
			return err
		}
	}
}

// take handles one input line: a line for laserbrain's store is checked
// now (its verdict waits for the commit), a registered run's line is
// queued for its run's batch. The caller holds s.mu.
func (s *streamer) take(n int, line []byte, tooLong bool) error {
	if len(bytes.TrimSpace(line)) == 0 && !tooLong {
		return nil
	}
	if len(s.batch) == 0 {
		s.batchAt = time.Now()
	}
	p := pending{line: n}
	switch {
	case tooLong:
		p.err = fmt.Errorf("line is longer than %d bytes (the line limit)", maxStreamLine)
	default:
		var err error
		if p, err = s.check(p, line); err != nil {
			if f, ok := err.(fatalError); ok {
				return f.err
			}
			p.err = err
		}
	}
	s.batch = append(s.batch, p)
	return nil
}

// stop commits the batch and answers it, and keeps the stream from reading
// on: what SIGTERM or an interrupt does before the process goes.
func (s *streamer) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.w == nil {
		return nil
	}
	err := s.commit()
	if ferr := s.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write: %w", ferr)
	}
	return err
}

// commit makes the batch durable and writes its answers, in input order:
// the registered runs' lines are checked, a batch per run
// (agentrun.Tracker.CheckBatch), the runs of laserbrain's store saved
// and the store flushed (one fsync), and only then is any of it answered.
// A verdict whose check could not be made durable is answered with an
// error saying so, never as a verdict. The caller holds s.mu.
func (s *streamer) commit() error {
	if len(s.batch) == 0 {
		return nil
	}
	ctx := context.Background()
	// The registered runs' lines, a batch per run in the order the runs
	// first appear.
	var order []string
	queued := map[string][]int{}
	for i := range s.batch {
		if a := s.batch[i].agent; a != nil && s.batch[i].err == nil {
			if queued[a.ID] == nil {
				order = append(order, a.ID)
			}
			queued[a.ID] = append(queued[a.ID], i)
		}
	}
	for _, id := range order {
		s.checkAgent(ctx, queued[id])
	}
	var fatal error
	if err := s.persist(); err != nil {
		fatal = err
		for i := range s.batch {
			if s.batch[i].local && s.batch[i].err == nil {
				s.batch[i].err = lineFailure{fmt.Errorf("not saved, so not answered: %w", err)}
			}
		}
	}
	var buf []byte
	for i := range s.batch {
		p := &s.batch[i]
		buf = buf[:0]
		if p.err != nil {
			s.bad++
			if _, ok := p.err.(lineFailure); ok {
				s.failed++
			}
			buf = appendStreamError(buf, p.err, p.line)
		} else if p.verdict != nil {
			buf = p.verdict.AppendJSON(buf)
		} else {
			buf = append(buf, p.answer...)
		}
		if _, err := s.w.Write(append(buf, '\n')); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	s.batch = s.batch[:0]
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if fatal != nil {
		return fatal
	}
	return s.evict()
}

// checkAgent checks the lines at idx, all on one registered run, as one
// batch of its supervision.
func (s *streamer) checkAgent(ctx context.Context, idx []int) {
	r := s.batch[idx[0]].agent
	ins := make([]agentrun.CheckInput, 0, len(idx))
	take := make([]int, 0, len(idx))
	for _, i := range idx {
		p := &s.batch[i]
		if p.newRun && r.Checks+len(take) > 0 {
			p.err = fmt.Errorf("run %q exists already: %s", r.ID, lineRunWords.exists)
			continue
		}
		ins = append(ins, agentrun.CheckInput{StepInput: p.in, Via: agentrun.ViaStream})
		take = append(take, i)
	}
	if len(ins) == 0 {
		return
	}
	outs, err := s.agents.CheckBatch(ctx, r, ins)
	for k, i := range take {
		p := &s.batch[i]
		if err != nil {
			p.err = lineFailure{err}
			continue
		}
		p.verdict = &outs[k].CheckResult
	}
}

// errEndlessLine is readLine's report of a line with no end within
// maxStreamSkip bytes.
var errEndlessLine = errors.New("no line end within the bound")

// readLine returns the next line without its terminator. A line longer than
// maxStreamLine is consumed and reported as tooLong; one that goes on past
// maxStreamSkip is reported as tooLong with errEndlessLine, the rest of it
// left unread.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	var long []byte
	read := 0
	for {
		chunk, err := r.ReadSlice('\n')
		read += len(chunk)
		switch {
		case err == bufio.ErrBufferFull:
			if !tooLong {
				long = append(long, chunk...)
				if len(long) > maxStreamLine {
					tooLong, long = true, nil
				}
			}
			if read > maxStreamSkip {
				return nil, true, errEndlessLine
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

// check reads one line: a line for laserbrain's store is stepped now, and
// a registered run's is queued for the commit (p.agent).
func (s *streamer) check(p pending, line []byte) (pending, error) {
	in, run, err := parseStreamLineInterned(line, &s.intern)
	if err != nil {
		return p, err
	}
	id, newRun := run.ID, run.New
	if id == "" {
		if s.defaultRun == "" {
			s.defaultRun, s.fresh = laserbrain.NewRunID(), true
			newRun = true
		}
		id = s.defaultRun
	}
	if s.onlyRun != "" && id != s.onlyRun {
		return p, fmt.Errorf("run %q: an agent checks only its own run (%s)", id, s.onlyRun)
	}
	h := s.handles[id]
	if h == nil && !(s.fresh && id == s.defaultRun) {
		r, err := s.agents.Registered(context.Background(), id)
		if err != nil {
			return p, lineFailure{err}
		}
		if r != nil {
			p.agent, p.in, p.newRun = r, in, run.New
			return p, nil
		}
	}
	switch {
	case h != nil && run.New:
		return p, fmt.Errorf("run %q exists already: drop \"new_run\" to continue it", id)
	case h == nil:
		if h, err = agentrun.OpenUnregistered(context.Background(), s.store, id, newRun); err != nil {
			if err = runError(err, lineRunWords); cli.CodeOf(err) == cli.ExitFailure {
				return p, lineFailure{err}
			}
			return p, err
		}
		s.handles[id] = h
	}
	s.dirty[id] = true
	s.lines++
	s.used[id] = s.lines
	v, err := h.Run().Step(in)
	if err != nil {
		return p, err
	}
	if sp, ok := h.(spiller); ok {
		if err := sp.Spill(); err != nil {
			return p, fatalError{fmt.Errorf("run %s: %w", id, err)}
		}
	}
	p.answer, p.local = v.AppendJSON(nil), true
	return p, nil
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

// persist saves every run changed since the last commit, then flushes the
// store: every step so far is durable when it returns. A store that saves
// several runs at once (laserbrain.BatchSaver) saves them together.
func (s *streamer) persist() error {
	ctx := context.Background()
	if bs, ok := s.store.(laserbrain.BatchSaver); ok && len(s.dirty) > 1 {
		// One transaction for the batch's runs (a database store).
		hs := make([]laserbrain.RunHandle, 0, len(s.dirty))
		for id := range s.dirty {
			hs = append(hs, s.handles[id])
		}
		if err := bs.SaveRuns(ctx, hs); err != nil {
			return fmt.Errorf("runs not saved: %w", err)
		}
		clear(s.dirty)
	}
	for id := range s.dirty {
		if err := s.handles[id].Save(ctx); err != nil {
			return fmt.Errorf("run %s not saved: %w", id, err)
		}
		delete(s.dirty, id)
	}
	if err := s.store.Flush(ctx); err != nil {
		return fmt.Errorf("context store not saved: %w", err)
	}
	return nil
}

// evict closes the runs idle longest once more than a quarter over
// heldRuns are open, down to heldRuns (a sort paid once per heldRuns/4 new
// runs, not at every line). It runs after a commit: every run is durable
// and answered.
func (s *streamer) evict() error {
	if len(s.handles) <= heldRuns+heldRuns/4 {
		return nil
	}
	type held struct {
		id   string
		used int
	}
	ids := make([]held, 0, len(s.handles))
	for id := range s.handles {
		ids = append(ids, held{id, s.used[id]})
	}
	slices.SortFunc(ids, func(a, b held) int { return cmp.Compare(a.used, b.used) })
	for _, e := range ids[:len(ids)-heldRuns] {
		id := e.id
		h := s.handles[id]
		delete(s.handles, id)
		delete(s.used, id)
		s.agents.Forget(id)
		if err := h.Close(); err != nil {
			return fmt.Errorf("run %s not closed: %w", id, err)
		}
	}
	return nil
}

// close releases every run.
func (s *streamer) close() error {
	first := s.agents.Tracker.Close()
	for id, h := range s.handles {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.handles, id)
		delete(s.used, id)
	}
	return first
}
