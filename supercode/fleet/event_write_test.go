package fleet

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
)

// eventString draws a field's text from a mix that reaches every escape
// encoding/json makes (HTML's three included: json.Marshal escapes them).
func eventString(r *rand.Rand) string {
	parts := []string{"", "a", "run-1", "Bash", " ", "\"", "\\", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "é", "Φ=0.38", "⟨csv|import⟩",
		"😀", "\u2028", "\u2029", "\xff", "\xc3", "\xe2\x80"}
	var b strings.Builder
	for n := r.IntN(6); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// eventTime draws a time of every shape MarshalJSON meets: UTC and other
// zones (a minute offset, an offset with seconds), nanoseconds or none,
// the zero time, and years RFC 3339 cannot hold (an error from both).
func eventTime(r *rand.Rand) time.Time {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("X", -(3*3600 + 7)), time.Local}
	switch r.IntN(8) {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(10000+r.IntN(5), 1, 2, 3, 4, 5, 0, time.UTC)
	case 2:
		return time.Date(-1-r.IntN(5), 1, 2, 3, 4, 5, 0, time.UTC)
	}
	return time.Date(1970+r.IntN(80), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60),
		[]int{0, 5, 120_000_000, r.IntN(1e9)}[r.IntN(4)], zones[r.IntN(len(zones))])
}

// appendEvent writes exactly the line marshalEvent (json.Marshal and a line
// feed) writes, and fails where it fails, over thousands of drawn events:
// every field empty or not, every ok (one out of range), a result (the
// reflective path), a text over the line's bound (cut as before).
func TestAppendEventMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		e := RunEvent{ID: eventString(r), At: eventTime(r), Kind: eventString(r), Name: eventString(r),
			OK: laserbrain.OK(r.IntN(4)), Text: eventString(r), Session: eventString(r), Subagent: eventString(r)}
		switch r.IntN(20) {
		case 0:
			e.Result = json.RawMessage(`{"stdout":"<b>ok</b> & \"q\"", "n":[1, 2]}`)
		case 1:
			e.Text = strings.Repeat("x<", maxEventLine/2+r.IntN(10))
		}
		want, werr := marshalEvent(e)
		if werr == nil && !bytes.Contains(want, []byte("…")) {
			if plain, _ := json.Marshal(e); !bytes.Equal(want, append(plain, '\n')) {
				t.Fatalf("marshalEvent is not json.Marshal for %+v", e)
			}
		}
		got, gerr := appendEvent([]byte("prefix"), e)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("event %+v: error %v, marshalEvent's %v", e, gerr, werr)
		}
		if werr != nil {
			if string(got) != "prefix" {
				t.Fatalf("event %+v: a failed append left %q", e, got)
			}
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("event %+v:\n got %s\nwant %s", e, got, want)
		}
	}
}

// At the line's bound appendEvent and marshalEvent agree too: a line of
// exactly maxEventLine bytes before its line feed is written whole, one
// byte more is cut, whether the last character is plain, escaped (`<` is
// six bytes, \u003c; U+2028 three that are written as six) or multi-byte.
func TestAppendEventAtTheBound(t *testing.T) {
	base := RunEvent{ID: "e1", At: time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC), Kind: KindCheck, Name: "advancing", OK: laserbrain.OKTrue, Text: "", Session: "s"}
	empty, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	room := maxEventLine - len(empty) - len(`,"text":""`)
	for _, c := range []struct {
		text  string
		whole bool
	}{
		{strings.Repeat("x", room-1), true},
		{strings.Repeat("x", room), true},
		{strings.Repeat("x", room+1), false},
		{strings.Repeat("x", room-6) + "<", true},
		{strings.Repeat("x", room-5) + "<", false},
		{strings.Repeat("x", room-6) + "\u2028", true},
		{strings.Repeat("x", room-5) + "\u2028", false},
		{strings.Repeat("x", room-2) + "é", true},
		{strings.Repeat("x", room-1) + "é", false},
	} {
		e := base
		e.Text = c.text
		want, err := marshalEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if whole := !bytes.Contains(want, []byte("…")); whole != c.whole {
			t.Fatalf("text of %d bytes: marshalEvent wrote a line of %d bytes, whole %v, want %v", len(c.text), len(want), whole, c.whole)
		}
		got, err := appendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("text of %d bytes:\n got %d bytes %.80s…\nwant %d bytes %.80s…", len(c.text), len(got), got, len(want), want)
		}
	}
}
