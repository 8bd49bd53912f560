package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
)

// parseStreamLine reads one stream line: a JSON object whose keys are among
// goal, progress, distance, parent_goal, user_turn, doing, next, blocked,
// run and new_run (exactly spelled; a repeated key takes its last value).
// Absent progress is advancing and absent distance 5, as for check's flags;
// null progress is ungrammatical and null distance unknown. A distance is a
// whole number from 0 to 10 (3.0 and 1e1 are whole numbers too): the
// reference's clamping reading is for the MCP server, not for a line a
// program wrote. It returns the state and the run named on the line (ID ""
// for none).
//
// It is a hand-written reader for this one flat shape because a general
// decoder costs more than the check it feeds; FuzzStreamLine holds it to a
// reading built on encoding/json.
func parseStreamLine(line []byte) (laserbrain.StepInput, lineRun, error) {
	return parseStreamLineInterned(line, nil)
}

// lineRun is the run a stream line names, and whether it asks to start it.
type lineRun struct {
	ID  string
	New bool
}

// parseStreamLineInterned is parseStreamLine with an interner: plain strings
// seen before (an agent repeats its goal) are returned without a copy.
func parseStreamLineInterned(line []byte, intern *interner) (laserbrain.StepInput, lineRun, error) {
	p := lineParser{b: line, intern: intern}
	in := laserbrain.StepInput{Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}
	var run lineRun
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return in, lineRun{}, p.notObject()
	}
	p.i++
	p.ws()
	if p.peek() == '}' {
		p.i++
	} else {
		for {
			p.ws()
			if p.peek() != '"' {
				return in, lineRun{}, p.syntax("a quoted key")
			}
			key, err := p.str()
			if err != nil {
				return in, lineRun{}, err
			}
			p.ws()
			if p.peek() != ':' {
				return in, lineRun{}, p.syntax("':' after the key")
			}
			p.i++
			p.ws()
			if err := p.field(key, &in, &run); err != nil {
				return in, lineRun{}, err
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
				continue
			case '}':
				p.i++
			default:
				return in, lineRun{}, p.syntax("',' or '}'")
			}
			break
		}
	}
	p.ws()
	if p.i != len(p.b) {
		return in, lineRun{}, errors.New("not one JSON object: text follows it on the line")
	}
	if run.ID != "" {
		if err := laserbrain.ValidateRunID(run.ID); err != nil {
			return in, lineRun{}, err
		}
	}
	return in, run, nil
}

type lineParser struct {
	b      []byte
	i      int
	intern *interner
}

// interner hands out one string per distinct plain value, up to a bound.
type interner = jsonl.Interner

func (p *lineParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *lineParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *lineParser) syntax(want string) error {
	if p.i >= len(p.b) {
		return errors.New("not JSON: the object is cut short")
	}
	r, _ := utf8.DecodeRune(p.b[p.i:])
	return fmt.Errorf("not JSON: want %s at byte %d, found %q", want, p.i+1, r)
}

// notObject explains a line that does not start with '{'.
func (p *lineParser) notObject() error {
	var v any
	if json.Unmarshal(p.b, &v) == nil {
		return fmt.Errorf("want a JSON object, got %s", jsonKind(p.b[p.i]))
	}
	return p.syntax("'{'")
}

func jsonKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// str reads a JSON string. Plain strings are copied as they stand; any with
// an escape or a byte that is not plain UTF-8 go through encoding/json, so
// escapes and invalid bytes read exactly as it reads them.
func (p *lineParser) str() (string, error) {
	start := p.i
	p.i++
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			raw := p.b[start:p.i]
			if plain {
				if p.intern != nil {
					return p.intern.String(raw[1 : len(raw)-1]), nil
				}
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", fmt.Errorf("not JSON: bad string at byte %d", start+1)
			}
			return s, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return "", fmt.Errorf("not JSON: control character in a string at byte %d", p.i+1)
		case c >= utf8.RuneSelf:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return "", errors.New("not JSON: a string is cut short")
}

// value reads any JSON scalar or skips a composite, returning its raw bytes
// and its kind.
func (p *lineParser) value() (raw []byte, kind string, err error) {
	start := p.i
	switch c := p.peek(); {
	case c == '"':
		if _, err := p.str(); err != nil {
			return nil, "", err
		}
		return p.b[start:p.i], "string", nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return p.b[start:p.i], jsonKind(c), nil
			}
		}
		return nil, "", p.syntax("a value")
	case c == '-' || (c >= '0' && c <= '9'):
		if !p.number() {
			return nil, "", fmt.Errorf("not JSON: bad number at byte %d", start+1)
		}
		return p.b[start:p.i], "number", nil
	case c == '[' || c == '{':
		// The line is refused whatever is inside; a real JSON reader would
		// refuse it too, either as malformed or as the wrong type.
		if c == '[' {
			return nil, "array", nil
		}
		return nil, "object", nil
	}
	return nil, "", p.syntax("a value")
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *lineParser) number() bool {
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return false
	}
	if p.peek() == '.' {
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// progressByQuoted maps the quoted progress values to the package's strings.
var progressByQuoted = map[string]string{
	`"` + laserbrain.ProgressAdvancing + `"`: laserbrain.ProgressAdvancing,
	`"` + laserbrain.ProgressStuck + `"`:     laserbrain.ProgressStuck,
	`"` + laserbrain.ProgressCircling + `"`:  laserbrain.ProgressCircling,
}

func internProgress(v string) string {
	if p, ok := progressByQuoted[`"`+v+`"`]; ok {
		return p
	}
	return v
}

// field reads the value of key into the state.
func (p *lineParser) field(key string, in *laserbrain.StepInput, run *lineRun) error {
	raw, kind, err := p.value()
	if err != nil {
		return err
	}
	switch key {
	case "goal", "parent_goal", "doing", "next", "blocked", "run", "progress":
		var v string // null reads as empty: for progress that is ungrammatical
		switch kind {
		case "string":
			if key == "progress" {
				// The common values need no copy of their own.
				if p, ok := progressByQuoted[string(raw)]; ok {
					in.Progress = p
					return nil
				}
			}
			if v, err = (&lineParser{b: raw, intern: p.intern}).str(); err != nil {
				return err
			}
		case "null":
		default:
			return fmt.Errorf("%s: want a string, got %s", key, kind)
		}
		switch key {
		case "goal":
			in.Goal = v
		case "parent_goal":
			in.ParentGoal = v
		case "doing":
			in.Doing = v
		case "next":
			in.Next = v
		case "blocked":
			in.Blocked = v
		case "run":
			run.ID = v
		case "progress":
			in.Progress = internProgress(v)
		}
	case "distance":
		d, err := lineDistance(raw, kind)
		if err != nil {
			return err
		}
		in.Distance = d
	case "user_turn", "new_run":
		var b bool
		switch kind {
		case "bool":
			b = raw[0] == 't'
		case "null":
		default:
			return fmt.Errorf("%s: want true or false, got %s", key, kind)
		}
		if key == "user_turn" {
			in.UserTurn = b
		} else {
			run.New = b
		}
	default:
		return fmt.Errorf("unknown field %q", key)
	}
	return nil
}

// lineDistance reads a line's distance: null is unknown, a number must be
// a whole number from 0 to 10.
func lineDistance(raw []byte, kind string) (laserbrain.Distance, error) {
	switch kind {
	case "null":
		return laserbrain.NoDistance, nil
	case "number":
		f, err := strconv.ParseFloat(string(raw), 64)
		if err == nil && f >= 0 && f <= 10 && f == math.Trunc(f) {
			return laserbrain.Dist(int(f)), nil
		}
		return laserbrain.Distance{}, fmt.Errorf("distance: want a whole number from 0 to 10, or null (unknown); got %s", raw)
	}
	return laserbrain.Distance{}, fmt.Errorf("distance: want a whole number from 0 to 10, or null (unknown); got %s", kind)
}
