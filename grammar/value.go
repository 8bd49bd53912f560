package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind is the JSON type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Value is a JSON value that remembers key order and the literal text of
// numbers, both of which the content hash depends on.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     string // the literal as written, e.g. "1.0"
	Str     string
	Items   []Value
	Members []Member
}

// Member is one key of an object, in document order.
type Member struct {
	Key   string
	Value Value
}

// Get returns the member named key of an object.
func (v *Value) Get(key string) (*Value, bool) {
	if v.Kind != Object {
		return nil, false
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i].Value, true
		}
	}
	return nil, false
}

// Parse reads one JSON document, keeping key order and number literals.
// Duplicate keys are an error: which one wins differs between readers.
func Parse(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, "")
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Value{}, fmt.Errorf("invalid JSON: unexpected data after the document (offset %d)", dec.InputOffset())
	}
	return v, nil
}

func parseValue(dec *json.Decoder, ptr string) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Value{}, errors.New("invalid JSON: unexpected end of input")
		}
		return Value{}, fmt.Errorf("invalid JSON near offset %d: %v", dec.InputOffset(), err)
	}
	switch t := tok.(type) {
	case nil:
		return Value{Kind: Null}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		return Value{Kind: Number, Num: t.String()}, nil
	case string:
		return Value{Kind: String, Str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := Value{Kind: Array, Items: []Value{}}
			for i := 0; dec.More(); i++ {
				item, err := parseValue(dec, ptr+"/"+strconv.Itoa(i))
				if err != nil {
					return Value{}, err
				}
				v.Items = append(v.Items, item)
			}
			_, err := dec.Token() // ']'
			return v, err
		case '{':
			v := Value{Kind: Object, Members: []Member{}}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return Value{}, fmt.Errorf("invalid JSON near offset %d: %v", dec.InputOffset(), err)
				}
				key := kt.(string)
				if seen[key] {
					return Value{}, fmt.Errorf("duplicate key %q at %s", key, pointerOrRoot(ptr))
				}
				seen[key] = true
				val, err := parseValue(dec, ptr+"/"+escapePointer(key))
				if err != nil {
					return Value{}, err
				}
				v.Members = append(v.Members, Member{Key: key, Value: val})
			}
			_, err := dec.Token() // '}'
			return v, err
		}
	}
	return Value{}, fmt.Errorf("invalid JSON: unexpected token %v", tok)
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// Lookup resolves an RFC 6901 JSON pointer ("" or "/" is the whole document).
func (v *Value) Lookup(pointer string) (*Value, error) {
	if pointer == "" || pointer == "/" {
		return v, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("JSON pointer %q must start with /", pointer)
	}
	cur := v
	walked := ""
	for _, raw := range strings.Split(pointer[1:], "/") {
		tok := strings.ReplaceAll(strings.ReplaceAll(raw, "~1", "/"), "~0", "~")
		switch cur.Kind {
		case Object:
			next, ok := cur.Get(tok)
			if !ok {
				return nil, fmt.Errorf("no key %q at %s", tok, pointerOrRoot(walked))
			}
			cur = next
		case Array:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.Items) || (len(tok) > 1 && tok[0] == '0') {
				return nil, fmt.Errorf("no index %q at %s (array of %d)", tok, pointerOrRoot(walked), len(cur.Items))
			}
			cur = &cur.Items[i]
		default:
			return nil, fmt.Errorf("%s is a %s, not an object or array", pointerOrRoot(walked), cur.Kind)
		}
		walked += "/" + raw
	}
	return cur, nil
}
