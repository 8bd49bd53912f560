package vectors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/text"
)

// RunOptions say what to run an implementation on.
type RunOptions struct {
	// Command starts the implementation: the program and its arguments.
	Command []string
	// Dir and Env are its working directory and environment (nil: ours).
	Dir string
	Env []string
	// Kinds limits the run to these kinds (nil: every kind the files have).
	Kinds []string
	// Timeout bounds each case's answer (0: DefaultCaseTimeout); the
	// handshake and the stop have their own bounds.
	Timeout time.Duration
	// Limit sends at most this many cases of each file (0: all), for a
	// quick look at a slow implementation.
	Limit int
}

// Timeouts of the protocol.
const (
	DefaultCaseTimeout = 30 * time.Second
	handshakeTimeout   = 20 * time.Second
	stopTimeout        = 5 * time.Second
)

// VectorFile is one file to run: its name in reports and its contents.
type VectorFile struct {
	Name string
	Data []byte
}

// Run is one implementation's run over vector files.
type Run struct {
	// Impl is what the implementation said of itself.
	Impl Ready
	// Reports has one report per kind, in kind order.
	Reports []*Report
	// Restarts counts the times the implementation was started again after
	// it crashed or hung.
	Restarts int
}

// ErrNotStarted is an implementation that could not be started or did
// not answer hello: nothing was run.
var ErrNotStarted = errors.New("the implementation did not start")

// RunImplementation starts the implementation, sends it every case of the
// files' kinds it supports, one at a time, and compares each answer with
// the expected one. An implementation that crashes or hangs on a case has
// that case marked errored and is started again for the next; one that
// cannot be started (or restarted) has its remaining cases marked errored.
func RunImplementation(ctx context.Context, opts RunOptions, files []VectorFile) (*Run, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("no implementation command")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCaseTimeout
	}
	work, err := workOf(opts, files)
	if err != nil {
		return nil, err
	}

	p := &process{opts: opts}
	defer p.kill()
	ready, err := p.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	run := &Run{Impl: ready}
	supports := map[string]bool{}
	for _, k := range ready.Kinds {
		supports[k] = true
	}
	byKind := map[string]*Report{}
	report := func(kind string) *Report {
		r, ok := byKind[kind]
		if !ok {
			r = &Report{Impl: implName(ready), Kind: kind}
			byKind[kind] = r
		}
		return r
	}
	nextID := 0
	dead := "" // why the implementation can no longer be run
	for _, fc := range work {
		r := report(fc.kind.Name)
		prefix := ""
		if len(work) > 1 {
			prefix = fc.name + " "
		}
		if !fc.kind.Runnable() {
			r.Skipped++
			r.SkipWhy = "this kind is checked whole files at a time, in process; it has no per-case form"
			continue
		}
		if !supports[fc.kind.Name] {
			r.Skipped += len(fc.cases)
			r.SkipWhy = "the implementation does not list this kind"
			continue
		}
		for _, c := range fc.cases {
			c.Label = prefix + c.Label
			for i := range c.Parts {
				c.Parts[i] = prefix + c.Parts[i]
			}
			if dead != "" {
				r.Score(fc.kind, c, nil, errors.New(dead))
				continue
			}
			if err := ctx.Err(); err != nil {
				return run, err
			}
			nextID++
			ans, err := p.ask(ctx, CaseMessage{Op: "case", ID: nextID, Kind: fc.kind.Name, Label: c.Label, In: c.In})
			switch {
			case err != nil:
				r.Score(fc.kind, c, nil, err)
				if !p.alive() {
					run.Restarts++
					if _, rerr := p.start(ctx); rerr != nil {
						dead = "not run: the implementation could not be started again after it failed: " + rerr.Error()
					}
				}
			case ans.Skip != nil:
				r.Skipped += max(1, len(c.Parts))
				if r.SkipWhy == "" {
					r.SkipWhy = "the implementation skipped: " + *ans.Skip
				}
			case ans.Error != nil:
				r.Score(fc.kind, c, nil, errors.New(*ans.Error))
			default:
				r.Score(fc.kind, c, ans.Out, nil)
			}
		}
	}
	p.stop()
	for _, name := range KindNames() {
		if r, ok := byKind[name]; ok {
			run.Reports = append(run.Reports, r)
		}
	}
	return run, nil
}

// fileCases are the cases of one vector file, to run in its kind.
type fileCases struct {
	name  string
	kind  *Kind
	cases []Case
}

// workOf are the files' cases, of the kinds asked for (all when none is)
// and at most opts.Limit of a file; a kind that has no per-case form has
// none.
func workOf(opts RunOptions, files []VectorFile) ([]fileCases, error) {
	want := map[string]bool{}
	for _, k := range opts.Kinds {
		if _, err := Lookup(k); err != nil {
			return nil, err
		}
		want[k] = true
	}
	var work []fileCases
	for _, f := range files {
		d, err := Decode(f.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if len(want) > 0 && !want[d.Kind] {
			continue
		}
		k, _ := Lookup(d.Kind)
		var cases []Case
		if k.Runnable() {
			if cases, err = CasesOf(k, d); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			if opts.Limit > 0 && len(cases) > opts.Limit {
				cases = cases[:opts.Limit]
			}
		}
		work = append(work, fileCases{f.Name, k, cases})
	}
	return work, nil
}

func implName(r Ready) string {
	s := r.Name
	if r.Version != "" {
		s += " " + r.Version
	}
	if r.Language != "" {
		s += " (" + r.Language + ")"
	}
	return s
}

// process is the implementation's process and the two ends of its pipes.
type process struct {
	opts   RunOptions
	cmd    *exec.Cmd
	stdin  *os.File      // a pipe, so a write has a deadline
	lines  chan []byte   // stdout, line by line; closed at EOF
	quit   chan struct{} // closed when the process is let go
	done   chan struct{}
	stderr *tailBuffer
	err    error // how it ended, once done is closed
}

// start (re)starts the implementation and shakes hands.
func (p *process) start(ctx context.Context) (Ready, error) {
	p.kill()
	cmd := exec.Command(p.opts.Command[0], p.opts.Command[1:]...)
	cmd.Dir, cmd.Env = p.opts.Dir, p.opts.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.stderr = &tailBuffer{max: 8 << 10}
	cmd.Stderr = p.stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		return Ready{}, err
	}
	cmd.Stdin = inR
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return Ready{}, err
	}
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		return Ready{}, err
	}
	inR.Close()
	p.cmd, p.stdin = cmd, inW
	p.lines, p.quit, p.done = make(chan []byte), make(chan struct{}), make(chan struct{})
	go func(lines chan<- []byte, quit <-chan struct{}) {
		defer close(lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-quit:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}(p.lines, p.quit)
	go func(cmd *exec.Cmd, done chan struct{}) {
		p.err = cmd.Wait()
		close(done)
	}(cmd, p.done)

	var ready Ready
	serr := p.send(Hello{Op: "hello", Protocol: ProtocolVersion})
	line, err := p.read(ctx, handshakeTimeout)
	if err != nil {
		if serr != nil {
			return Ready{}, p.why(serr)
		}
		return Ready{}, err
	}
	// A process may write its ready line and end without reading the
	// hello: what it wrote is judged all the same.
	if err := ParseMessage("ready", line, &ready); err != nil {
		return Ready{}, fmt.Errorf("%v (it said %s)", err, text.Clip(strings.TrimSpace(string(line)), 200))
	}
	return ready, nil
}

// send writes one message; an implementation that stops reading its input
// fails the write after the case timeout.
func (p *process) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_ = p.stdin.SetWriteDeadline(time.Now().Add(p.opts.Timeout))
	_, err = p.stdin.Write(append(b, '\n'))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.kill()
		return fmt.Errorf("it stopped reading its input for %s (stopped it)%s", p.opts.Timeout, p.stderrTail())
	}
	return err
}

// read waits for the next line, at most d; a process that ends or stays
// silent is an error that says so.
func (p *process) read(ctx context.Context, d time.Duration) ([]byte, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case line, ok := <-p.lines:
		if !ok {
			return nil, p.why(errors.New("it closed its output"))
		}
		return line, nil
	case <-t.C:
		p.kill()
		return nil, fmt.Errorf("no answer within %s (stopped it)%s", d, p.stderrTail())
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
}

// why explains a failed exchange: how the process ended, and the last of
// what it wrote to standard error.
func (p *process) why(err error) error {
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		return fmt.Errorf("%v%s", err, p.stderrTail())
	}
	status := "it exited"
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = fmt.Sprintf("it was killed by signal %d", ws.Signal())
		} else {
			status = fmt.Sprintf("it exited with status %d", ee.ExitCode())
		}
	} else if p.err == nil {
		status = "it exited with status 0"
	}
	return fmt.Errorf("%s before answering%s", status, p.stderrTail())
}

func (p *process) stderrTail() string {
	last := p.stderr.lastLine()
	if last == "" {
		return ""
	}
	return "; its last words on standard error: " + last
}

// ask sends one case and reads its answer.
func (p *process) ask(ctx context.Context, c CaseMessage) (Answer, error) {
	// A broken exchange ends the process: the runner starts it again for
	// the next case.
	if err := p.send(c); err != nil {
		if p.cmd != nil {
			err = p.why(err)
		}
		p.kill()
		return Answer{}, err
	}
	line, err := p.read(ctx, p.opts.Timeout)
	if err != nil {
		p.kill()
		return Answer{}, err
	}
	var a Answer
	if err := ParseMessage("answer", line, &a); err != nil {
		return Answer{}, fmt.Errorf("%v (it said %s)", err, text.Clip(strings.TrimSpace(string(line)), 200))
	}
	if a.ID != c.ID {
		return Answer{}, fmt.Errorf("the answer is to case id %d, not %d", a.ID, c.ID)
	}
	return a, nil
}

func (p *process) alive() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop asks the implementation to finish and waits for it, a bounded time.
func (p *process) stop() {
	if !p.alive() {
		return
	}
	if p.send(Stop{Op: "stop"}) == nil {
		_, _ = p.read(context.Background(), stopTimeout)
	}
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
	}
	p.kill()
}

// kill ends the implementation and everything it started (its process
// group), and waits for it.
func (p *process) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	if p.alive() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	close(p.quit)
	_ = p.stdin.Close()
	p.cmd = nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return text.Clip(strings.TrimSpace(lines[len(lines)-1]), 300)
}
