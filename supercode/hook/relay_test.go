package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
)

// TestRelayFailsClosed: a confined hook whose broker runs something that
// ends with a status that is neither an answer nor a refusal (here the
// broker's program is a script that dies with 125) refuses the
// call, for the client to read as a refusal — a status handed on would be
// a non-blocking error, and the call would go on.
func TestRelayFailsClosed(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "b.sock")
	dies := filepath.Join(dir, "dies")
	if err := os.WriteFile(dies, []byte("#!/bin/sh\necho 'half an answer'\nexit 125\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &broker.Server{Self: dies, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/", Allow: func([]string) error { return nil }}
	if err := s.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer s.Close(5 * time.Second)
	t.Setenv(broker.EnvSocket, sock)
	in := `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/","tool_name":"Bash","tool_input":{"command":"ls"}}`
	var out, errb bytes.Buffer
	code := Run(context.Background(), PreToolUse, client.Claude, "", Binary{}, strings.NewReader(in), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "cannot reach the supervisor of this confined run") || !strings.Contains(errb.String(), "status 125") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want a refusal naming the status", code, out.String(), errb.String())
	}
}
