package coverage

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain"
)

// The reference is Python, and its coverage answers depend on how Python
// reads a payload: a dict keeps its keys in order, "" and 0 and [] are
// false, 5 == 5.0, str(None) is "None", a string is sliced by code point.
// These helpers hold those readings in one place; everything else in the
// package works on typed values.

// value parses raw JSON keeping key order (a dict's order decides which
// nested reading is found first). Anything unreadable is null, which is
// what the reference makes of a payload field it cannot use.
func value(raw json.RawMessage) grammar.Value {
	if len(bytes.TrimSpace(raw)) == 0 {
		return grammar.Value{Kind: grammar.Null}
	}
	v, err := grammar.Parse(raw)
	if err != nil {
		return grammar.Value{Kind: grammar.Null}
	}
	return v
}

// get is dict.get(key): the member, or null (absent and null read alike).
func get(v grammar.Value, key string) grammar.Value {
	if m, ok := v.Get(key); ok {
		return *m
	}
	return grammar.Value{Kind: grammar.Null}
}

// has is `key in dict`.
func has(v grammar.Value, key string) bool {
	_, ok := v.Get(key)
	return ok
}

// truthy is Python's bool() of a value json.loads made.
func truthy(v grammar.Value) bool { return laserbrain.PyTruthy(v) }

// firstTruthy is `a or b or c`: the first truthy value, else the last.
func firstTruthy(vs ...grammar.Value) grammar.Value {
	for _, v := range vs {
		if truthy(v) {
			return v
		}
	}
	return vs[len(vs)-1]
}

// firstNonNull is the reference's `a if a is not None else b …` chain.
func firstNonNull(vs ...grammar.Value) grammar.Value {
	for _, v := range vs {
		if v.Kind != grammar.Null {
			return v
		}
	}
	return grammar.Value{Kind: grammar.Null}
}

// num reads a number (or a bool, which Python compares as 0 and 1) exactly.
func num(v grammar.Value) (*big.Float, bool) {
	switch v.Kind {
	case grammar.Bool:
		if v.Bool {
			return big.NewFloat(1), true
		}
		return new(big.Float), true
	case grammar.Number:
		if !strings.ContainsAny(v.Num, ".eE") {
			f, _, err := big.ParseFloat(v.Num, 10, 4096, big.ToNearestEven)
			return f, err == nil
		}
		f, ok := floatOf(v)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return new(big.Float).SetFloat64(f), true
	}
	return nil, false
}

// floatOf is float(x) of a number.
func floatOf(v grammar.Value) (float64, bool) {
	if v.Kind != grammar.Number {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal([]byte(v.Num), &f); err != nil {
		return math.Inf(1), true // out of range: Python reads inf
	}
	return f, true
}

// pyEqual is Python's == between two values json.loads made: numbers and
// booleans by value (5 == 5.0 == True is false, 1 == True is true), text by
// text, lists item by item, dicts key by key.
func pyEqual(a, b grammar.Value) bool {
	if fa, ok := num(a); ok {
		fb, ok := num(b)
		return ok && fa.Cmp(fb) == 0
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case grammar.Null:
		return true
	case grammar.String:
		return a.Str == b.Str
	case grammar.Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !pyEqual(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case grammar.Object:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for _, m := range a.Members {
			o, ok := b.Get(m.Key)
			if !ok || !pyEqual(m.Value, *o) {
				return false
			}
		}
		return true
	}
	return false
}

// str is Python's str() of a value.
func str(v grammar.Value) string { return laserbrain.PyStr(v) }

// cut is text[:n], by code point as Python slices.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for c := 0; c < n && i < len(s); c++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// dumps is Python's json.dumps(v): one line, ", " and ": ", non-ASCII
// escaped.
func dumps(v grammar.Value) string { return string(grammar.RenderLineASCII(v)) }

// coerce is the reference's reading of a tool's arguments: a dict as it
// is, a JSON object in a string decoded, null as {}, anything else
// wrapped as {"_": value}.
func coerce(v grammar.Value) grammar.Value {
	switch v.Kind {
	case grammar.Object:
		return v
	case grammar.Null:
		return grammar.Value{Kind: grammar.Object}
	case grammar.String:
		s := strings.TrimSpace(v.Str)
		if strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
			if d, err := grammar.Parse([]byte(s)); err == nil && d.Kind == grammar.Object {
				return d
			}
		}
	}
	return grammar.Value{Kind: grammar.Object, Members: []grammar.Member{{Key: "_", Value: v}}}
}

// wrapperTool: the tools some clients route MCP calls through.
func wrapperTool(tool string) bool {
	switch tool {
	case "use_tool", "CallMcpTool", "call_mcp_tool", "mcp_tool":
		return true
	}
	return false
}

// unwrap peels use_tool-style envelopes (at most four) down to the tool
// really called and its arguments, as the reference does: while the
// arguments hold a nested input and look like an envelope (a wrapper tool,
// a nested tool name, or a tool_input key), take the nested name and input
// — except that arguments carrying a goal or progress are a check's own,
// never peeled unless the tool is a wrapper.
func unwrap(tool string, args grammar.Value) (string, grammar.Value) {
	args = coerce(args)
	for range 4 {
		nestedName := str(firstTruthy(get(args, "tool_name"), get(args, "toolName"), get(args, "name"), grammar.Value{Kind: grammar.String}))
		nestedIn := firstNonNull(get(args, "tool_input"), get(args, "toolInput"), get(args, "arguments"), get(args, "parameters"), get(args, "input"))
		envelope := nestedIn.Kind != grammar.Null && (wrapperTool(tool) || nestedName != "" || has(args, "tool_input") || has(args, "toolInput"))
		if envelope && (get(args, "goal").Kind != grammar.Null || get(args, "progress").Kind != grammar.Null) && !wrapperTool(tool) {
			break
		}
		if !envelope {
			break
		}
		if nestedName != "" {
			tool = nestedName
		}
		args = coerce(nestedIn)
	}
	return tool, args
}

// reading walks a check's response for the verdict, as the reference
// does: the first dict (depth at most 6) with a boolean "drifting", or a
// truthy "run" with "arm" or "blind"; JSON carried in a string is decoded
// (its first value, when text follows it). ok is false when none is found.
func reading(v grammar.Value, depth int) (grammar.Value, bool) {
	if depth > 6 || v.Kind == grammar.Bool {
		return grammar.Value{}, false
	}
	switch v.Kind {
	case grammar.Object:
		if get(v, "drifting").Kind == grammar.Bool {
			return v, true
		}
		if truthy(get(v, "run")) && (has(v, "arm") || has(v, "blind")) {
			return v, true
		}
		for _, m := range v.Members {
			if got, ok := reading(m.Value, depth+1); ok {
				return got, true
			}
		}
	case grammar.Array:
		for _, it := range v.Items {
			if got, ok := reading(it, depth+1); ok {
				return got, true
			}
		}
	case grammar.String:
		t := laserbrain.PyStrip(v.Str)
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if d, ok := firstValue(t); ok {
				return reading(d, depth+1)
			}
		}
	}
	return grammar.Value{}, false
}

// firstValue decodes the first JSON value of s and ignores what follows
// (json.loads, and raw_decode when text trails the value).
func firstValue(s string) (grammar.Value, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return grammar.Value{}, false
	}
	v, err := grammar.Parse(raw)
	return v, err == nil
}

// pyStrip is str.strip().
func pyStrip(s string) string { return laserbrain.PyStrip(s) }
