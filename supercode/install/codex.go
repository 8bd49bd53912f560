package install

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/client"
)

// Codex skips hooks nobody trusted, without a word. Trust is a hash of the
// hook kept in the user's config.toml ([hooks.state."KEY"] trusted_hash);
// laserbrain never computes it: `codex app-server` lists each hook with
// its key, current hash and trust status (hooks/list) and writes the
// trust (config/batchWrite), as Codex's own /hooks screen does.

// CodexHook is one hook as `codex app-server` lists it.
type CodexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Source      string `json:"source"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // trusted, untrusted, modified, managed
	Enabled     bool   `json:"enabled"`
}

// Ours reports whether the hook runs laserbrain for Codex.
func (h CodexHook) Ours() bool {
	p, ok := client.ParseCommand(h.Command, "")
	return ok && p.Client == client.Codex
}

// CodexTimeout bounds one conversation with `codex app-server`.
var CodexTimeout = 60 * time.Second

// codexServer is a running `codex app-server` spoken to on stdio.
type codexServer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
	errs strings.Builder
}

// startCodex starts `codex app-server` (bin) with env and the -c overrides
// args, and initializes the connection.
func startCodex(ctx context.Context, bin string, env []string, args ...string) (*codexServer, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"app-server"}, args...)...)
	cmd.Env = env
	s := &codexServer{cmd: cmd}
	cmd.Stderr = &s.errs
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.in, s.out = in, bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s app-server: %w", bin, err)
	}
	if err := s.call("initialize", map[string]any{"clientInfo": map[string]string{"name": "laserbrain", "version": "1"}}, nil); err != nil {
		s.close()
		return nil, err
	}
	if err := s.send(map[string]any{"method": "initialized"}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *codexServer) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// call sends one request and reads its response, passing over the
// server's notifications.
func (s *codexServer) call(method string, params, result any) error {
	s.next++
	id := s.next
	if err := s.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("codex app-server %s: %w", method, err)
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("codex app-server %s: no answer (%v): %s", method, err, strings.TrimSpace(s.errs.String()))
		}
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Result json.RawMessage  `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || string(*m.ID) != strconv.Itoa(id) {
			continue // a notification, or not for us
		}
		if m.Error != nil {
			return fmt.Errorf("codex app-server %s: %s", method, m.Error.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(m.Result, result)
	}
}

func (s *codexServer) close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// hooks lists the hooks Codex sees for a working directory.
func (s *codexServer) hooks(dir string) ([]CodexHook, []string, error) {
	var res struct {
		Data []struct {
			Hooks  []CodexHook `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
				Path    string `json:"path"`
			} `json:"errors"`
			Warnings []string `json:"warnings"`
		} `json:"data"`
	}
	if err := s.call("hooks/list", map[string]any{"cwds": []string{dir}}, &res); err != nil {
		return nil, nil, err
	}
	var hooks []CodexHook
	var problems []string
	for _, d := range res.Data {
		hooks = append(hooks, d.Hooks...)
		for _, e := range d.Errors {
			problems = append(problems, e.Path+": "+e.Message)
		}
		problems = append(problems, d.Warnings...)
	}
	return hooks, problems, nil
}

// trust marks hooks trusted at their current hash, in the user's config.
func (s *codexServer) trust(hooks []CodexHook) error {
	if len(hooks) == 0 {
		return nil
	}
	var edits []map[string]any
	for _, h := range hooks {
		// The key in quotes, as a TOML key; not json.Marshal's, which
		// writes < and > as \u003c and \u003e, which Codex's key path
		// does not read back (a session layer's keys start
		// "/<session-flags>/").
		key := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(h.Key) + `"`
		edits = append(edits, map[string]any{"keyPath": "hooks.state." + key, "mergeStrategy": "upsert",
			"value": map[string]string{"trusted_hash": h.CurrentHash}})
	}
	return s.call("config/batchWrite", map[string]any{"edits": edits}, nil)
}

// CodexOptions say which Codex to ask about which directory.
type CodexOptions struct {
	// Bin is the codex program.
	Bin string
	// Env is its environment (CODEX_HOME and HOME as the user has them).
	Env []string
	// Dir is the project whose hooks are listed.
	Dir string
	// Overrides are -c KEY=VALUE settings for this conversation (a
	// session layer, as laserbrain run passes them to codex).
	Overrides []string
}

func (o CodexOptions) args() []string {
	var a []string
	for _, c := range o.Overrides {
		a = append(a, "-c", c)
	}
	return a
}

// CodexHooks lists the hooks Codex sees for o.Dir, and the problems it
// reports with their files.
func CodexHooks(ctx context.Context, o CodexOptions) ([]CodexHook, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, CodexTimeout)
	defer cancel()
	s, err := startCodex(ctx, o.Bin, o.Env, o.args()...)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	return s.hooks(o.Dir)
}

// TrustCodex trusts laserbrain's hooks that Codex sees for o.Dir and does
// not trust yet (untrusted, or modified since a reinstall changed their
// command), and returns them; hooks that are not ours are left as they
// are. It fails when none of ours is there to trust.
func TrustCodex(ctx context.Context, o CodexOptions) ([]CodexHook, error) {
	ctx, cancel := context.WithTimeout(ctx, CodexTimeout)
	defer cancel()
	s, err := startCodex(ctx, o.Bin, o.Env, o.args()...)
	if err != nil {
		return nil, err
	}
	defer s.close()
	hooks, problems, err := s.hooks(o.Dir)
	if err != nil {
		return nil, err
	}
	var todo []CodexHook
	found := 0
	for _, h := range hooks {
		if !h.Ours() {
			continue
		}
		found++
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
			todo = append(todo, h)
		}
	}
	if found == 0 {
		msg := "codex lists none of laserbrain's hooks for " + o.Dir
		if len(problems) > 0 {
			msg += " (" + strings.Join(problems, "; ") + ")"
		}
		return nil, errors.New(msg)
	}
	if err := s.trust(todo); err != nil {
		return nil, err
	}
	return todo, nil
}
