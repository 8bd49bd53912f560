package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/mcpserver"
)

// The mcp kind replays whole sessions against a stdio MCP server, one
// server per case with a fresh home, and compares every answer.
//
//	request {local_workflows?: {name: spec}, send: [line]}   (a line: an object, sent as its JSON, or a string, sent as it is)
//	answer  {recv: [[message] per line], exit}
//
// Agreement is the reference's answer, field for field, with these rules
// (each counted in the report's tally):
//
//   - a line the reference's process died on, and every line after it,
//     which it never answered: the answer there must be an error (or
//     nothing, for a notification); later lines are not compared;
//   - a tool call the reference answered with its own crash (an isError
//     result whose text is a Python exception): the answer must be an error
//     result for the same call; its message is the implementation's own;
//   - a call to a tool the reference does not have, answered by one that
//     does (an implementation's own tools): not compared;
//   - what describes the server rather than answers the call is not
//     compared: initialize's protocol version, server version and
//     instructions; tools/list's descriptions and any tools or properties
//     beyond the reference's (the reference's must all be there, with
//     their types and required lists); capabilities beyond offline and
//     account_required; reset_task's note;
//   - a tool result may carry keys beyond the reference's only where this
//     file names them (extraKeys); any other extra key is a difference.
var mcpKind = &Kind{
	Name:    "mcp",
	Doc:     `whole sessions against a stdio MCP server; request {local_workflows?, send: [line]}; answer {recv: [[message] per line], exit}`,
	Cases:   mcpCases,
	Compute: runMCP,
	Compare: compareMCP,
	Emit:    emitMCP,
	// Each session has a home and stores of its own.
	Parallel: true,
}

type mcpFile struct {
	Cases []mcpCase `json:"cases"`
}

type mcpCase struct {
	Seq *int            `json:"seq"`
	In  mcpIn           `json:"in"`
	Out json.RawMessage `json:"out"`
}

type mcpIn struct {
	LocalWorkflows map[string]json.RawMessage `json:"local_workflows,omitempty"`
}

type mcpOut struct {
	Exchange []struct {
		Send json.RawMessage   `json:"send"`
		Recv []json.RawMessage `json:"recv"`
	} `json:"exchange"`
	Exit       int     `json:"exit"`
	StderrLast *string `json:"stderr_last,omitempty"`
}

// MCPRequest is one mcp case as an implementation is sent it.
type MCPRequest struct {
	LocalWorkflows map[string]json.RawMessage `json:"local_workflows,omitempty"`
	Send           []json.RawMessage          `json:"send"`
}

// MCPAnswer is what an implementation answers for one mcp case.
type MCPAnswer struct {
	Recv [][]json.RawMessage `json:"recv"`
	Exit int                 `json:"exit"`
}

// mcpWant is a case's expected answer: the answer, and where the
// reference died.
type mcpWant struct {
	MCPAnswer
	StderrLast *string `json:"stderr_last,omitempty"`
}

func mcpCases(f *File) ([]Case, error) {
	var mf mcpFile
	if err := json.Unmarshal(f.Raw, &mf); err != nil {
		return nil, fmt.Errorf("/cases: %s", jsonProblem(err))
	}
	out := make([]Case, len(mf.Cases))
	for i, c := range mf.Cases {
		n, _ := seqLabel(i, c.Seq)
		var o mcpOut
		if err := json.Unmarshal(c.Out, &o); err != nil {
			return nil, fmt.Errorf("/cases/%d/out: %s", i, jsonProblem(err))
		}
		req := MCPRequest{LocalWorkflows: c.In.LocalWorkflows, Send: []json.RawMessage{}}
		want := mcpWant{MCPAnswer: MCPAnswer{Recv: [][]json.RawMessage{}, Exit: o.Exit}, StderrLast: o.StderrLast}
		for _, ex := range o.Exchange {
			req.Send = append(req.Send, ex.Send)
			recv := ex.Recv
			if recv == nil {
				recv = []json.RawMessage{}
			}
			want.Recv = append(want.Recv, recv)
		}
		in, _ := json.Marshal(req)
		w, _ := json.Marshal(want)
		out[i] = Case{Label: fmt.Sprintf("session %d", n), In: in, Want: w}
	}
	return out, nil
}

// SendLine is the line an mcp request's send element stands for: a string
// as it is, anything else as its JSON.
func SendLine(send json.RawMessage) []byte {
	var s string
	if json.Unmarshal(send, &s) == nil {
		return []byte(s)
	}
	return []byte(compact(send))
}

// WriteLocalWorkflows writes a request's local methods into home, where the
// reference's shelf (and ours) reads a user's: ~/.laserbrain/workflows.
func WriteLocalWorkflows(home string, wf map[string]json.RawMessage) error {
	if len(wf) == 0 {
		return nil
	}
	dir := filepath.Join(home, ".laserbrain", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, spec := range wf {
		if strings.ContainsAny(name, `/\`) || name == "" || strings.HasPrefix(name, ".") {
			return fmt.Errorf("local workflow name %q is not a file name", name)
		}
		body := SendLine(spec)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runMCP replays one session against laserbrain's MCP server, in process,
// on stores of its own in a fresh home.
func runMCP(raw json.RawMessage) (any, error) {
	var req MCPRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("bad input: %s", jsonProblem(err))
	}
	home, err := scratchDir("laserbrain-mcp-vector-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	if err := WriteLocalWorkflows(home, req.LocalWorkflows); err != nil {
		return nil, err
	}
	env := map[string]string{"HOME": home, "LASERBRAIN_HOME": filepath.Join(home, "lb"), "CLAUDE_PROJECT_DIR": home}
	sup := &agentrun.Tracker{
		Getenv: func(k string) string { return env[k] },
		Stores: agentrun.StoreFuncs{
			Fleet: func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(home, "lb", "fleet")) },
			Runs: func() (laserbrain.Store, error) {
				return localstore.Open(localstore.Paths{Home: filepath.Join(home, "lb"), Config: filepath.Join(home, "lb", "config")})
			},
		}.Open,
	}
	defer sup.Close()
	srv, err := mcpserver.NewWithOptions(sup, mcpserver.Options{})
	if err != nil {
		return nil, err
	}
	ans := MCPAnswer{Recv: make([][]json.RawMessage, len(req.Send))}
	ctx := context.Background()
	for i, send := range req.Send {
		ans.Recv[i] = []json.RawMessage{}
		if a := srv.Answer(ctx, SendLine(send)); a != nil {
			ans.Recv[i] = append(ans.Recv[i], json.RawMessage(a))
		}
	}
	return ans, nil
}

// withoutExtras is a tool result as an emitted file records it: without
// the keys only this implementation adds (its run ids change every run,
// and another port has none to give).
func withoutExtras(tool string, msg json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	var tr toolResult
	if extraKeys(tool) == nil || json.Unmarshal(msg, &m) != nil || json.Unmarshal(m["result"], &tr) != nil || len(tr.Content) != 1 || tr.IsError {
		return msg
	}
	var v map[string]any
	if decodeNumbers([]byte(tr.Content[0].Text), &v) != nil {
		return msg
	}
	for _, k := range extraKeys(tool) {
		delete(v, k)
	}
	if checks, ok := v["checks"].([]any); ok {
		for _, c := range checks {
			if row, ok := c.(map[string]any); ok {
				for _, k := range extraKeys(tool + ".check") {
					delete(row, k)
				}
			}
		}
	}
	text, err := Marshal(v)
	if err != nil {
		return msg
	}
	tr.Content[0].Text = strings.TrimSuffix(string(text), "\n")
	m["result"], _ = json.Marshal(tr)
	out, _ := json.Marshal(m)
	return out
}

// scratchDir makes a directory for a session's stores, which nothing needs
// after it: in memory (/dev/shm) where there is one, since the stores sync
// every write to disk and a session makes hundreds; else the temp dir.
func scratchDir(prefix string) (string, error) {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", prefix); err == nil {
			return dir, nil
		}
	}
	return os.MkdirTemp("", prefix)
}

func emitMCP(f *File) (any, error) {
	var doc struct {
		Cases []map[string]json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(f.Raw, &doc); err != nil {
		return nil, fmt.Errorf("/cases: %s", jsonProblem(err))
	}
	cases, err := mcpCases(f)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(cases))
	for i, c := range cases {
		got, err := runMCP(c.In)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Label, err)
		}
		var req MCPRequest
		_ = json.Unmarshal(c.In, &req)
		a := got.(MCPAnswer)
		type exchange struct {
			Send json.RawMessage   `json:"send"`
			Recv []json.RawMessage `json:"recv"`
		}
		ex := make([]exchange, len(req.Send))
		for j := range req.Send {
			_, tool := sendTool(req.Send[j])
			recv := make([]json.RawMessage, len(a.Recv[j]))
			for k, m := range a.Recv[j] {
				recv[k] = withoutExtras(tool, m)
			}
			ex[j] = exchange{req.Send[j], recv}
		}
		m := map[string]any{}
		for k, v := range doc.Cases[i] {
			m[k] = v
		}
		m["out"] = map[string]any{"exchange": ex, "exit": a.Exit}
		out[i] = m
	}
	return map[string]any{"kind": "mcp", "source": EmitSource, "cases": out}, nil
}

// Tally keys: what compareMCP did beyond comparing exactly.
const (
	tallyByError  = "answers compared by error status only (the reference answered with its own crash)"
	tallyDied     = "lines after the reference's process died, not compared"
	tallyKilled   = "lines the reference's process died on, answered with an error"
	tallyOwnTools = "calls to tools the reference lacks, not compared"
	tallyExact    = "answers compared field by field"
)

// extraKeys returns the keys a tool's result may carry beyond the reference's:
// the run in the stores that laserbrain's checks go to (run, task, step),
// the verdict's evidence (why), the ground's goal, the claims marker's
// reading of doing/next/blocked, and a user turn the hooks marked. A switch
// over arrays, not a map literal, which the package's init would build in
// every process.
func extraKeys(tool string) []string {
	switch tool {
	case "check_state", "modulate":
		return checkExtraKeys[:]
	case "get_history":
		return historyExtraKeys[:]
	case "get_history.check":
		return historyCheckExtraKeys[:]
	}
	return nil
}

var (
	checkExtraKeys        = [...]string{"why", "ground", "run", "task", "step", "claims", "user_turn"}
	historyExtraKeys      = [...]string{"run", "task"}
	historyCheckExtraKeys = [...]string{"step"}
)

// compareMCP compares one session.
func compareMCP(c Case, gotRaw json.RawMessage) Comparison {
	var req MCPRequest
	var want mcpWant
	var got MCPAnswer
	cmp := Comparison{Tally: map[string]int{}}
	if err := json.Unmarshal(c.In, &req); err != nil {
		cmp.Diff = append(cmp.Diff, "the request is not an mcp request: "+err.Error())
		return cmp
	}
	_ = json.Unmarshal(c.Want, &want)
	if err := json.Unmarshal(gotRaw, &got); err != nil || len(got.Recv) != len(req.Send) {
		cmp.Diff = append(cmp.Diff, fmt.Sprintf("the answer must be {recv: [one list per line, %d lines], exit}", len(req.Send)))
		return cmp
	}
	// The line the reference died on: its last line when it exited non-zero
	// (the generator stopped sending at the first line it did not survive).
	died := -1
	if want.Exit != 0 && want.StderrLast != nil {
		died = len(req.Send) - 1
		for i := range req.Send {
			if i < len(want.Recv) && len(want.Recv[i]) == 0 && killsReference(req.Send[i]) {
				died = i
				break
			}
		}
	}
	for i, send := range req.Send {
		where := fmt.Sprintf("line %d %s", i, describeSend(send))
		switch {
		case died >= 0 && i > died:
			cmp.Tally[tallyDied]++
			continue
		case i == died:
			cmp.Tally[tallyKilled]++
			for _, m := range got.Recv[i] {
				if !isErrorMessage(m) {
					cmp.Diff = append(cmp.Diff, where+": the reference's process died on this line; the answer must be an error, got "+clipMsg(m))
				}
			}
			continue
		}
		if len(got.Recv[i]) != len(want.Recv[i]) {
			cmp.Diff = append(cmp.Diff, fmt.Sprintf("%s: expected %d answers, got %d: %s", where, len(want.Recv[i]), len(got.Recv[i]), clipMsgs(got.Recv[i])))
			continue
		}
		for j := range want.Recv[i] {
			for _, d := range compareMessage(send, want.Recv[i][j], got.Recv[i][j], cmp.Tally) {
				cmp.Diff = append(cmp.Diff, where+": "+d)
			}
		}
	}
	if died < 0 && got.Exit != want.Exit {
		cmp.Diff = append(cmp.Diff, fmt.Sprintf("exit status %d, expected %d", got.Exit, want.Exit))
	}
	return cmp
}

// killsReference: the lines the reference's process does not survive — a
// JSON value that is not an object, a tools/call whose params are truthy
// but not an object, or whose tool name is a list or an object.
func killsReference(send json.RawMessage) bool {
	var v any
	if err := decodeNumbers(SendLine(send), &v); err != nil {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	if m["method"] != "tools/call" {
		return false
	}
	p, isObj := m["params"].(map[string]any)
	if !isObj {
		return truthy(m["params"])
	}
	switch p["name"].(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

func describeSend(send json.RawMessage) string {
	var m struct {
		Method *string `json:"method"`
		Params struct {
			Name any `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(SendLine(send), &m) != nil || m.Method == nil {
		return "(" + text.Clip(string(SendLine(send)), 40) + ")"
	}
	if *m.Method == "tools/call" {
		return fmt.Sprintf("(tools/call %v)", m.Params.Name)
	}
	return "(" + *m.Method + ")"
}

// sendTool is the tool a tools/call line calls ("" for other lines).
func sendTool(send json.RawMessage) (method, tool string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(SendLine(send), &m)
	return m.Method, m.Params.Name
}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError,omitempty"`
}

func isErrorMessage(raw json.RawMessage) bool {
	var m rpcMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	if m.Error != nil {
		return true
	}
	var tr toolResult
	return json.Unmarshal(m.Result, &tr) == nil && tr.IsError
}

// isReferenceTool reports whether name is one of the reference's tools.
func isReferenceTool(name string) bool {
	switch name {
	case "check_state", "modulate", "reset_task", "get_history", "similarity", "laserscore", "capabilities",
		"store_list", "store_find", "store_vend", "read_text":
		return true
	}
	return false
}

// compareMessage compares one JSON-RPC answer.
func compareMessage(send, wantRaw, gotRaw json.RawMessage, tally map[string]int) []string {
	var w, g rpcMessage
	if err := json.Unmarshal(gotRaw, &g); err != nil || g.JSONRPC != "2.0" {
		return []string{"not a JSON-RPC 2.0 message: " + clipMsg(gotRaw)}
	}
	_ = json.Unmarshal(wantRaw, &w)
	if d := diffMode(w.ID, g.ID, true); len(d) > 0 {
		return []string{fmt.Sprintf("id %s, expected %s", compact(g.ID), compact(w.ID))}
	}
	method, tool := sendTool(send)
	if w.Error != nil {
		if method == "tools/call" && !isReferenceTool(tool) && g.Error == nil {
			tally[tallyOwnTools]++
			return nil
		}
		tally[tallyExact]++
		if g.Error == nil {
			return []string{fmt.Sprintf("expected error %d %q, got a result %s", w.Error.Code, w.Error.Message, clipMsg(gotRaw))}
		}
		if g.Error.Code != w.Error.Code || g.Error.Message != w.Error.Message {
			return []string{fmt.Sprintf("expected error %d %q, got %d %q", w.Error.Code, w.Error.Message, g.Error.Code, g.Error.Message)}
		}
		return nil
	}
	if g.Error != nil {
		tally[tallyExact]++
		return []string{fmt.Sprintf("expected a result, got error %d %q", g.Error.Code, g.Error.Message)}
	}
	switch method {
	case "initialize":
		tally[tallyExact]++
		return compareInitialize(w.Result, g.Result)
	case "tools/list":
		tally[tallyExact]++
		return compareToolList(w.Result, g.Result)
	case "tools/call":
		return compareToolResult(tool, w.Result, g.Result, tally)
	}
	tally[tallyExact]++
	return prefixed("result", diffMode(w.Result, g.Result, true))
}

func prefixed(p string, lines []string) []string {
	for i, l := range lines {
		lines[i] = p + l
	}
	return lines
}

func compareInitialize(want, got json.RawMessage) []string {
	type info struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	var w, g info
	_ = json.Unmarshal(want, &w)
	if err := json.Unmarshal(got, &g); err != nil {
		return []string{"initialize result: " + err.Error()}
	}
	var out []string
	if g.ProtocolVersion == "" {
		out = append(out, "initialize result has no protocolVersion")
	}
	if g.ServerInfo.Name != w.ServerInfo.Name {
		out = append(out, fmt.Sprintf("serverInfo.name %q, expected %q", g.ServerInfo.Name, w.ServerInfo.Name))
	}
	return append(out, prefixed("result/capabilities", diffMode(w.Capabilities, g.Capabilities, false))...)
}

// compareToolList: every tool of the reference's, in its order, with its
// properties' types and enums and its required list; more tools and more
// properties may follow.
func compareToolList(want, got json.RawMessage) []string {
	type tool struct {
		Name        string `json:"name"`
		InputSchema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"inputSchema"`
	}
	var w, g struct {
		Tools []tool `json:"tools"`
	}
	_ = json.Unmarshal(want, &w)
	if err := json.Unmarshal(got, &g); err != nil {
		return []string{"tools/list result: " + err.Error()}
	}
	var out []string
	for i, wt := range w.Tools {
		if i >= len(g.Tools) || g.Tools[i].Name != wt.Name {
			out = append(out, fmt.Sprintf("tools/%d: expected %s", i, wt.Name))
			continue
		}
		gt := g.Tools[i]
		if gt.InputSchema.Type != wt.InputSchema.Type {
			out = append(out, fmt.Sprintf("%s: inputSchema type %q, expected %q", wt.Name, gt.InputSchema.Type, wt.InputSchema.Type))
		}
		for p, ws := range wt.InputSchema.Properties {
			gs, ok := gt.InputSchema.Properties[p]
			if !ok {
				out = append(out, fmt.Sprintf("%s: no property %s", wt.Name, p))
				continue
			}
			var wp, gp struct {
				Type any `json:"type"`
				Enum any `json:"enum"`
			}
			_ = json.Unmarshal(ws, &wp)
			_ = json.Unmarshal(gs, &gp)
			a, _ := json.Marshal(wp)
			b, _ := json.Marshal(gp)
			if !bytes.Equal(a, b) {
				out = append(out, fmt.Sprintf("%s: property %s is %s, expected %s", wt.Name, p, b, a))
			}
		}
		ws, gs := append([]string{}, wt.InputSchema.Required...), append([]string{}, gt.InputSchema.Required...)
		sort.Strings(ws)
		sort.Strings(gs)
		if strings.Join(ws, ",") != strings.Join(gs, ",") {
			out = append(out, fmt.Sprintf("%s: required %v, expected %v", wt.Name, gs, ws))
		}
	}
	return out
}

// compareToolResult compares a tools/call result: the error status, then
// the text's JSON.
func compareToolResult(tool string, want, got json.RawMessage, tally map[string]int) []string {
	var w, g toolResult
	_ = json.Unmarshal(want, &w)
	if err := json.Unmarshal(got, &g); err != nil || len(g.Content) != 1 || g.Content[0].Type != "text" {
		return []string{"a tool result is one text block: " + clipMsg(got)}
	}
	if w.IsError {
		tally[tallyByError]++
		if !g.IsError {
			return []string{fmt.Sprintf("the reference failed (%s); expected an error result, got %s", text.Clip(w.Content[0].Text, 80), text.Clip(g.Content[0].Text, 200))}
		}
		return nil
	}
	tally[tallyExact]++
	if g.IsError {
		return []string{"expected a result, got an error result: " + text.Clip(g.Content[0].Text, 200)}
	}
	var wv, gv any
	if err := decodeNumbers([]byte(w.Content[0].Text), &wv); err != nil {
		return []string{"the reference's text is not JSON: " + err.Error()}
	}
	if err := decodeNumbers([]byte(g.Content[0].Text), &gv); err != nil {
		return []string{"the result's text is not JSON: " + text.Clip(g.Content[0].Text, 200)}
	}
	dropSetAside(tool, wv, gv)
	d := differ{strict: true}
	d.walk("", wv, gv)
	return prefixed("text", d.lines)
}

// dropSetAside removes from the answer what is not compared: its allowed
// extra keys, and the fields that describe the server (capabilities),
// or are prose of its own (reset_task's note).
func dropSetAside(tool string, want, got any) {
	w, _ := want.(map[string]any)
	g, ok := got.(map[string]any)
	if !ok || w == nil {
		return
	}
	if _, refused := w["error"]; refused {
		return
	}
	for _, k := range extraKeys(tool) {
		if _, inWant := w[k]; !inWant {
			delete(g, k)
		}
	}
	switch tool {
	case "capabilities":
		for _, m := range []map[string]any{w, g} {
			for k := range m {
				if k != "offline" && k != "account_required" {
					delete(m, k)
				}
			}
		}
	case "reset_task":
		delete(w, "note")
		delete(g, "note")
	case "get_history":
		ws, _ := w["checks"].([]any)
		gs, _ := g["checks"].([]any)
		for i := 0; i < len(ws) && i < len(gs); i++ {
			wc, _ := ws[i].(map[string]any)
			gc, _ := gs[i].(map[string]any)
			for _, k := range extraKeys("get_history.check") {
				if _, inWant := wc[k]; !inWant && gc != nil {
					delete(gc, k)
				}
			}
		}
	}
}

func clipMsg(raw json.RawMessage) string { return text.Clip(compact(raw), 200) }

func clipMsgs(ms []json.RawMessage) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, clipMsg(m))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
