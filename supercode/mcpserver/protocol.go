package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain"
)

// ProtocolVersion is the MCP revision the server answers initialize with,
// whatever the client asked for: the reference's, and every client
// negotiates down to it (a tools-only stdio server needs nothing later).
const ProtocolVersion = "2024-11-05"

// JSON-RPC error codes the server answers with.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
)

// Serve answers newline-delimited JSON-RPC read from in, on out, one
// message at a time in the order they were read, until in ends; every
// request read before the end is answered before Serve returns (so
// `laserbrain mcp < requests.jsonl` answers every line). Blank lines are
// skipped. Nothing but answers is written to out.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 {
			if ans := s.Answer(ctx, line); ans != nil {
				if _, err := w.Write(append(ans, '\n')); err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Answer is the server's answer to one line of input, nil when the line
// asks for none (a blank line, a notification). It is how the reference's
// stdio server reads a line, except where the reference's own process dies
// on it (a JSON value that is not an object; params or a tool name of the
// wrong type): there it answers an error and goes on serving.
//
//   - unparseable: error -32700, id null;
//   - initialize: the protocol version, tools capability, server name and
//     version, and how to use the tools; there is no initialization state:
//     every method works before it;
//   - notifications/initialized or initialized: nothing, id or not;
//   - ping: {}; tools/list: the tools; tools/call: the tool's result;
//   - any other method: with an id, error -32601; without, nothing.
func (s *Server) Answer(ctx context.Context, line []byte) []byte {
	text := laserbrain.PyStrip(string(line))
	if text == "" {
		return nil
	}
	msg, err := grammar.Parse([]byte(text))
	if err != nil {
		return rpcError(nil, codeParse, "parse error")
	}
	if msg.Kind != grammar.Object {
		return rpcError(nil, codeInvalidRequest, fmt.Sprintf("invalid request: a message is a JSON object, not %s", describe(msg)))
	}
	var id json.RawMessage
	hasID := false
	if v, ok := msg.Get("id"); ok && v.Kind != grammar.Null {
		id, hasID = valueJSON(*v), true
	}
	method := grammar.Value{Kind: grammar.Null}
	if v, ok := msg.Get("method"); ok {
		method = *v
	}
	name := ""
	if method.Kind == grammar.String {
		name = method.Str
	}
	switch name {
	case "initialize":
		return rpcResult(id, map[string]any{
			"protocolVersion": ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": Name, "version": Version()},
			"instructions":    s.instructions(),
		})
	case "notifications/initialized", "initialized":
		return nil
	case "ping":
		return rpcResult(id, map[string]any{})
	case "tools/list":
		return rpcResult(id, map[string]any{"tools": s.listed()})
	case "tools/call":
		return s.callTool(ctx, id, msg)
	}
	if !hasID {
		return nil
	}
	return rpcError(id, codeNoMethod, "no such method: "+laserbrain.PyStr(method))
}

// callTool answers tools/call: params falsy reads as {}, arguments falsy
// as {}; an unknown name is error -32602.
func (s *Server) callTool(ctx context.Context, id json.RawMessage, msg grammar.Value) []byte {
	params := grammar.Value{Kind: grammar.Object}
	if p, ok := msg.Get("params"); ok && laserbrain.PyTruthy(*p) {
		if p.Kind != grammar.Object {
			return rpcError(id, codeInvalidParams, fmt.Sprintf("tools/call params must be an object, not %s", describe(*p)))
		}
		params = *p
	}
	name := grammar.Value{Kind: grammar.Null}
	if n, ok := params.Get("name"); ok {
		name = *n
	}
	var t *toolDef
	if name.Kind == grammar.String {
		t = s.tool(name.Str)
	}
	if t == nil {
		return rpcError(id, codeInvalidParams, "no such tool: "+laserbrain.PyStr(name))
	}
	a := args{v: grammar.Value{Kind: grammar.Object}}
	if v, ok := params.Get("arguments"); ok && laserbrain.PyTruthy(*v) {
		if v.Kind == grammar.Object {
			a.v = *v
		} else {
			a.err = badf("arguments must be a JSON object, not %s", describe(*v))
		}
	}
	return rpcResult(id, s.call(ctx, t, a))
}

// describe names a JSON value's type for an error message.
func describe(v grammar.Value) string {
	switch v.Kind {
	case grammar.Array:
		return "a list"
	case grammar.Object:
		return "an object"
	case grammar.String:
		return "a string"
	case grammar.Number:
		return "a number"
	case grammar.Bool:
		return "a boolean"
	}
	return "null"
}

// rpcResult and rpcError write one answer; a nil id is written as null.
func rpcResult(id json.RawMessage, result any) []byte {
	return rpcLine(id, "result", result)
}

func rpcError(id json.RawMessage, code int, message string) []byte {
	return rpcLine(id, "error", map[string]any{"code": code, "message": message})
}

func rpcLine(id json.RawMessage, key string, v any) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, err := marshal(v)
	if err != nil {
		body, _ = marshal(map[string]any{"code": -32603, "message": "internal error: " + err.Error()})
		key = "error"
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"` + key + `":`)
	b.Write(body)
	b.WriteByte('}')
	return b.Bytes()
}

// marshal is JSON without HTML escaping, on one line.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// valueJSON writes a parsed value back as JSON as it was given: numbers as
// written (an id is echoed as the client spelled it), keys in their order.
func valueJSON(v grammar.Value) json.RawMessage {
	return appendValue(nil, v)
}

func appendValue(b []byte, v grammar.Value) []byte {
	switch v.Kind {
	case grammar.Bool:
		return strconv.AppendBool(b, v.Bool)
	case grammar.Number:
		return append(b, v.Num...)
	case grammar.String:
		s, _ := marshal(v.Str)
		return append(b, s...)
	case grammar.Array:
		b = append(b, '[')
		for i, e := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case grammar.Object:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := marshal(m.Key)
			b = append(append(b, k...), ':')
			b = appendValue(b, m.Value)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}
