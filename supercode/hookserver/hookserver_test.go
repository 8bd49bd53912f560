package hookserver

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A server is found by what decides its answers and nothing else: the
// binary, the store, the home, the database driver's variables; a
// session's variables (which come with each request) and their order
// change nothing, and a later value of a variable wins, as in a process
// started with the environment.
func TestSocketIsTheServersIdentity(t *testing.T) {
	short := shortTemp(t)
	self := filepath.Join(short, "laserbrain")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"TMPDIR=" + short, "LASERBRAIN_STORE=postgres:///a", "LASERBRAIN_HOME=/h", "PGPASSWORD=x", "CLAUDE_CODE_SESSION_ID=s1"}
	sock := func(env ...string) string {
		t.Helper()
		p, err := Socket(self, env)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := sock(base...)
	if !strings.HasPrefix(first, filepath.Join(short, "laserbrain-")) {
		t.Fatalf("the socket %s is not under the caller's TMPDIR", first)
	}
	same := [][]string{
		{base[4], base[3], base[2], base[1], base[0]},
		append(base[:len(base):len(base)], "CLAUDE_CODE_SESSION_ID=s2", "LASERBRAIN_RUN=r1"),
		append([]string{"LASERBRAIN_STORE=postgres:///other"}, base...),
	}
	for _, env := range same {
		if got := sock(env...); got != first {
			t.Errorf("%v: %s, want %s", env, got, first)
		}
	}
	for _, extra := range []string{"LASERBRAIN_STORE=postgres:///b", "LASERBRAIN_HOME=/h2", "PGSSLMODE=require", EnvIdle + "=1s"} {
		if got := sock(append(base[:len(base):len(base)], extra)...); got == first {
			t.Errorf("with %s: the same server", extra)
		}
	}
	if err := os.WriteFile(self, []byte("#!/bin/sh\n# another build\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := sock(base...); got == first {
		t.Error("another build of laserbrain reaches the old build's server")
	}
}

// The socket's directory is refused unless only its user may enter it.
func TestSocketDirectoryIsPrivate(t *testing.T) {
	short := shortTemp(t)
	self := filepath.Join(short, "lb")
	if err := os.WriteFile(self, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(short, "laserbrain-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Socket(self, []string{"TMPDIR=" + short}); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Fatalf("a directory others may enter: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(short, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Socket(self, []string{"TMPDIR=" + short}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a link in the directory's place: %v", err)
	}
}

// A server answers hook events and nothing else.
func TestAllowOnlyHooks(t *testing.T) {
	for _, argv := range [][]string{{"hook", "pre-tool-use"}, {"hook", "post-tool-use", "--client", "codex"}, {"hook", "pre-tool-use", "--format", "json"}} {
		if err := Allow(argv); err != nil {
			t.Errorf("%v refused: %v", argv, err)
		}
	}
	for _, argv := range [][]string{nil, {"hook", "serve"}, {"hook", "serve", "--socket", "/x"}, {"check", "--stream"}, {"mcp"}, {"act", "--", "rm"}, {"ponder"}, {"hook", "pre-tool-use", "--ok-status", "86"}} {
		if err := Allow(argv); err == nil {
			t.Errorf("%v allowed", argv)
		}
	}
}

// shortTemp is a temporary directory with a short path (a socket's path
// is at most 107 bytes), removed when t ends.
func shortTemp(t *testing.T) string {
	dir, err := os.MkdirTemp("/tmp", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
