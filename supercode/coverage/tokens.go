package coverage

import (
	"bufio"
	"bytes"
	"io"
	"math"

	"github.com/laserkit/laserkit/grammar"
)

// TranscriptTokens is what a session has spent, read from its transcript
// (JSON lines, as Claude Code writes them) the way the reference bills it:
// over every line holding "usage", message.usage's input tokens + 1.25 ×
// cache writes + 0.10 × cache reads + 5 × output tokens, summed as floats
// and truncated. ok is false when the transcript cannot be read that way
// (a usage that is not an object, a count that is not a number), as the
// reference then records no tokens.
func TranscriptTokens(r io.Reader) (n int, ok bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	total := 0.0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && bytes.Contains(line, []byte(`"usage"`)) {
			if v, perr := grammar.Parse(line); perr == nil && v.Kind == grammar.Object {
				msg := firstTruthy(get(v, "message"), grammar.Value{Kind: grammar.Object})
				if msg.Kind == grammar.Object {
					u := firstTruthy(get(msg, "usage"), grammar.Value{Kind: grammar.Object})
					if u.Kind != grammar.Object {
						return 0, false
					}
					in, ok1 := count(u, "input_tokens", false)
					cw, ok2 := count(u, "cache_creation_input_tokens", true)
					cr, ok3 := count(u, "cache_read_input_tokens", true)
					out, ok4 := count(u, "output_tokens", false)
					if !ok1 || !ok2 || !ok3 || !ok4 {
						return 0, false
					}
					// Each product rounded on its own (float64() stops a fused
					// multiply-add), summed left to right as Python does.
					total += ((in + float64(1.25*cw)) + float64(0.10*cr)) + float64(5.0*out)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false
		}
	}
	if math.IsInf(total, 0) || math.IsNaN(total) {
		return 0, false
	}
	return int(total), true
}

// count reads one usage figure: absent is 0; with orZero (the reference's
// `x or 0`) null is 0 too.
func count(u grammar.Value, key string, orZero bool) (float64, bool) {
	v, present := u.Get(key)
	if !present {
		return 0, true
	}
	if orZero && !truthy(*v) {
		return 0, true
	}
	f, ok := num(*v)
	if !ok {
		return 0, false
	}
	x, _ := f.Float64()
	return x, true
}
