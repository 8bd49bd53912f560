package agenttest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/internal/testenv"
)

// Terminal is an interactive claude session on a pseudo-terminal (made by
// util-linux script(1)): the way a person runs Claude Code, with its
// permission prompts on screen. In this mode Claude Code tells its hooks
// CLAUDE_CODE_SESSION_ATTENDED=1 and CLAUDE_CODE_ENTRYPOINT=cli (seen with
// 2.1.328).
type Terminal struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	mu    sync.Mutex
	out   strings.Builder
	done  chan struct{}
	close sync.Once
}

// TrustHome writes the user config an interactive first run would ask for:
// onboarding done, the test's API key approved, the work directory trusted.
// Without it the session stops at those screens (2.1.328: "Detected a custom
// API key in your environment", whose default answer is No).
func (s *Session) TrustHome(t testing.TB) {
	t.Helper()
	key := "sk-test"
	cfg := fmt.Sprintf(`{"hasCompletedOnboarding":true,"theme":"dark","customApiKeyResponses":{"approved":[%q],"rejected":[]},"projects":{%q:{"hasTrustDialogAccepted":true,"allowedTools":[]}}}`,
		key[max(0, len(key)-20):], s.Dir)
	if err := os.WriteFile(filepath.Join(s.Home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Interactive starts claude with args (no -p) on a pseudo-terminal in
// s.Dir. It needs script(1) (util-linux); without it the test is skipped,
// or fails when CI=true. The session is killed when the test ends.
func (s *Session) Interactive(t testing.TB, args ...string) *Terminal {
	t.Helper()
	return s.InteractiveVia(t, s.Claude, args...)
}

// InteractiveVia is Interactive through a wrapper: name args… on the
// pseudo-terminal, e.g. laserbrain run -- claude.
func (s *Session) InteractiveVia(t testing.TB, name string, args ...string) *Terminal {
	t.Helper()
	script := testenv.LookPath(t, "script")
	line := shellquote.Word(name)
	for _, a := range args {
		line += " " + shellquote.Word(a)
	}
	tm := &Terminal{t: t, done: make(chan struct{})}
	tm.cmd = exec.Command(script, "-qfec", line, "/dev/null")
	tm.cmd.Dir = s.Dir
	tm.cmd.Env = append(s.BaseEnv(), "TERM=xterm-256color", "SHELL=/bin/sh")
	tm.cmd.Stdout, tm.cmd.Stderr = tm, tm
	var err error
	if tm.in, err = tm.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := tm.cmd.Start(); err != nil {
		t.Fatalf("starting claude on a terminal: %v", err)
	}
	go func() { _ = tm.cmd.Wait(); close(tm.done) }()
	t.Cleanup(tm.Close)
	return tm
}

func (tm *Terminal) Write(p []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Write(p)
}

var (
	// Cursor moves stand between the words of a line Claude Code draws.
	cursorMove = regexp.MustCompile(`\x1b\[[0-9;]*[ABCDGHf]`)
	escapes    = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[A-Za-z~]|\x1b\][^\a\x1b]*(\a|\x1b\\)|\x1b[78=>c]`)
	spaces     = regexp.MustCompile(`[\s\x{00a0}│]+`)
)

// Screen is everything drawn so far as plain text: escapes removed, a
// cursor move read as a space, box borders dropped, white space collapsed.
func (tm *Terminal) Screen() string {
	tm.mu.Lock()
	raw := tm.out.String()
	tm.mu.Unlock()
	s := cursorMove.ReplaceAllString(raw, " ")
	s = escapes.ReplaceAllString(s, "")
	return spaces.ReplaceAllString(s, " ")
}

// WaitFor waits up to a minute for text to be on the screen, then half a
// second more: a prompt just drawn does not take keys at once (a key sent
// right away was lost with 2.1.328).
func (tm *Terminal) WaitFor(text string) {
	tm.t.Helper()
	tm.WaitForAny(text)
}

// WaitForAny is WaitFor for the first of texts to be on the screen, which
// it returns.
func (tm *Terminal) WaitForAny(texts ...string) string {
	tm.t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		screen := tm.Screen()
		for _, text := range texts {
			if strings.Contains(screen, text) {
				time.Sleep(500 * time.Millisecond)
				return text
			}
		}
		select {
		case <-tm.done:
			tm.t.Fatalf("claude exited before showing %q; the screen:\n%s", texts, tm.tail())
		default:
		}
	}
	tm.t.Fatalf("claude did not show %q within a minute; the screen:\n%s", texts, tm.tail())
	return ""
}

// Started waits for claude's prompt, dismissing the offer of its
// fullscreen renderer on the way (2.1.328 makes it when it cannot keep,
// in a read-only ~/.claude.json, that it made it before).
func (tm *Terminal) Started() {
	tm.t.Helper()
	if tm.WaitForAny("for shortcuts", "Try the new fullscreen renderer?") != "for shortcuts" {
		tm.Type("\x1b")
		tm.WaitFor("for shortcuts")
	}
}

func (tm *Terminal) tail() string {
	s := tm.Screen()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// Type sends keys as a person would type them ("\r" is Enter).
func (tm *Terminal) Type(keys string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.in, keys); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

// Close ends the session as a person would (Ctrl-C twice), and kills it
// when it has not exited within five seconds.
func (tm *Terminal) Close() {
	tm.close.Do(func() {
		io.WriteString(tm.in, "\x03")
		time.Sleep(200 * time.Millisecond)
		io.WriteString(tm.in, "\x03")
		select {
		case <-tm.done:
		case <-time.After(5 * time.Second):
			_ = tm.cmd.Process.Kill()
			<-tm.done
		}
		tm.in.Close()
	})
}
