package laserbrain

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// Stamp is a moment in a shared file. It is written as RFC 3339 and read
// either that way or as Unix seconds (the reference's time.time()), so the
// files stay readable by and from the Python tools.
type Stamp struct{ time.Time }

// MarshalJSON writes RFC 3339 with nanoseconds.
func (s Stamp) MarshalJSON() ([]byte, error) { return json.Marshal(s.Time) }

// UnmarshalJSON reads RFC 3339, Unix seconds, or null (the zero time).
func (s *Stamp) UnmarshalJSON(b []byte) error {
	t := strings.TrimSpace(string(b))
	switch {
	case t == "null":
		s.Time = time.Time{}
		return nil
	case strings.HasPrefix(t, `"`):
		return json.Unmarshal(b, &s.Time)
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil || math.IsInf(secs, 0) || math.IsNaN(secs) {
		return fmt.Errorf("time %s: want RFC 3339 or Unix seconds", t)
	}
	whole, frac := math.Modf(secs)
	s.Time = time.Unix(int64(whole), int64(frac*1e9)).UTC()
	return nil
}
