package laserbrain

import (
	"strconv"
	"time"
)

// AppendJSON appends the record as encoding/json writes it (HTML escaping
// off). Stores append history one record per line; reflection would cost
// more than the check that made the record.
func (s *StepRecord) AppendJSON(b []byte) []byte {
	b = append(b, `{"n":`...)
	b = strconv.AppendInt(b, int64(s.N), 10)
	b = append(b, `,"at":"`...)
	b = s.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","goal":`...)
	b = appendJSONString(b, s.Goal)
	b = append(b, `,"progress":`...)
	b = appendJSONString(b, s.Progress)
	b = append(b, `,"distance":`...)
	if s.Distance.Known {
		b = strconv.AppendInt(b, int64(s.Distance.Value), 10)
	} else {
		b = append(b, "null"...)
	}
	if s.ParentGoal != "" {
		b = append(b, `,"parent_goal":`...)
		b = appendJSONString(b, s.ParentGoal)
	}
	if s.UserTurn {
		b = append(b, `,"user_turn":true`...)
	}
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, s.Reason)
	b = append(b, `,"drifting":`...)
	b = strconv.AppendBool(b, s.Drifting)
	b = append(b, `,"phi":`...)
	b = appendJSONFloat(b, s.Phi)
	b = append(b, `,"laserscore":`...)
	b = appendJSONStringPtr(b, s.Laserscore)
	b = append(b, `,"anchored":`...)
	b = appendJSONFloat(b, s.Anchored)
	if s.Advice != "" {
		b = append(b, `,"advice":`...)
		b = appendJSONString(b, s.Advice)
	}
	if s.Underlying != "" {
		b = append(b, `,"underlying":`...)
		b = appendJSONString(b, s.Underlying)
	}
	if s.Resumed != "" {
		b = append(b, `,"resumed_ground":`...)
		b = appendJSONString(b, s.Resumed)
	}
	return append(b, '}')
}
