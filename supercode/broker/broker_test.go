package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func serve(t *testing.T, allow func([]string) error) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "b.sock")
	s := &Server{Self: "/bin/sh", Env: []string{"LASERBRAIN_HOME=/forced", "PATH=/usr/bin:/bin", EnvSocket + "=/nope"}, Dir: "/", Allow: allow}
	if err := s.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(5 * time.Second) })
	return sock
}

func TestRelayRunsWithTheSupervisorsEnvironment(t *testing.T) {
	sock := serve(t, func([]string) error { return nil })
	env := map[string]string{"LASERBRAIN_HOME": "/agents-own", "CLAUDE_CODE_SESSION_ID": "s1", "EVIL": "x"}
	var out, errb bytes.Buffer
	dir := t.TempDir()
	code, err := Relay(context.Background(), sock,
		[]string{"-c", `cat; echo "home=$LASERBRAIN_HOME session=$CLAUDE_CODE_SESSION_ID evil=$EVIL broker=$` + EnvSocket + ` dir=$(pwd)"; echo oops >&2; exit 3`},
		func(k string) string { return env[k] }, dir, strings.NewReader("payload\n"), &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
	want := "payload\nhome=/forced session=s1 evil= broker= dir=" + dir + "\n"
	if out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if errb.String() != "oops\n" {
		t.Errorf("stderr %q", errb.String())
	}
}

// An operation that never reads its standard input ends when it ends,
// though the caller's input stays open (a shell's, a pipe no one closes):
// the answer does not wait for an end of input that never comes.
func TestRelayOfAnOperationThatReadsNoInput(t *testing.T) {
	sock := serve(t, func([]string) error { return nil })
	pr, pw := io.Pipe()
	defer pw.Close() // never written, never closed before the answer
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		code, err := Relay(context.Background(), sock, []string{"-c", "echo answered; exit 4"}, func(string) string { return "" }, "", pr, &out, &bytes.Buffer{})
		if err == nil && code != 4 {
			err = fmt.Errorf("exit %d, want 4", code)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || out.String() != "answered\n" {
			t.Fatalf("%v, stdout %q", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer in 20s while the input stayed open")
	}
	// And the same operation reading its input gets all of it.
	code, err := Relay(context.Background(), sock, []string{"-c", "wc -c"}, func(string) string { return "" }, "", strings.NewReader(strings.Repeat("x", 200000)), &out, &bytes.Buffer{})
	if err != nil || code != 0 || !strings.Contains(out.String(), "200000") {
		t.Fatalf("exit %d %v, stdout %q", code, err, out.String())
	}
}

func TestRelayRefused(t *testing.T) {
	sock := serve(t, func(argv []string) error { return errors.New("not this") })
	var out, errb bytes.Buffer
	code, err := Relay(context.Background(), sock, []string{"-c", "touch /tmp/should-not"}, func(string) string { return "" }, "", nil, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if code != 2 || !strings.Contains(errb.String(), "refused") || !strings.Contains(errb.String(), "not this") {
		t.Errorf("exit %d stderr %q", code, errb.String())
	}
}

func TestRelayWithoutBroker(t *testing.T) {
	_, err := Relay(context.Background(), filepath.Join(t.TempDir(), "none.sock"), []string{"hook", "stop"}, func(string) string { return "" }, "", nil, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err %v, want ErrNoAnswer", err)
	}
}

// A broker that accepts and never answers: the relay gives up at its
// deadline.
func TestRelayDeadline(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mute.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Relay(ctx, sock, []string{"hook", "pre-tool-use"}, func(string) string { return "" }, "", strings.NewReader("{}"), &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v past a 300ms deadline", took)
	}
}

func TestOps(t *testing.T) {
	o := Ops{Run: "r1"}
	ok := [][]string{
		{"hook", "pre-tool-use"}, {"hook", "post-tool-use", "--client", "codex"}, {"hook", "pre-tool-use", "--format", "json"},
		{"hook", "stop", "--client=gemini"}, {"mcp"}, {"check", "--goal", "g", "--distance", "3"}, {"check", "--run", "r1", "--json"},
		{"ponder", "status"}, {"ponder", "report", "--html", "/anywhere"},
	}
	for _, a := range ok {
		if err := o.Allow(a); err != nil {
			t.Errorf("%v refused: %v", a, err)
		}
	}
	bad := [][]string{
		{}, {"authorize", "--", "git", "push"}, {"supervise", "release", "x"}, {"hook", "nope"}, {"hook", "stop", "--client", "evil"},
		{"hook", "stop", "--format", "x"}, {"hook", "stop", "--home", "/tmp"}, {"mcp", "--loop-call", "/home/x/fleet/halts", "--loop-role", "agent"},
		{"check", "--run", "other"}, {"check", "--new-run"}, {"check", "--stream"}, {"check", "extra"}, {"store", "init"}, {"install", "claude"},
	}
	for _, a := range bad {
		if err := o.Allow(a); err == nil {
			t.Errorf("%v allowed", a)
		}
	}
	lo := Ops{Run: "r2", LoopCall: "/h/loop/x/call-1", LoopRole: "agent"}
	if err := lo.Allow([]string{"mcp", "--loop-call", "/h/loop/x/call-1", "--loop-role", "agent"}); err != nil {
		t.Error(err)
	}
	if err := lo.Allow([]string{"mcp", "--loop-call", "/h/loop/x/call-2", "--loop-role", "agent"}); err == nil {
		t.Error("another call's server allowed")
	}
}

func TestOpsLoopInline(t *testing.T) {
	lo := Ops{Run: "r2", LoopCall: "/h/c", LoopRole: "judge"}
	if err := lo.Allow([]string{"mcp", "--loop-call=/h/c", "--loop-role=judge"}); err != nil {
		t.Error(err)
	}
	if err := lo.Allow([]string{"mcp", "--loop-call=/h/c", "--loop-role=agent"}); err == nil {
		t.Error("another role allowed")
	}
}

// A supervisor that answers streams in its own process accepts one on the
// agent's run; --run naming another is still refused.
func TestOpsStreams(t *testing.T) {
	o := Ops{Run: "r1", Streams: true}
	for _, a := range [][]string{{"check", "--stream"}, {"check", "--stream=true", "--run=r1"}} {
		if err := o.Allow(a); err != nil {
			t.Errorf("%v refused: %v", a, err)
		}
	}
	if err := o.Allow([]string{"check", "--stream", "--run", "r2"}); err == nil {
		t.Error("a stream on another run allowed")
	}
}

// Local answers in the broker's process what it takes, with the
// operation's environment (the supervisor's, the client's session
// variables), directory and input; what it leaves runs as a process, and
// a panic in it is status 125 (not an answer), the broker still serving.
func TestLocalAnswersInProcess(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "b.sock")
	s := &Server{Self: "/bin/sh", Env: []string{"LASERBRAIN_HOME=/forced", "PATH=/usr/bin:/bin"}, Dir: "/",
		Allow: func([]string) error { return nil },
		Local: func(_ context.Context, op Op) (int, bool) {
			switch op.Argv[0] {
			case "here":
				in, _ := io.ReadAll(op.Stdin)
				fmt.Fprintf(op.Stdout, "%s home=%s session=%s evil=%s dir=%s", in, op.Getenv("LASERBRAIN_HOME"),
					op.Getenv("CLAUDE_CODE_SESSION_ID"), op.Getenv("EVIL"), op.Dir)
				fmt.Fprint(op.Stderr, "note")
				return 4, true
			case "panic":
				panic("broken")
			}
			return 0, false
		}}
	if err := s.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(5 * time.Second) })
	env := map[string]string{"LASERBRAIN_HOME": "/agents-own", "CLAUDE_CODE_SESSION_ID": "s1", "EVIL": "x"}
	getenv := func(k string) string { return env[k] }
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code, err := Relay(context.Background(), sock, []string{"here"}, getenv, dir, strings.NewReader("payload"), &out, &errb)
	if err != nil || code != 4 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if want := "payload home=/forced session=s1 evil= dir=" + dir; out.String() != want || errb.String() != "note" {
		t.Errorf("stdout %q stderr %q, want %q and \"note\"", out.String(), errb.String(), want)
	}
	out.Reset()
	if code, err := Relay(context.Background(), sock, []string{"-c", "echo spawned"}, getenv, dir, nil, &out, &errb); err != nil || code != 0 || out.String() != "spawned\n" {
		t.Errorf("not taken: exit %d %v stdout %q", code, err, out.String())
	}
	if code, err := Relay(context.Background(), sock, []string{"panic"}, getenv, dir, nil, &out, &errb); err != nil || code != 125 {
		t.Errorf("a panic: exit %d %v, want 125", code, err)
	}
	out.Reset()
	if code, err := Relay(context.Background(), sock, []string{"here"}, getenv, dir, nil, &out, &errb); err != nil || code != 4 {
		t.Errorf("after a panic: exit %d %v", code, err)
	}
}
