package shell

import "testing"

// Strongest: executed beats inline code beats unknown beats a dry run
// beats data (whereRank: by the answer each gets with nobody there);
// carved-out findings do not count.
func TestStrongest(t *testing.T) {
	f := func(w Where, carved bool) Finding {
		return Finding{Where: w, CarvedOut: carved}
	}
	for _, c := range []struct {
		in   []Finding
		want string
	}{
		{nil, "none"},
		{[]Finding{f(Executed, true)}, "none"},
		{[]Finding{f(Data, false), f(Unknown, false)}, "unknown"},
		{[]Finding{f(DryRun, false), f(Data, false)}, "dry run"},
		{[]Finding{f(Unknown, false), f(DryRun, false), f(Data, false)}, "unknown"},
		{[]Finding{f(Data, false), f(InlineCode, false), f(Executed, true)}, "inline code"},
		{[]Finding{f(Data, false), f(Executed, false)}, "executed"},
	} {
		got := "none"
		if w, ok := Strongest(c.in); ok {
			got = w.String()
		}
		if got != c.want {
			t.Errorf("strongest(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
