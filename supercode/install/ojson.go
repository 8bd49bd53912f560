package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/laserkit/laserkit/grammar"
)

// node is a JSON value that keeps its object keys in their order and its
// numbers as written, so a settings file is rewritten with every key the
// user had, where they had it.
type node struct {
	kind    byte // '{', '[', or 's' (any scalar: string, number, bool, null)
	members []member
	items   []*node
	scalar  any // string, json.Number, bool or nil
}

type member struct {
	key string
	val *node
}

func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{k, v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return &node{kind: 's', scalar: t}, nil
	}
}

// fromValue turns a Go value (maps with string keys, slices, strings,
// numbers, bools, nil) into a node; map keys are taken in the order keys
// lists them, then sorted.
func fromValue(v any) *node {
	switch x := v.(type) {
	case *node:
		return x
	case orderedMap:
		n := &node{kind: '{'}
		for _, kv := range x {
			n.members = append(n.members, member{kv.key, fromValue(kv.val)})
		}
		return n
	case []any:
		n := &node{kind: '['}
		for _, e := range x {
			n.items = append(n.items, fromValue(e))
		}
		return n
	case []string:
		n := &node{kind: '['}
		for _, e := range x {
			n.items = append(n.items, &node{kind: 's', scalar: e})
		}
		return n
	default:
		return &node{kind: 's', scalar: v}
	}
}

// orderedMap is an object literal with its key order.
type orderedMap []struct {
	key string
	val any
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// set replaces key's value in place, or appends the key.
func (n *node) set(key string, v *node) {
	for i := range n.members {
		if n.members[i].key == key {
			n.members[i].val = v
			return
		}
	}
	n.members = append(n.members, member{key, v})
}

func (n *node) del(key string) bool {
	for i := range n.members {
		if n.members[i].key == key {
			n.members = append(n.members[:i], n.members[i+1:]...)
			return true
		}
	}
	return false
}

// objectAt returns the object under key, creating it; an existing value of
// another type is an error (nothing is overwritten).
func (n *node) objectAt(key, where string) (*node, error) {
	v := n.get(key)
	if v == nil {
		v = &node{kind: '{'}
		n.set(key, v)
		return v, nil
	}
	if v.kind != '{' {
		return nil, fmt.Errorf("%s.%s is not an object; fix it by hand (nothing was changed)", where, key)
	}
	return v, nil
}

func (n *node) str() (string, bool) {
	if n == nil || n.kind != 's' {
		return "", false
	}
	s, ok := n.scalar.(string)
	return s, ok
}

// render writes n as JSON.stringify(v, null, 2) does: two-space indent,
// "key": value, empty containers as {} and [], strings escaped only where
// JSON requires (non-ASCII and <, >, & left as they are).
func render(n *node) []byte {
	var b bytes.Buffer
	write(&b, n, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func write(b *bytes.Buffer, n *node, depth int) {
	switch n.kind {
	case '{':
		if len(n.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, m := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(b, depth+1)
			grammar.WriteJSONString(b, m.key, false)
			b.WriteString(": ")
			write(b, m.val, depth+1)
		}
		indent(b, depth)
		b.WriteByte('}')
	case '[':
		if len(n.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(b, depth+1)
			write(b, e, depth+1)
		}
		indent(b, depth)
		b.WriteByte(']')
	default:
		switch x := n.scalar.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			if x {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case string:
			grammar.WriteJSONString(b, x, false)
		case json.Number:
			b.WriteString(x.String())
		default:
			raw, _ := json.Marshal(x)
			b.Write(raw)
		}
	}
}

func indent(b *bytes.Buffer, depth int) {
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("  ", depth))
}
