package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ClaudeVersion is the Claude Code CLI the end-to-end tests are written
// against (shared/spec/agents.md records what was observed with it).
const ClaudeVersion = "2.1.328"

// ClaudeCachePath is where scripts/install-claude.sh puts the pinned CLI.
func ClaudeCachePath() string {
	cache := os.Getenv("LASERKIT_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "laserkit")
	}
	return filepath.Join(cache, "claude-code", ClaudeVersion, "node_modules", ".bin", "claude")
}

// LocateClaude finds the Claude Code CLI: $LASERKIT_CLAUDE, else the cache
// scripts/install-claude.sh fills, else `claude` on PATH when it reports the
// pinned version. It returns "" and why when there is none.
func LocateClaude() (path, why string) {
	if p := os.Getenv("LASERKIT_CLAUDE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("LASERKIT_CLAUDE=%s: %v", p, err)
		}
		return p, ""
	}
	if p := ClaudeCachePath(); isExecutable(p) {
		return p, ""
	}
	if p, err := exec.LookPath("claude"); err == nil {
		out, _ := exec.Command(p, "--version").Output()
		if strings.HasPrefix(strings.TrimSpace(string(out)), ClaudeVersion) {
			return p, ""
		}
		return "", fmt.Sprintf("%s reports %q, not %s", p, strings.TrimSpace(string(out)), ClaudeVersion)
	}
	return "", "not in " + ClaudeCachePath() + " nor on PATH"
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Claude returns the CLI's path. Without one the test is skipped with a
// loud banner, or fails when CI=true: CI installs it (scripts/install-claude.sh).
func Claude(t testing.TB) string {
	t.Helper()
	p, why := LocateClaude()
	if p != "" {
		return p
	}
	banner := strings.Join([]string{
		"######################################################################",
		"## NO CLAUDE CODE CLI: " + why,
		"## The end-to-end agent tests are SKIPPED. Install it with",
		"##   scripts/install-claude.sh   (npm, @anthropic-ai/claude-code@" + ClaudeVersion + ")",
		"######################################################################",
	}, "\n")
	fmt.Fprintln(os.Stderr, banner)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and the Claude Code CLI is missing: %s", why)
	}
	t.Skip("no Claude Code CLI: " + why)
	return ""
}

// Session is one claude invocation's world: a fresh HOME, a work directory
// and the environment that points the CLI at the scripted model.
type Session struct {
	Claude string // the CLI
	Home   string // fresh per session: the CLI writes ~/.claude there
	Dir    string // the working directory (a project)
	Model  *Model
	// Env is added to the base environment (KEY=VALUE).
	Env []string
}

// NewSession makes a fresh HOME and work directory under the test's temp dir.
func NewSession(t testing.TB, claude string, model *Model) *Session {
	t.Helper()
	root := t.TempDir()
	s := &Session{Claude: claude, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "work"), Model: model}
	for _, d := range []string{s.Home, s.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// BaseEnv is the environment a scripted claude runs in: the process's PATH
// and little else (none of the caller's own Claude or Anthropic settings),
// HOME, the model's URL and a test key.
func (s *Session) BaseEnv() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Home,
		"USER=" + os.Getenv("USER"),
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=" + s.Model.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
	return append(env, s.Env...)
}

// Result is what one claude -p run produced.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
	// JSON is the --output-format json result object, when stdout holds one.
	JSON map[string]any
}

// ClaudeArgs are the flags every scripted run needs: print mode, JSON
// output, and acceptEdits with an explicit tool list (as root,
// --dangerously-skip-permissions is refused).
func ClaudeArgs(prompt string, allowedTools ...string) []string {
	args := []string{"-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"}
	if len(allowedTools) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowedTools, " "))
	}
	return args
}

// Run starts name (usually s.Claude, or a wrapper such as laserbrain run)
// with args in s.Dir and waits up to two minutes.
func (s *Session) Run(t testing.TB, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	cmd.Env = s.BaseEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = nil
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v\nstderr: %s", name, err, errb.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("%s timed out\nstdout: %s\nstderr: %s", name, out.String(), errb.String())
	}
	// The JSON result is the last line that parses as an object.
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil && m["type"] == "result" {
			r.JSON = m
			break
		}
	}
	return r
}

// WriteJSON writes v as JSON to a file under s.Dir and returns its path.
func (s *Session) WriteJSON(t testing.TB, name string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
