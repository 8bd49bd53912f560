package loop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
)

// turn is one session turn: an agent call, or one attempt of one judge
// sample.
type turn struct {
	svc     *Service
	role    string
	step    int
	callDir string
	prompt  string // claude: the prompt (stdin); command: the last argument
	context string // command: its stdin
	system  string
	session string // claude: the session UUID; command: the pinned session id
	resume  bool   // claude: --resume the session rather than start it; messages: go on with its conversation
	// force, for a messages judge, mandates the verdict tool on the
	// turn's first request (tool_choice).
	force    bool
	childRun string
	env      []string // SCRIPT's exported environment at the call
	extraEnv []string
	label    string
	// stdout, for an agent, is where its answer goes as it comes (a
	// command's stdout); nil keeps it only in the result.
	stdout io.Writer
	// transcript, for a judge, is the file its turns are appended to.
	transcript string
}

type turnResult struct {
	interrupted bool
	// transport, when set, is why the session failed: it could not start,
	// the model service failed, or it crashed.
	transport string
	text      string // the answer: claude's result text; a command's stdout (judge: but its last line)
	lastLine  string // a command judge's last line (its verdict)
	tokens    int64
	session   string
	toolCalls int
	escalated string // a command's reason written to $LASERBRAIN_ESCALATE, or "exit 3"
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (l *Loop) runTurn(ctx context.Context, t turn) turnResult {
	if err := os.MkdirAll(t.callDir, 0o755); err != nil {
		return turnResult{transport: err.Error()}
	}
	switch t.svc.Kind {
	case KindCommand:
		return l.runCommandTurn(ctx, t)
	case KindMessages:
		return l.runMessagesTurn(ctx, t)
	}
	return l.runClaudeTurn(ctx, t)
}

// serviceEnv is a session's environment: SCRIPT's, the session's own run
// (so our hooks and MCP server find it), where the loop is, and the
// service's model settings.
func (l *Loop) serviceEnv(t turn) ([]string, error) {
	env := withoutKeys(t.env, agentrun.EnvRun, agentrun.EnvAgent, agentrun.EnvFleet, "LASERBRAIN_ROLE", "LASERBRAIN_SERVICE")
	env = append(env, agentrun.EnvRun+"="+t.childRun, agentrun.EnvAgent+"="+t.svc.Name, agentrun.EnvFleet+"="+l.fleetID,
		"LASERBRAIN_LOOP_RUN="+l.id, "RUN_DIR="+l.dir, "LASERBRAIN_ROLE="+t.role, "LASERBRAIN_SERVICE="+t.svc.Name,
		fmt.Sprintf("LASERBRAIN_LOOP_STEP=%d", t.step))
	s := t.svc
	if s.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+s.BaseURL)
	}
	if s.APIKey != "" {
		k, err := s.apiKey()
		if err != nil {
			return nil, err
		}
		env = append(env, "ANTHROPIC_API_KEY="+k)
	}
	if s.MaxTokens != "" {
		env = append(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS="+s.MaxTokens)
	}
	if s.Thinking != "" {
		env = append(env, "MAX_THINKING_TOKENS="+s.Thinking)
	}
	if s.Kind == KindCommand {
		if s.Model != "" {
			env = append(env, "LASERBRAIN_MODEL="+s.Model)
		}
		if t.system != "" {
			env = append(env, "LASERBRAIN_SYSTEM="+t.system)
		}
	}
	return append(env, t.extraEnv...), nil
}

func lookPath(dir string, env []string, file string) (string, error) {
	return interp.LookPathDir(dir, expand.ListEnviron(env...), file)
}

// runCommandTurn runs a command service: the prompt as its last argument,
// the context on stdin. Exit 0 is a completed session, 3 an escalation,
// anything else a transport failure.
func (l *Loop) runCommandTurn(ctx context.Context, t turn) turnResult {
	env, err := l.serviceEnv(t)
	if err != nil {
		return turnResult{transport: err.Error()}
	}
	xdir, xdone, err := l.exchange(t)
	if err != nil {
		return turnResult{transport: err.Error()}
	}
	defer xdone()
	escalate := filepath.Join(xdir, "escalate.txt")
	usage := filepath.Join(xdir, "usage.json")
	env = append(env, "LASERBRAIN_ESCALATE="+escalate, "LASERBRAIN_USAGE="+usage)
	if t.role == roleJudge {
		env = append(env, "LASERBRAIN_JUDGE_SESSION="+t.session, "LASERBRAIN_JUDGE_TRANSCRIPT="+t.transcript,
			"LASERBRAIN_VERDICT_SCHEMA="+filepath.Join(l.dir, "verdict.schema.json"))
	}
	path, err := lookPath(l.work, env, t.svc.Command[0])
	if err != nil {
		return turnResult{transport: fmt.Sprintf("service %s: %s cannot be started: %v", t.svc.Name, t.svc.Command[0], err)}
	}
	argv := append(slices.Clone(t.svc.Command), t.prompt)
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Dir, cmd.Env = l.work, env
	cmd.Stdin = strings.NewReader(t.context)
	errw := l.prefixed(t.label)
	cmd.Stderr = errw
	var out bytes.Buffer
	var last *lastLine
	switch {
	case t.role == roleJudge:
		last = newLastLine(l.prefixed(t.label))
		cmd.Stdout = io.MultiWriter(&out, last)
	case t.stdout != nil:
		cmd.Stdout = io.MultiWriter(&out, t.stdout)
	default:
		cmd.Stdout = &out
	}
	undo, err := l.confine(cmd, t)
	if err != nil {
		errw.Close()
		return turnResult{transport: fmt.Sprintf("service %s: %v", t.svc.Name, err)}
	}
	code, interrupted, err := l.runChild(ctx, cmd, true)
	undo()
	errw.Close()
	res := turnResult{interrupted: interrupted, session: t.session, text: out.String()}
	if last != nil {
		res.lastLine = last.finish()
		res.text = strings.TrimSuffix(strings.TrimRight(res.text, "\n"), res.lastLine)
	}
	if interrupted {
		return res
	}
	if err != nil {
		res.transport = fmt.Sprintf("service %s: %v", t.svc.Name, err)
		return res
	}
	if b, err := os.ReadFile(usage); err == nil {
		res.tokens = usageTokens(b)
	}
	reason := ""
	if b, err := os.ReadFile(escalate); err == nil {
		reason = strings.TrimSpace(string(b))
		if reason == "" {
			reason = "(no reason given)"
		}
	}
	switch {
	case code == 3 || reason != "":
		if reason == "" {
			reason = "(exit 3, no reason given)"
		}
		res.escalated = reason
	case code != 0:
		res.transport = fmt.Sprintf("service %s exited %d", t.svc.Name, code)
	}
	return res
}

// usageTokens reads reported usage as laserkit counts tokens everywhere
// (fleet.Usage.Total): input, output, and cache reads and writes.
func usageTokens(b []byte) int64 {
	var u client.MessagesUsage
	if json.Unmarshal(b, &u) != nil {
		return 0
	}
	return u.Usage().Total()
}

// sessionTokens is what a Claude Code session spent as its transcript
// records each model response (what laserbrain run counts), in the
// session's environment; reported when no transcript is found.
func sessionTokens(env []string, session string, reported int64) int64 {
	if session == "" {
		return reported
	}
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	u, ok, err := client.ClaudeSessionsUsage(getenv, []string{session})
	if err != nil || !ok {
		return reported
	}
	return u.Total()
}

// runClaudeTurn runs a Claude Code session (-p, stream-json) with our
// hooks and an MCP server answering into the call directory, renders its
// stream on stderr and reads its result.
func (l *Loop) runClaudeTurn(ctx context.Context, t turn) turnResult {
	env, err := l.serviceEnv(t)
	if err != nil {
		return turnResult{transport: err.Error()}
	}
	bin := t.svc.Command
	if len(bin) == 0 {
		bin = []string{"claude"}
	}
	path, err := lookPath(l.work, env, bin[0])
	if err != nil {
		return turnResult{transport: fmt.Sprintf("service %s: %s cannot be started: %v", t.svc.Name, bin[0], err)}
	}
	mcpPath := filepath.Join(t.callDir, "mcp.json")
	settingsPath := filepath.Join(t.callDir, "settings.json")
	server := client.MCPServer(l.self)
	server["args"] = []string{"mcp", "--loop-call", t.callDir, "--loop-role", t.role}
	for p, v := range map[string]any{
		mcpPath:      map[string]any{"mcpServers": map[string]any{"laserbrain": server}},
		settingsPath: map[string]any{"hooks": client.ClaudeHooks(l.self, client.Claude)},
	} {
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := fsx.WriteFile(p, b, 0o644); err != nil {
			return turnResult{transport: err.Error()}
		}
	}
	args := l.claudeArgs(t, bin, mcpPath, settingsPath)

	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = l.work, env
	cmd.Stdin = strings.NewReader(t.prompt)
	errw := l.prefixed(t.label)
	cmd.Stderr = errw
	stream := newClaudeStream(l, t.label)
	if f, err := os.OpenFile(filepath.Join(t.callDir, "transcript.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		stream.copies = append(stream.copies, f)
		defer f.Close()
	}
	if t.transcript != "" {
		if f, err := os.OpenFile(t.transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			stream.copies = append(stream.copies, f)
			defer f.Close()
		}
	}
	cmd.Stdout = stream
	undo, err := l.confine(cmd, t)
	if err != nil {
		errw.Close()
		return turnResult{transport: fmt.Sprintf("service %s: %v", t.svc.Name, err)}
	}
	code, interrupted, err := l.runChild(ctx, cmd, true)
	undo()
	stream.flush()
	errw.Close()
	res := turnResult{interrupted: interrupted, session: t.session, toolCalls: stream.toolCalls}
	if interrupted {
		return res
	}
	if err != nil {
		res.transport = fmt.Sprintf("service %s: %v", t.svc.Name, err)
		return res
	}
	r := stream.result
	if r == nil {
		res.transport = fmt.Sprintf("service %s: claude exited %d without a result", t.svc.Name, code)
		return res
	}
	res.text = r.Result
	res.tokens = sessionTokens(env, r.SessionID, usageTokens(r.Usage))
	if r.SessionID != "" {
		res.session = r.SessionID
	}
	// A session that hit its turn limit ran to its end; an API error or a
	// crash did not.
	if r.IsError || (r.Subtype != "success" && r.Subtype != "error_max_turns") {
		why := r.Subtype
		if r.APIErrorStatus != nil {
			why += fmt.Sprintf(" (API status %v)", r.APIErrorStatus)
		}
		if r.Result != "" {
			why += ": " + firstLine(r.Result, 300)
		}
		res.transport = fmt.Sprintf("service %s: claude failed: %s", t.svc.Name, why)
	}
	return res
}

// claudeArgs is the command line of a turn's Claude Code session after
// its program: print mode with its stream, the role's permissions and
// tools, our MCP server and hooks, the session to start or resume, and
// the service's model, name and compaction.
func (l *Loop) claudeArgs(t turn, bin []string, mcpPath, settingsPath string) []string {
	args := append(slices.Clone(bin[1:]), "-p", "--output-format", "stream-json", "--verbose")
	// An agent's edits go through; a judge gets nothing it was not given.
	perm := "acceptEdits"
	if t.role == roleJudge {
		perm = "dontAsk"
	}
	args = append(args, "--permission-mode", perm)
	builtin, allowed := claudeTools(t.svc.Tools)
	if t.svc.Tools != nil {
		args = append(args, "--tools", strings.Join(builtin, ","))
	}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowed, " "))
	}
	args = append(args, "--mcp-config", mcpPath, "--add-dir", l.dir)
	if t.resume {
		args = append(args, "--resume", t.session)
	} else {
		args = append(args, "--session-id", t.session)
	}
	if t.system != "" {
		args = append(args, "--append-system-prompt", t.system)
	}
	if t.svc.Model != "" {
		args = append(args, "--model", t.svc.Model)
	}
	if t.svc.Display != "" {
		args = append(args, "--name", t.svc.Display)
	}
	if t.svc.AutoCompact != "" {
		args = append(args, "--autocompact", t.svc.AutoCompact)
	}
	args = append(args, "--settings", settingsPath)
	return args
}

// claudeResult is the stream's closing result event.
type claudeResult struct {
	Subtype        string          `json:"subtype"`
	IsError        bool            `json:"is_error"`
	Result         string          `json:"result"`
	SessionID      string          `json:"session_id"`
	NumTurns       int             `json:"num_turns"`
	Usage          json.RawMessage `json:"usage"`
	APIErrorStatus any             `json:"api_error_status"`
}

// claudeStream reads Claude Code's stream-json output a line at a time:
// each event is kept in the call's transcript and rendered on stderr.
type claudeStream struct {
	lines
	l         *Loop
	label     string
	copies    []io.Writer
	result    *claudeResult
	toolCalls int
}

func newClaudeStream(l *Loop, label string) *claudeStream {
	s := &claudeStream{l: l, label: label}
	s.lines.emit = s.line
	return s
}

// lines is a writer that hands on each complete line (without its
// newline); flush hands on what is left.
type lines struct {
	mu   sync.Mutex
	buf  []byte
	emit func([]byte)
}

func (w *lines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lines) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

type streamEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Model   string `json:"model"`
	Session string `json:"session_id"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type streamBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

func (s *claudeStream) line(b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	for _, c := range s.copies {
		_, _ = c.Write(append(append([]byte(nil), b...), '\n'))
	}
	var ev streamEvent
	if json.Unmarshal(b, &ev) != nil {
		s.say("%s", firstLine(string(b), 300))
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			s.say("session %s (model %s)", ev.Session, ev.Model)
		}
	case "assistant", "user":
		var blocks []streamBlock
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			var text string
			if json.Unmarshal(ev.Message.Content, &text) == nil && ev.Type == "assistant" {
				s.say("%s", text)
			}
			return
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				if ev.Type == "assistant" && strings.TrimSpace(bl.Text) != "" {
					s.say("%s", strings.TrimSpace(bl.Text))
				}
			case "tool_use":
				s.toolCalls++
				s.say("→ %s %s", bl.Name, firstLine(string(bl.Input), 200))
			case "tool_result":
				mark := "←"
				if bl.IsError {
					mark = "← error:"
				}
				s.say("%s %s", mark, firstLine(text.OneLine(contentText(bl.Content)), 200))
			}
		}
	case "result":
		var r claudeResult
		if json.Unmarshal(b, &r) == nil {
			s.result = &r
			s.say("%s after %d turns", r.Subtype, r.NumTurns)
		}
	}
}

func (s *claudeStream) say(format string, a ...any) {
	text := fmt.Sprintf(format, a...)
	s.l.errMu.Lock()
	defer s.l.errMu.Unlock()
	for _, ln := range strings.Split(text, "\n") {
		fmt.Fprintf(s.l.stderr, "[%s] %s\n", s.label, ln)
	}
}

func contentText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var bs []streamBlock
	if json.Unmarshal(raw, &bs) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// firstLine is s's first line, clipped to n runes; " …" marks lines left
// out.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return text.Clip(s, n)
}

// prefixed is a writer that puts "[label] " before each line it passes to
// the loop's stderr; Close hands on a last line without its newline.
func (l *Loop) prefixed(label string) *prefixWriter {
	w := &prefixWriter{}
	prefix := "[" + label + "] "
	w.emit = func(line []byte) {
		l.errMu.Lock()
		fmt.Fprintf(l.stderr, "%s%s\n", prefix, line)
		l.errMu.Unlock()
	}
	return w
}

type prefixWriter struct{ lines }

func (w *prefixWriter) Close() error {
	w.flush()
	return nil
}

// lastLine passes a command judge's stdout on as its transcript, holding
// back the last non-blank line: that one is the verdict.
type lastLine struct {
	lines
	w       *prefixWriter
	pending []byte
	has     bool
}

func newLastLine(w *prefixWriter) *lastLine {
	l := &lastLine{w: w}
	l.lines.emit = l.take
	return l
}

func (l *lastLine) take(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if l.has {
		_, _ = l.w.Write(append(l.pending, '\n'))
	}
	l.pending, l.has = append([]byte(nil), line...), true
}

func (l *lastLine) finish() string {
	l.flush()
	l.w.Close()
	return strings.TrimSpace(string(l.pending))
}
