package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

// A messages service is a judge the loop talks to itself, through the
// Messages API: it is the one kind of service where the loop owns the
// request, so a turn that ends without a verdict is answered by sending
// the conversation again with the verdict tool mandated
// (tool_choice {"type":"tool","name":"verdict"}) rather than by asking in
// words. Its tools are read-only (read, search, git_diff) besides verdict
// and escalate; it cannot serve as an agent.

// messagesTools are the tools a messages service may name in _TOOLS.
var messagesTools = []string{"read", "search", "git_diff", "verdict", "escalate"}

// Messages API limits the loop holds a judge's turn to.
const (
	apiVersion       = "2023-06-01"
	defaultBaseURL   = "https://api.anthropic.com"
	defaultMaxTokens = 8192
	// maxToolRounds bounds the requests of one turn: a judge that keeps
	// calling tools without ending its turn is a transport failure.
	maxToolRounds = 64
	// toolOutputCap clips what a read-only tool hands back.
	toolOutputCap = 64 << 10
	apiAttempts   = 3
)

// ForcedToolChoice is the tool_choice of the one re-send after a turn
// without a verdict.
var ForcedToolChoice = map[string]string{"type": "tool", "name": "verdict"}

type apiMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type apiTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type apiRequest struct {
	Model      string            `json:"model"`
	MaxTokens  int               `json:"max_tokens"`
	System     string            `json:"system,omitempty"`
	Messages   []apiMessage      `json:"messages"`
	Tools      []apiTool         `json:"tools"`
	ToolChoice map[string]string `json:"tool_choice,omitempty"`
}

type apiResponse struct {
	Content    []json.RawMessage `json:"content"`
	StopReason string            `json:"stop_reason"`
	Usage      json.RawMessage   `json:"usage"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type apiBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// conversationPath is where a messages judge's conversation is kept: next
// to its transcript, so a pinned judge's next call goes on with it.
func conversationPath(transcript string) string {
	return strings.TrimSuffix(transcript, ".transcript") + ".messages.json"
}

func loadConversation(path string) ([]apiMessage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var conv []apiMessage
	if err := json.Unmarshal(b, &conv); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return conv, nil
}

func textBlock(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return b
}

// withUserText adds text to the conversation as the user's: into the last
// message when that is the user's (the tool results of a turn that ended
// on a verdict), else as a new message.
func withUserText(conv []apiMessage, s string) []apiMessage {
	if n := len(conv); n > 0 && conv[n-1].Role == "user" {
		conv[n-1].Content = append(conv[n-1].Content, textBlock(s))
		return conv
	}
	return append(conv, apiMessage{Role: "user", Content: []json.RawMessage{textBlock(s)}})
}

// runMessagesTurn is one judge turn through the Messages API: the prompt
// as the user's message, then requests until the judge ends its turn, its
// tool calls answered in between. With t.force the first request mandates
// the verdict tool. The conversation is kept for the pinned session.
func (l *Loop) runMessagesTurn(ctx context.Context, t turn) turnResult {
	res := turnResult{session: t.session}
	api, err := l.messagesEndpoint(t)
	if err != nil {
		res.transport = err.Error()
		return res
	}
	convPath := conversationPath(t.transcript)
	var conv []apiMessage
	if t.resume {
		if conv, err = loadConversation(convPath); err != nil {
			res.transport = err.Error()
			return res
		}
	}
	conv = withUserText(conv, t.prompt)
	log, _ := os.OpenFile(filepath.Join(t.callDir, "transcript.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if log != nil {
		defer log.Close()
	}
	say := l.prefixed(t.label)
	defer say.Close()
	tools := messagesToolDefs(t.svc)
	for round := 0; ; round++ {
		if round >= maxToolRounds {
			res.transport = fmt.Sprintf("service %s: %d requests in one turn without the judge ending it", t.svc.Name, maxToolRounds)
			break
		}
		req := apiRequest{Model: t.svc.Model, MaxTokens: api.maxTokens, System: t.system, Messages: conv, Tools: tools}
		if t.force && round == 0 {
			req.ToolChoice = ForcedToolChoice
			fmt.Fprintf(say, "re-sending with the verdict tool mandated (tool_choice)\n")
		}
		resp, err := api.post(ctx, req, log)
		if ctx.Err() != nil {
			res.interrupted = true
			return res
		}
		if err != nil {
			res.transport = fmt.Sprintf("service %s: %v", t.svc.Name, err)
			break
		}
		res.tokens += usageTokens(resp.Usage)
		conv = append(conv, apiMessage{Role: "assistant", Content: resp.Content})
		uses := l.showBlocks(say, resp.Content, &res)
		if len(uses) == 0 || resp.StopReason != "tool_use" {
			break
		}
		results, done := l.answerTools(ctx, t, uses)
		conv = append(conv, apiMessage{Role: "user", Content: results})
		if done {
			break
		}
	}
	if b, err := json.MarshalIndent(conv, "", " "); err == nil {
		if err := fsx.WriteFile(convPath, b, 0o644); err != nil && res.transport == "" {
			res.transport = err.Error()
		}
	}
	return res
}

// showBlocks renders an answer's blocks on stderr and returns its tool
// calls.
func (l *Loop) showBlocks(w io.Writer, content []json.RawMessage, res *turnResult) []apiBlock {
	var uses []apiBlock
	for _, raw := range content {
		var b apiBlock
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			if s := strings.TrimSpace(b.Text); s != "" {
				fmt.Fprintln(w, s)
				res.text = s
			}
		case "tool_use":
			res.toolCalls++
			fmt.Fprintf(w, "→ %s %s\n", b.Name, firstLine(string(b.Input), 200))
			uses = append(uses, b)
		}
	}
	return uses
}

// answerTools runs a turn's tool calls and returns their results. done:
// the turn is over — a verdict was recorded, the judge escalated, or its
// last malformed verdict was refused.
func (l *Loop) answerTools(ctx context.Context, t turn, uses []apiBlock) (results []json.RawMessage, done bool) {
	for _, u := range uses {
		out, isErr, end := l.answerTool(ctx, t, u)
		done = done || end
		b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": u.ID, "content": out, "is_error": isErr})
		results = append(results, b)
	}
	return results, done
}

func (l *Loop) answerTool(ctx context.Context, t turn, u apiBlock) (out string, isErr, done bool) {
	if !t.svc.HasTool(u.Name) {
		return fmt.Sprintf("no tool %q here (have %s)", u.Name, strings.Join(offered(t.svc), ", ")), true, false
	}
	switch u.Name {
	case "verdict":
		v, n, err := verdict.Submit(t.callDir, u.Input)
		var me *verdict.MalformedError
		switch {
		case errors.As(err, &me) && n >= verdict.MaxMalformed:
			return fmt.Sprintf("%v. That was malformed verdict %d of %d allowed: the loop ends this judgment as a malfunction.", me, n, verdict.MaxMalformed-1), true, true
		case errors.As(err, &me):
			return fmt.Sprintf("%v. Fix it and call verdict again (one more malformed verdict ends this judgment as a malfunction).", me), true, false
		case err != nil:
			return err.Error(), true, errors.Is(err, verdict.ErrAlreadyRecorded)
		}
		return fmt.Sprintf("verdict recorded (sufficient=%v, %s).", v.Sufficient, text.Plural(len(v.Findings), "finding")), false, true
	case "escalate":
		var in struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(u.Input, &in)
		if err := verdict.Escalate(t.callDir, in.Reason); err != nil {
			return err.Error(), true, false
		}
		return "escalated: the loop will ask a person.", false, true
	}
	out, err := l.readOnlyTool(ctx, u.Name, u.Input)
	if err != nil {
		return err.Error(), true, false
	}
	return out, false, false
}

// offered are the tools a messages service offers: those of its _TOOLS
// it knows.
func offered(s *Service) []string {
	var names []string
	for _, n := range messagesTools {
		if s.HasTool(n) {
			names = append(names, n)
		}
	}
	return names
}

func objectSchema(props map[string]any, required ...string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

func strProp(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// messagesToolDefs are the tool definitions of a messages service's
// requests, in _TOOLS order.
func messagesToolDefs(s *Service) []apiTool {
	defs := map[string]apiTool{
		"read": {Name: "read", Description: "Read a file of the repository under review (a path relative to its root; at most 64 KiB from offset).",
			InputSchema: objectSchema(map[string]any{"path": strProp("file path, relative to the repository root"),
				"offset": map[string]any{"type": "integer", "description": "byte offset to start at (default 0)"}}, "path")},
		"search": {Name: "search", Description: "Search the repository's tracked files for a regular expression (git grep -n -E).",
			InputSchema: objectSchema(map[string]any{"pattern": strProp("extended regular expression"),
				"path": strProp("limit to this path (optional)")}, "pattern")},
		"git_diff": {Name: "git_diff", Description: "Show how the working tree differs from a commit or checkpoint ref (git diff REF), optionally for one path.",
			InputSchema: objectSchema(map[string]any{"ref": strProp("a commit or ref, e.g. the checkpoint your prompt names (default HEAD)"),
				"path": strProp("limit to this path (optional)")})},
		"escalate": {Name: "escalate", Description: "Stop and ask for a person: the work needs a decision you cannot make. Give the reason; then end your turn.",
			InputSchema: objectSchema(map[string]any{"reason": strProp("What a person must decide or do, and why.")}, "reason")},
		"verdict": {Name: "verdict", Description: verdict.Description(), InputSchema: verdict.ToolSchema()},
	}
	var out []apiTool
	for _, n := range offered(s) {
		out = append(out, defs[n])
	}
	return out
}

// readOnlyTool answers read, search and git_diff on the loop's working
// tree; read cannot leave it.
func (l *Loop) readOnlyTool(ctx context.Context, name string, input json.RawMessage) (string, error) {
	var in struct {
		Path    string `json:"path"`
		Offset  int64  `json:"offset"`
		Pattern string `json:"pattern"`
		Ref     string `json:"ref"`
	}
	if len(bytes.TrimSpace(input)) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return "", fmt.Errorf("%s: arguments are not an object: %v", name, err)
		}
	}
	switch name {
	case "read":
		return readInTree(l.work, in.Path, in.Offset)
	case "search":
		if in.Pattern == "" {
			return "", errors.New("search needs a pattern")
		}
		args := []string{"grep", "-n", "-I", "-E", "-e", in.Pattern}
		if in.Path != "" {
			args = append(args, "--", in.Path)
		}
		return l.gitOutput(ctx, args...)
	default: // git_diff
		ref := in.Ref
		if ref == "" {
			ref = "HEAD"
		}
		if strings.HasPrefix(ref, "-") {
			return "", fmt.Errorf("git_diff: ref %q is not a commit", ref)
		}
		args := []string{"diff", ref}
		if in.Path != "" {
			args = append(args, "--", in.Path)
		}
		return l.gitOutput(ctx, args...)
	}
}

func readInTree(root, path string, offset int64) (string, error) {
	if path == "" {
		return "", errors.New("read needs a path")
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.Open(strings.TrimPrefix(path, "./"))
	if err != nil {
		return "", fmt.Errorf("read %s: %v", path, fsx.WithoutPath(err))
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return "", err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, toolOutputCap+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %v", path, fsx.WithoutPath(err))
	}
	return clipOutput(b, fmt.Sprintf("read again with offset %d", offset+toolOutputCap)), nil
}

func clipOutput(b []byte, more string) string {
	if len(b) <= toolOutputCap {
		return string(b)
	}
	return string(b[:toolOutputCap]) + "\n[truncated: " + more + "]"
}

// gitOutput runs git in the working tree; status 1 with nothing on
// stdout (grep found nothing) is an empty answer.
func (l *Loop) gitOutput(ctx context.Context, args ...string) (string, error) {
	cmd := gitCmd(ctx, l.work, nil, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && out.Len() == 0) {
		return "", fmt.Errorf("git %s: %s", args[0], firstNonEmpty(strings.TrimSpace(errb.String()), err.Error()))
	}
	if out.Len() == 0 {
		return "(nothing)", nil
	}
	return clipOutput(out.Bytes(), "narrow the path"), nil
}

// messagesAPI is one service's endpoint.
type messagesAPI struct {
	url, key, bearer string
	maxTokens        int
	client           *http.Client
}

// messagesEndpoint is where a messages service is reached: _BASE_URL, else
// ANTHROPIC_BASE_URL in SCRIPT's environment, else Anthropic's; the key
// from _API_KEY, else ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, sent as
// a bearer token).
func (l *Loop) messagesEndpoint(t turn) (*messagesAPI, error) {
	env := map[string]string{}
	for _, kv := range t.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s := t.svc
	a := &messagesAPI{maxTokens: defaultMaxTokens, client: &http.Client{Timeout: 10 * time.Minute}}
	base := firstNonEmpty(s.BaseURL, env["ANTHROPIC_BASE_URL"], defaultBaseURL)
	a.url = strings.TrimRight(base, "/") + "/v1/messages"
	if s.APIKey != "" {
		k, err := s.apiKey()
		if err != nil {
			return nil, err
		}
		a.key = k
	} else {
		a.key, a.bearer = env["ANTHROPIC_API_KEY"], env["ANTHROPIC_AUTH_TOKEN"]
	}
	if a.key == "" && a.bearer == "" {
		return nil, fmt.Errorf("service %s: no API key (set %s_API_KEY, or ANTHROPIC_API_KEY in the environment)", s.Name, s.Name)
	}
	if s.MaxTokens != "" {
		n, err := strconv.Atoi(s.MaxTokens)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("service %s: %s_MAX_TOKENS=%q is not a positive number", s.Name, s.Name, s.MaxTokens)
		}
		a.maxTokens = n
	}
	return a, nil
}

// post sends one request, again after a rate limit or an overloaded or
// failing service (up to apiAttempts in all), and logs both ways.
func (a *messagesAPI) post(ctx context.Context, req apiRequest, log io.Writer) (*apiResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "{\"request\":%s}\n", body)
	}
	var last error
	for attempt := 1; attempt <= apiAttempts; attempt++ {
		resp, retry, err := a.once(ctx, body)
		if err == nil {
			if log != nil {
				b, _ := json.Marshal(resp)
				fmt.Fprintf(log, "{\"response\":%s}\n", b)
			}
			return resp, nil
		}
		last = err
		if !retry || attempt == apiAttempts {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Second): // back off before asking again
		}
	}
	return nil, last
}

func (a *messagesAPI) once(ctx context.Context, body []byte) (resp *apiResponse, retry bool, err error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	hr.Header.Set("content-type", "application/json")
	hr.Header.Set("anthropic-version", apiVersion)
	if a.key != "" {
		hr.Header.Set("x-api-key", a.key)
	} else {
		hr.Header.Set("authorization", "Bearer "+a.bearer)
	}
	r, err := a.client.Do(hr)
	if err != nil {
		return nil, true, err
	}
	defer r.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return nil, true, err
	}
	var out apiResponse
	jerr := json.Unmarshal(raw, &out)
	if r.StatusCode/100 != 2 || out.Error != nil {
		why := fmt.Sprintf("API status %d", r.StatusCode)
		if out.Error != nil {
			why += fmt.Sprintf(": %s: %s", out.Error.Type, out.Error.Message)
		}
		retry := r.StatusCode == 429 || r.StatusCode >= 500
		return nil, retry, errors.New(why)
	}
	if jerr != nil {
		return nil, false, fmt.Errorf("the API's answer is not JSON: %v", jerr)
	}
	return &out, false, nil
}
