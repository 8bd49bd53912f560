package laserbrain

import "github.com/laserkit/laserkit/internal/jsonl"

// ParseStepRecord reads one history line: what AppendJSON writes is read
// by hand, a field at a time (a report reads a fleet's histories whole,
// and encoding/json's reflection cost most of its time); any other shape
// — escapes, other spellings of the keys, a value of another type — is
// read by encoding/json, so the result is always what json.Unmarshal
// gives (FuzzParseStepRecord holds it to that).
func ParseStepRecord(line []byte) (StepRecord, error) {
	return StepReader{}.Parse(line)
}

// StepReader reads a run's history lines, one copy of each repeated string
// (a run's goal, its verdicts) kept for all of them.
type StepReader struct{ Strings *jsonl.Interner }

// Parse reads one history line, as ParseStepRecord does.
func (r StepReader) Parse(line []byte) (StepRecord, error) {
	return jsonl.Read(line, func(s *StepRecord, key string, val []byte) bool { return s.member(key, val, r.Strings) })
}

// member reads one field of a history line; false leaves the line to
// encoding/json.
func (s *StepRecord) member(key string, val []byte, in *jsonl.Interner) bool {
	ok := true
	switch key {
	case "n":
		s.N, ok = jsonl.Int(val)
	case "at":
		s.At, ok = jsonl.Time(val)
	case "goal":
		s.Goal, ok = jsonl.MemberString(val, in)
	case "progress":
		s.Progress, ok = jsonl.MemberString(val, in)
	case "distance":
		s.Distance = DistanceFromJSON(val)
	case "parent_goal":
		s.ParentGoal, ok = jsonl.MemberString(val, in)
	case "user_turn":
		s.UserTurn, ok = jsonl.Bool(val)
	case "reason":
		s.Reason, ok = jsonl.MemberString(val, in)
	case "drifting":
		s.Drifting, ok = jsonl.Bool(val)
	case "phi":
		s.Phi, ok = jsonl.Float(val)
	case "laserscore":
		if string(val) == "null" {
			s.Laserscore = nil
			break
		}
		var ls string
		ls, ok = jsonl.MemberString(val, in)
		s.Laserscore = &ls
	case "anchored":
		s.Anchored, ok = jsonl.Float(val)
	case "advice":
		s.Advice, ok = jsonl.MemberString(val, in)
	case "underlying":
		s.Underlying, ok = jsonl.MemberString(val, in)
	case "resumed_ground":
		s.Resumed, ok = jsonl.MemberString(val, in)
	default:
		ok = false
	}
	return ok
}
