package client

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/supercode/agentrun"
)

// Adapter is one client's side of the seam.
type Adapter interface {
	// Name is the client.
	Name() Name
	// Decode reads one payload the client gave the hook installed for our
	// event hook. getenv reads the hook's environment (who is attending).
	// A payload that is not this client's, or not for this hook, or that
	// the gate cannot read, is an error: the hook fails closed.
	Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error)
	// Encode writes our answer to the hook for event hook the way the
	// client obeys it.
	Encode(hook EventName, a Reply) Output
}

// Names are the clients, in the order laserbrain lists them.
var Names = []Name{Claude, Codex, Gemini, Qwen, OpenCode, Cline, Copilot}

// Title is a client's name as its makers write it.
func (n Name) Title() string {
	switch n {
	case Claude:
		return "Claude Code"
	case Codex:
		return "Codex"
	case Gemini:
		return "Gemini CLI"
	case Qwen:
		return "Qwen Code"
	case OpenCode:
		return "opencode"
	case Cline:
		return "Cline"
	case Copilot:
		return "Copilot CLI"
	}
	return string(n)
}

// Known reports whether n is one of the clients.
func (n Name) Known() bool { return slices.Contains(Names, n) }

// For is the adapter of a client. format is how a Claude-shaped client's
// PreToolUse denial is answered: "exit" (status 2, the reason on stderr;
// the default) or "json" (permissionDecision on stdout); the others have
// one way each and take "" or "exit".
func For(name Name, format string) (Adapter, error) {
	if format != "" && format != "exit" && format != "json" {
		return nil, fmt.Errorf("--format must be exit or json, not %q", format)
	}
	switch name {
	case Claude, Codex, Qwen:
		return &claudeFamily{name: name, json: format == "json"}, nil
	case Gemini:
		return gemini{}, nil
	case OpenCode:
		return opencode{}, nil
	case Cline:
		return cline{}, nil
	case Copilot:
		return copilot{}, nil
	}
	return nil, fmt.Errorf("unknown client %q: use one of %s", name, namesList())
}

func namesList() string {
	s := make([]string, len(Names))
	for i, n := range Names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// object reads a payload as one JSON object, keys kept raw.
func object(input []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return nil, errors.New("no event on standard input")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil {
		return nil, fmt.Errorf("the event is not a JSON object: %s", PlainJSONError(err))
	}
	if obj == nil {
		return nil, errors.New("the event is not a JSON object: null")
	}
	return obj, nil
}

// payloadOf reads input, a hook's payload, into self's payload struct T.
// A payload another client surely sent (sniffed as one: not self's, nor
// one of alike's) is refused, naming the setting to fix and fields, the
// fields self's payloads carry. obj is the payload as object reads it.
func payloadOf[T any](self Name, input []byte, fields string, alike ...Name) (p T, obj map[string]json.RawMessage, err error) {
	if obj, err = object(input); err != nil {
		return p, nil, err
	}
	if claims(self, obj, alike...) {
		return p, obj, wrongClient(self, obj, fields)
	}
	err = decodeInto(obj, input, &p)
	return p, obj, err
}

// decodeInto reads a payload into a client's payload struct (v, a
// pointer to it); obj is the same payload as object read it. When every
// key obj has is either exactly a field's JSON name or no field's, and each
// such field is replaced whole by its value (a string, a number, a bool, a
// pointer to one, or raw JSON), it sets those fields from obj, value by
// value: what decoding input into v would set, without encoding/json
// first deriving v's field table by reflection (a hook process decodes one
// payload, so it would pay for that table in full). Anything else — a key
// matching a name only case-insensitively, a nested struct, a value of the
// wrong type — decodes input into v whole, as encoding/json does.
func decodeInto(obj map[string]json.RawMessage, input []byte, v any) error {
	if !fillFlat(obj, v) {
		if err := json.Unmarshal(input, v); err != nil {
			return fmt.Errorf("the event is not a JSON object: %s", PlainJSONError(err))
		}
	}
	return nil
}

// fillFlat sets v's fields from obj as decodeInto says, and reports
// whether it could; when it could not, v may be partly set (decodeInto
// then decodes input into v whole, which sets every field obj names).
func fillFlat(obj map[string]json.RawMessage, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	st := rv.Elem()
	t := st.Type()
	byName := make(map[string]reflect.Value, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if _, twice := byName[name]; twice || slices.Contains(strings.Split(opts, ","), "string") {
			return false // encoding/json's own rules decide these
		}
		byName[name] = st.Field(i)
	}
	for key, raw := range obj {
		field, ok := byName[key]
		if !ok {
			for name := range byName {
				if strings.EqualFold(key, name) {
					return false
				}
			}
			continue
		}
		if !replacedWhole(field.Type()) || json.Unmarshal(raw, field.Addr().Interface()) != nil {
			return false
		}
	}
	return true
}

// replacedWhole reports whether decoding a JSON value into a t replaces
// what was there, so that the last of two equal keys wins however the
// value is decoded: not so for a struct or a map, which a second value
// merges into, nor surely for a type that decodes itself.
func replacedWhole(t reflect.Type) bool {
	if t == reflect.TypeFor[json.RawMessage]() {
		return true
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := reflect.PointerTo(t)
	if p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// sniff guesses whose payload an object is, from the fields only one
// client sends, and says which fields told.
func sniff(obj map[string]json.RawMessage) (Name, string) {
	has := func(keys ...string) string {
		var found []string
		for _, k := range keys {
			if _, ok := obj[k]; ok {
				found = append(found, k)
			}
		}
		return strings.Join(found, ", ")
	}
	event, _ := stringOf(obj["hook_event_name"])
	switch {
	case has("hookName", "taskId", "preToolUse", "postToolUse", "workspaceRoots") != "":
		return Cline, has("hookName", "taskId", "preToolUse", "postToolUse", "workspaceRoots")
	case has("toolName", "toolArgs", "sessionId", "toolResult") != "":
		return Copilot, has("toolName", "toolArgs", "sessionId", "toolResult")
	case geminiEvent(event) != "" && geminiEvent(event) != EventName(event) || has("mcp_context", "prompt_response") != "":
		if event != "" && geminiEvent(event) != EventName(event) {
			return Gemini, "hook_event_name " + event
		}
		return Gemini, has("mcp_context", "prompt_response")
	case strings.HasPrefix(event, "tool.execute.") || strings.HasPrefix(event, "session.") || has("sessionID", "callID") != "":
		if event != "" {
			return OpenCode, "hook_event_name " + event
		}
		return OpenCode, has("sessionID", "callID")
	case has("turn_id") != "":
		return Codex, "turn_id"
	case has("tool_call_id") != "":
		return Qwen, "tool_call_id"
	case has("session_id", "hook_event_name", "tool_name", "tool_input", "transcript_path") != "":
		return Claude, has("session_id", "hook_event_name", "tool_name", "tool_input", "transcript_path")
	}
	return "", ""
}

// wrongClient is the error for a payload that is not this client's,
// naming the setting that fixes it.
func wrongClient(self Name, obj map[string]json.RawMessage, fields string) error {
	guess, why := sniff(obj)
	if guess != "" && guess != self {
		return fmt.Errorf("this is a %s payload (%s), but the hook reads %s's: the hook command needs --client %s (laserbrain install %s writes it; laserbrain doctor checks it)",
			guess.Title(), why, self.Title(), guess, guess)
	}
	return fmt.Errorf("the event has none of %s's fields (%s): if another client runs this hook, its command needs that client's --client (laserbrain install CLIENT writes it; laserbrain doctor checks it)",
		self.Title(), fields)
}

// claims reports whether obj is surely another client's payload (sniffed
// as one, not this one), so the hook says which setting to fix.
func claims(self Name, obj map[string]json.RawMessage, alike ...Name) bool {
	guess, _ := sniff(obj)
	return guess != "" && guess != self && !slices.Contains(alike, guess)
}

// presence fills who is attending from the hook's environment.
func presence(e *Payload, getenv func(string) string) {
	if getenv == nil {
		return
	}
	e.Presence, e.PresenceWhy = agentrun.Attendance(getenv)
}

// responseText reads a tool response as text: a string; stdout and stderr
// (Claude Code's Bash); an MCP content array's text parts; Gemini CLI's
// llmContent; else the JSON itself.
func responseText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if s, ok := stringOf(raw); ok {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"llmContent", "textResultForLlm", "output", "content", "result"} {
			if v, ok := obj[k]; ok {
				return responseText(v)
			}
		}
		_, hasOut := obj["stdout"]
		_, hasErr := obj["stderr"]
		if hasOut || hasErr {
			out, _ := stringOf(obj["stdout"])
			if e, _ := stringOf(obj["stderr"]); e != "" {
				if out != "" {
					out += "\n"
				}
				out += e
			}
			return out
		}
	}
	return string(raw)
}

// PlainJSONError says what was wrong with an event in words a model reads,
// without encoding/json's Go type names ("cannot unmarshal array into Go
// struct field ... of type string").
func PlainJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	t := te.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "a " + t.Kind().String()
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	case reflect.Interface:
		want = "a value"
	}
	if te.Field == "" {
		return fmt.Sprintf("want %s, got %s", want, te.Value)
	}
	return fmt.Sprintf("%s: want %s, got %s", te.Field, want, te.Value)
}

// jsonLine is v as one line of JSON.
func jsonLine(v any) string {
	b, _ := json.Marshal(v) // maps of strings and bools: cannot fail
	return string(b) + "\n"
}

// commandOutput is how a command hook answers: a's log on stderr, and out,
// when it says anything, as one JSON line on stdout.
func (a Reply) commandOutput(out map[string]any) Output {
	var r Output
	if a.Log != "" {
		r.Stderr = a.Log + "\n"
	}
	if len(out) > 0 {
		r.Stdout = jsonLine(out)
	}
	return r
}
