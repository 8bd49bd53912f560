package laserbrain

import (
	"math"
	"strconv"

	"github.com/laserkit/laserkit/internal/jsonl"
)

// AppendJSON appends v as encoding/json writes it (HTML escaping off) and
// returns the extended buffer. It exists for the stream, where reflection
// would cost more than the check itself; TestAppendJSONMatchesEncodingJSON
// holds the two together.
func (v *CheckResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"drifting":`...)
	b = strconv.AppendBool(b, v.Drifting)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, v.Reason)
	b = append(b, `,"phi":`...)
	b = appendJSONFloat(b, v.Phi)
	b = append(b, `,"laserscore":`...)
	b = appendJSONStringPtr(b, v.Laserscore)
	b = append(b, `,"advice":`...)
	b = appendJSONString(b, v.Advice)
	b = append(b, `,"why":`...)
	b = appendJSONString(b, v.Why)
	b = append(b, `,"anchored":`...)
	b = appendJSONFloat(b, v.Anchored)
	b = append(b, `,"goal_score":`...)
	b = appendJSONFloat(b, v.GoalScore)
	b = append(b, `,"ground_score":`...)
	b = appendJSONFloat(b, v.GroundScore)
	b = append(b, `,"context":`...)
	b = appendJSONStringPtr(b, v.Context)
	b = append(b, `,"ground":`...)
	b = appendJSONString(b, v.Ground)
	if v.ParentOverlap != nil {
		b = append(b, `,"parent_overlap":`...)
		b = appendJSONFloat(b, *v.ParentOverlap)
	}
	if v.Period != 0 {
		b = append(b, `,"period":`...)
		b = strconv.AppendInt(b, int64(v.Period), 10)
	}
	if c := v.Claims; c != nil {
		b = append(b, `,"claims":{"cause":`...)
		b = strconv.AppendInt(b, int64(c.Cause), 10)
		b = append(b, `,"observation":`...)
		b = strconv.AppendInt(b, int64(c.Observation), 10)
		b = append(b, `,"grounded":`...)
		b = appendJSONFloatPtr(b, c.Grounded)
		b = append(b, `,"hits":`...)
		if c.Hits == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, h := range c.Hits {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"kind":`...)
				b = appendJSONString(b, h.Kind)
				b = append(b, `,"text":`...)
				b = appendJSONString(b, h.Text)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `,"scores":{"goal":`...)
	b = appendJSONFloat(b, v.Scores.Goal)
	b = append(b, `,"ground":`...)
	b = appendJSONFloat(b, v.Scores.Ground)
	b = append(b, `,"drift":`...)
	b = appendJSONFloat(b, v.Scores.Drift)
	b = append(b, `,"evidence":`...)
	b = appendJSONFloat(b, v.Scores.Evidence)
	if v.Scores.Language != nil {
		b = append(b, `,"language":`...)
		b = appendJSONFloat(b, *v.Scores.Language)
	}
	b = append(b, '}')
	if v.Run != "" {
		b = append(b, `,"run":`...)
		b = appendJSONString(b, v.Run)
	}
	if v.Step != 0 {
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(v.Step), 10)
	}
	return append(b, '}')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func appendJSONFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendJSONFloat(b, *f)
}

// appendJSONFloat formats f as encoding/json does: shortest digits, 'f'
// notation unless the magnitude is below 1e-6 or at least 1e21, and a
// one-digit negative exponent without its leading zero.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}

// appendJSONString quotes s as encoding/json does with HTML escaping off.
func appendJSONString(b []byte, s string) []byte { return jsonl.AppendString(b, s, false) }
