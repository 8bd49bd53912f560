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
// user had, where they had it. A node read from a file also keeps its
// text's layout (src): written back, every part of the file install did not
// change is the same bytes, and what install adds follows the file's own
// indentation — so taking ours out again gives back the file as it was,
// formatting and all.
type node struct {
	kind    byte // '{', '[', or 's' (any scalar: string, number, bool, null)
	members []member
	items   []*node
	scalar  any // string, json.Number, bool or nil
	src     *layout
}

// layout is a parsed node's text around its parts.
type layout struct {
	raw     string // a scalar: its literal as written
	pre     string // an array item: the text before it in its array (a comma, white space)
	tail    string // a container: the text between its last part (or its opening) and its closing
	parts   int    // a container: how many members or items it had
	newline bool   // a container: its text spans lines
	lead    string // the document's root: the text before it, and after it
	trail   string
}

type member struct {
	key string
	val *node
	// As parsed ("" for a member added here): the text before the key
	// (a comma, white space), the key as written, and the text between
	// the key and the value.
	pre, rawKey, mid string
}

func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec, src: data}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	end := p.last
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	n.src.lead = string(data[:p.rootStart])
	n.src.trail = string(data[end:])
	return n, nil
}

// parser reads a document token by token, taking the text between tokens
// from the source by the decoder's offsets (last: where the last token
// read ended; the decoder's own offset may be past white space it peeked).
type parser struct {
	dec       *json.Decoder
	src       []byte
	last      int
	rootStart int
	depth     int
}

func (p *parser) token() (json.Token, error) {
	t, err := p.dec.Token()
	p.last = int(p.dec.InputOffset())
	return t, err
}

// start is where the next token begins after from: past white space, and a
// ':' or ',' between tokens.
func (p *parser) start(from int) int {
	i := from
	for i < len(p.src) && strings.IndexByte(" \t\r\n,:", p.src[i]) >= 0 {
		i++
	}
	return i
}

func (p *parser) value() (*node, error) {
	from := p.last
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	begin := p.start(from)
	if p.depth == 0 {
		p.rootStart = begin
	}
	switch t := tok.(type) {
	case json.Delim:
		p.depth++
		defer func() { p.depth-- }()
		switch t {
		case '{':
			return p.object(begin)
		case '[':
			return p.array(begin)
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return &node{kind: 's', scalar: t, src: &layout{raw: string(p.src[begin:p.last])}}, nil
	}
}

func (p *parser) object(begin int) (*node, error) {
	n := &node{kind: '{', src: &layout{}}
	return p.parts(n, begin, func(from int) error {
		kt, err := p.token()
		if err != nil {
			return err
		}
		k, ok := kt.(string)
		if !ok {
			return fmt.Errorf("object key %v is not a string", kt)
		}
		keyStart, keyEnd := p.start(from), p.last
		v, err := p.value()
		if err != nil {
			return err
		}
		n.members = append(n.members, member{key: k, val: v, pre: string(p.src[from:keyStart]),
			rawKey: string(p.src[keyStart:keyEnd]), mid: string(p.src[keyEnd:p.start(keyEnd)])})
		return nil
	})
}

func (p *parser) array(begin int) (*node, error) {
	n := &node{kind: '[', src: &layout{}}
	return p.parts(n, begin, func(from int) error {
		v, err := p.value()
		if err != nil {
			return err
		}
		v.src.pre = string(p.src[from:p.start(from)])
		n.items = append(n.items, v)
		return nil
	})
}

// parts reads n's parts with part, each from where its text starts (after
// the last part's end), up to n's closing bracket.
func (p *parser) parts(n *node, begin int, part func(from int) error) (*node, error) {
	for {
		from := p.last
		if !p.dec.More() {
			return p.close(n, begin, from)
		}
		if err := part(from); err != nil {
			return nil, err
		}
	}
}

// close reads the closing bracket and keeps the text before it (from the
// end of the last part).
func (p *parser) close(n *node, begin, from int) (*node, error) {
	if _, err := p.token(); err != nil {
		return nil, err
	}
	n.src.tail = string(p.src[from : p.last-1])
	n.src.parts = len(n.members) + len(n.items)
	n.src.newline = bytes.IndexByte(p.src[begin:p.last], '\n') >= 0
	return n, nil
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
			n.members = append(n.members, member{key: kv.key, val: fromValue(kv.val)})
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
	n.members = append(n.members, member{key: key, val: v})
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

// objectsAt walks keys down from n, creating the objects it lacks, and
// returns the objects it went through, n first. Removing creates nothing:
// a missing key ends the walk with no chain and no error (nothing of ours
// can be below it).
func (n *node) objectsAt(keys []string, where string, remove bool) ([]*node, error) {
	chain := []*node{n}
	for _, k := range keys {
		cur := chain[len(chain)-1]
		if remove && cur.get(k) == nil {
			return nil, nil
		}
		next, err := cur.objectAt(k, where)
		if err != nil {
			return nil, err
		}
		where += "." + k
		chain = append(chain, next)
	}
	return chain, nil
}

// dropEmptied deletes the objects of chain (objectsAt's answer for keys)
// that are empty, innermost first: what taking ours out emptied goes too,
// and the file is as it was before install made them.
func dropEmptied(chain []*node, keys []string) {
	for i := len(keys) - 1; i >= 0 && len(chain[i+1].members) == 0; i-- {
		chain[i].del(keys[i])
	}
}

func (n *node) str() (string, bool) {
	if n == nil || n.kind != 's' {
		return "", false
	}
	s, ok := n.scalar.(string)
	return s, ok
}

// render writes n back. A node read from a file is written with the
// file's own layout: every part install kept is the text it was, and
// what install added follows the file's indentation (or its one-line
// style). A new file is written as JSON.stringify(v, null, 2) does:
// two-space indent, "key": value, empty containers as {} and [], strings
// escaped only where JSON requires (non-ASCII and <, >, & left as they
// are).
func render(n *node) []byte {
	var b bytes.Buffer
	if n.src == nil {
		write(&b, n, "", "  ", false)
		b.WriteByte('\n')
		return b.Bytes()
	}
	b.WriteString(n.src.lead)
	unit := childIndent(n, "", "  ")
	if unit == "" {
		unit = "  "
	}
	emit(&b, n, "", unit, hadParts(n) && !n.src.newline)
	b.WriteString(n.src.trail)
	return b.Bytes()
}

// emit writes n, which starts on a line indented by own: a node read from
// the file keeps its text, its new parts laid out like its old ones.
func emit(b *bytes.Buffer, n *node, own, unit string, compact bool) {
	switch {
	case n.src == nil:
		write(b, n, own, unit, compact)
		return
	case n.kind == 's':
		b.WriteString(n.src.raw)
		return
	}
	if hadParts(n) {
		compact = !n.src.newline // an empty one says nothing of the file's style
	}
	child := childIndent(n, own, unit)
	open, closing := byte('{'), byte('}')
	if n.kind == '[' {
		open, closing = '[', ']'
	}
	b.WriteByte(open)
	count, parsed := 0, 0
	part := func(pre string, old bool) {
		if old {
			parsed++
			b.WriteString(commaFixed(pre, count == 0))
		} else {
			b.WriteString(commaFixed(newSeparator(n, child, compact), count == 0))
		}
		count++
	}
	if n.kind == '{' {
		for _, m := range n.members {
			part(m.pre, m.rawKey != "")
			if m.rawKey != "" {
				b.WriteString(m.rawKey + m.mid)
			} else {
				grammar.WriteJSONString(b, m.key, false)
				b.WriteString(newMid(n, compact))
			}
			emit(b, m.val, child, unit, compact)
		}
	} else {
		for _, e := range n.items {
			part(itemPre(e), e.src != nil)
			emit(b, e, child, unit, compact)
		}
	}
	switch {
	case count == 0 && len(n.src.tail) > 0 && !hadParts(n):
		b.WriteString(n.src.tail) // empty as it was: "{ }" stays
	case count > 0 && hadParts(n):
		b.WriteString(n.src.tail)
	case count > 0 && !compact:
		b.WriteString("\n" + own)
	}
	b.WriteByte(closing)
}

// hadParts reports whether a parsed container had members or items: its
// tail is then the text after the last of them, not its inside.
func hadParts(n *node) bool { return n.src.parts > 0 }

func itemPre(e *node) string {
	if e.src == nil {
		return ""
	}
	return e.src.pre
}

// commaFixed is a part's separator as the first part (no comma) or a later
// one (a comma first).
func commaFixed(pre string, first bool) string {
	i := strings.IndexByte(pre, ',')
	switch {
	case first && i >= 0:
		return pre[:i] + pre[i+1:]
	case !first && i < 0:
		return "," + pre
	}
	return pre
}

// newSeparator is the separator of a part install adds to n: a later
// part's separator as the file has it, else the first part's after a comma,
// else a line of its own (or nothing, on one line).
func newSeparator(n *node, child string, compact bool) string {
	var pres []string
	if n.kind == '{' {
		for _, m := range n.members {
			if m.rawKey != "" {
				pres = append(pres, m.pre)
			}
		}
	} else {
		for _, e := range n.items {
			if e.src != nil {
				pres = append(pres, e.src.pre)
			}
		}
	}
	for i := len(pres) - 1; i >= 0; i-- {
		if strings.IndexByte(pres[i], ',') >= 0 {
			return pres[i]
		}
	}
	if len(pres) > 0 {
		return "," + pres[0]
	}
	if compact {
		return ","
	}
	return ",\n" + child
}

// newMid is what goes between a new key and its value: as the object's own
// keys have it.
func newMid(n *node, compact bool) string {
	for _, m := range n.members {
		if m.rawKey != "" {
			return m.mid
		}
	}
	if compact {
		return ":"
	}
	return ": "
}

// childIndent is the indentation of n's parts: as its first part on a line
// of its own has it, else one unit deeper than own.
func childIndent(n *node, own, unit string) string {
	pres := []string{}
	if n.kind == '{' {
		for _, m := range n.members {
			pres = append(pres, m.pre)
		}
	} else {
		for _, e := range n.items {
			pres = append(pres, itemPre(e))
		}
	}
	for _, pre := range pres {
		if i := strings.LastIndexByte(pre, '\n'); i >= 0 {
			return pre[i+1:]
		}
	}
	return own + unit
}

// write writes a node made here, starting on a line indented by own, its
// parts one unit deeper (or all on one line when compact).
func write(b *bytes.Buffer, n *node, own, unit string, compact bool) {
	sep := func() {
		if !compact {
			b.WriteString("\n" + own + unit)
		}
	}
	switch n.kind {
	case '{', '[':
		parts, end := len(n.members), byte('}')
		if n.kind == '[' {
			parts, end = len(n.items), ']'
		}
		b.WriteByte(n.kind)
		for i := range parts {
			if i > 0 {
				b.WriteByte(',')
			}
			sep()
			if n.kind == '[' {
				write(b, n.items[i], own+unit, unit, compact)
				continue
			}
			m := n.members[i]
			grammar.WriteJSONString(b, m.key, false)
			if compact {
				b.WriteString(":")
			} else {
				b.WriteString(": ")
			}
			write(b, m.val, own+unit, unit, compact)
		}
		if parts > 0 && !compact {
			b.WriteString("\n" + own)
		}
		b.WriteByte(end)
	default:
		if n.src != nil {
			b.WriteString(n.src.raw)
			return
		}
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
