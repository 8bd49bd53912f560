package ledger

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/jsonl"
)

// decoder reads ledger lines fast: the lines ponder writes are flat JSON
// objects of strings, numbers and booleans, so a small scanner reads them
// without reflection, taking string values as substrings of the file
// instead of allocating one string per value. Anything it does not
// expect — an escape sequence, a nested value, odd spacing it cannot
// follow — falls back to encoding/json for that line, which also produces
// the error for a line that is not JSON at all.
type decoder struct {
	src    string // the whole ledger, as one string
	strs   []string
	floats []float64
}

// slab allocation: the pointer fields of many records share backing arrays.
const slabSize = 4096

func (d *decoder) str(s string) *string {
	if len(d.strs) == cap(d.strs) {
		d.strs = make([]string, 0, slabSize)
	}
	d.strs = append(d.strs, s)
	return &d.strs[len(d.strs)-1]
}

func (d *decoder) float(f float64) *float64 {
	if len(d.floats) == cap(d.floats) {
		d.floats = make([]float64, 0, slabSize)
	}
	d.floats = append(d.floats, f)
	return &d.floats[len(d.floats)-1]
}

// decode reads the line src[start:end] into r.
func (d *decoder) decode(raw []byte, start, end int, r *Record) error {
	*r = Record{}
	if d.fast(start, end, r) {
		return nil
	}
	*r = Record{}
	return json.Unmarshal(raw, r)
}

// byteClass sorts bytes for the string scanner: escapes and controls send
// a string to encoding/json; high bytes need a UTF-8 check.
var byteClass = func() (t [256]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = classEscape
	}
	t['\\'] = classEscape
	for c := 0x80; c < 0x100; c++ {
		t[c] = classHigh
	}
	return t
}()

const (
	classEscape = 1 << iota
	classHigh
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// cursor reads one record's JSON text, s[i:end].
type cursor struct {
	s      string
	i, end int
}

func (c *cursor) skip() {
	for c.i < c.end && isSpace(c.s[c.i]) {
		c.i++
	}
}

// at reports whether the next byte is b.
func (c *cursor) at(b byte) bool { return c.i < c.end && c.s[c.i] == b }

// str reads a string without escapes, returning it as a substring
// (invalid UTF-8 is left to encoding/json, which replaces it).
func (c *cursor) str() (string, bool) {
	if !c.at('"') {
		return "", false
	}
	q := strings.IndexByte(c.s[c.i+1:c.end], '"')
	if q < 0 {
		return "", false
	}
	v := c.s[c.i+1 : c.i+1+q]
	var seen byte
	for k := 0; k < len(v); k++ {
		seen |= byteClass[v[k]]
	}
	// An escape (the quote found may be an escaped one) or a control
	// character: encoding/json's business.
	if seen&classEscape != 0 || (seen&classHigh != 0 && !utf8.ValidString(v)) {
		return "", false
	}
	c.i += q + 2
	return v, true
}

// number reads the characters a number may have (jsonl.IsNumber checks
// their grammar).
func (c *cursor) number() string {
	j := c.i
	for j < c.end && (c.s[j] == '-' || c.s[j] == '+' || c.s[j] == '.' || c.s[j] == 'e' || c.s[j] == 'E' || (c.s[j] >= '0' && c.s[j] <= '9')) {
		j++
	}
	lit := c.s[c.i:j]
	c.i = j
	return lit
}

// word reads lit (true, false or null) when it is next.
func (c *cursor) word(lit string) bool {
	if c.end-c.i < len(lit) || c.s[c.i:c.i+len(lit)] != lit {
		return false
	}
	c.i += len(lit)
	return true
}

// fast parses a flat object; false means "use encoding/json instead".
func (d *decoder) fast(i, end int, r *Record) bool {
	c := cursor{s: d.src, i: i, end: end}
	c.skip()
	if !c.at('{') {
		return false
	}
	c.i++
	c.skip()
	if c.at('}') {
		c.i++
		c.skip()
		return c.i == c.end
	}
	for {
		c.skip()
		key, ok := c.str()
		if !ok || !knownKey(key) {
			return false // encoding/json matches keys case-insensitively
		}
		c.skip()
		if !c.at(':') {
			return false
		}
		c.i++
		c.skip()
		if c.i >= c.end || !d.field(&c, key, r) {
			return false
		}
		c.skip()
		switch {
		case c.at(','):
			c.i++
		case c.at('}'):
			c.i++
			c.skip()
			return c.i == c.end
		default:
			return false
		}
	}
}

// field reads key's value and sets it in r; false leaves the record to
// encoding/json.
func (d *decoder) field(c *cursor, key string, r *Record) bool {
	switch b := c.s[c.i]; {
	case b == '"':
		v, ok := c.str()
		return ok && d.setString(r, key, v)
	case b == '-' || (b >= '0' && b <= '9'):
		lit := c.number()
		return jsonl.IsNumber(lit) && d.setNumber(r, key, lit)
	case b == 't' || b == 'f':
		v := b == 't'
		lit := "false"
		if v {
			lit = "true"
		}
		if !c.word(lit) || key != "phantom" {
			return false
		}
		r.Phantom = v
		return true
	case b == 'n':
		if !c.word("null") {
			return false
		}
		setNull(r, key)
		return true
	}
	return false // nested object or array: let encoding/json decide
}

// setString sets key's field to the string v; false where a string does
// not belong (encoding/json then has the last word).
func (d *decoder) setString(r *Record, key, v string) bool {
	switch key {
	case "ts":
		r.TS = v
	case "type":
		r.Type = v
	case "voice":
		r.Voice = v
	case "op":
		r.Op = v
	case "findingId":
		r.FindingID = v
	case "unitId":
		r.UnitID = v
	case "path":
		r.Path = v
	case "kind":
		r.Kind = v
	case "severity":
		r.Severity = v
	case "grade":
		r.Grade = d.str(v)
	case "text":
		r.Text = d.str(v)
	case "recommendation":
		r.Recommendation = d.str(v)
	case "evidence":
		r.Evidence = d.str(v)
	case "reason":
		r.Reason = d.str(v)
	case "prev":
		r.Prev = v
	case "seq", "pass", "batch", "batchSize", "confidence", "phantom":
		return false // a string where a number or bool belongs
	}
	return true
}

// setNumber sets key's field to the number lit; false where a number does
// not belong or does not fit.
func (d *decoder) setNumber(r *Record, key, lit string) bool {
	switch key {
	case "seq", "pass", "batch", "batchSize":
		n, err := strconv.Atoi(lit)
		if err != nil {
			return false
		}
		switch key {
		case "seq":
			r.Seq = n
		case "pass":
			r.Pass = n
		case "batch":
			r.Batch = n
		case "batchSize":
			r.BatchSize = n
		}
	case "confidence":
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return false
		}
		r.Confidence = d.float(f)
	default:
		return false
	}
	return true
}

// setNull clears key's field: as encoding/json, null clears a pointer and
// leaves the rest.
func setNull(r *Record, key string) {
	switch key {
	case "grade":
		r.Grade = nil
	case "text":
		r.Text = nil
	case "recommendation":
		r.Recommendation = nil
	case "evidence":
		r.Evidence = nil
	case "reason":
		r.Reason = nil
	case "confidence":
		r.Confidence = nil
	}
}

// knownKey reports whether key is one of Record's JSON keys, spelled
// exactly.
func knownKey(key string) bool {
	switch key {
	case "seq", "ts", "pass", "batch", "batchSize", "type", "voice", "op", "findingId", "unitId", "path",
		"kind", "grade", "severity", "confidence", "text", "recommendation", "evidence", "reason", "phantom", "prev":
		return true
	}
	return false
}
