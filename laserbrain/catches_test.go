package laserbrain

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Each catch fires on the incident it was written for and stays silent on
// the clean case. Expected texts are the reference's format strings
// (catches.py 0.53.0) filled in by hand.

func signatures(cs []Catch) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Signature)
	}
	return out
}

func TestUnfalsified(t *testing.T) {
	// The grain guard: passed three times, never red.
	incident := []Event{CheckEvent("grain guard", true), ToolEvent("read_file", "x"), CheckEvent("grain guard", true), CheckEvent("grain guard", true)}
	got := Unfalsified(incident)
	want := Catch{"unfalsified", "'grain guard' has passed 3× and never failed — break it and watch it go red", []string{"grain guard: 3 pass, 0 fail"}}
	if len(got) != 1 || got[0].Detail != want.Detail || !slices.Equal(got[0].Evidence, want.Evidence) || got[0].Signature != want.Signature {
		t.Errorf("incident: %+v, want %+v", got, want)
	}
	// Clean: the check has been seen to fail; unknown outcomes are not passes.
	clean := []Event{CheckEvent("tests", true), CheckEvent("tests", false), CheckEvent("tests", true), {Kind: EventCheck, Name: "lint"}}
	if got := Unfalsified(clean); len(got) != 0 {
		t.Errorf("clean: %+v", got)
	}
	// Several checks: reported in the order first seen; a quote in the name
	// switches repr to double quotes.
	got = Unfalsified([]Event{CheckEvent("it's fine", true), CheckEvent("a", true), CheckEvent("a", true)})
	if len(got) != 2 || !strings.HasPrefix(got[0].Detail, `"it's fine" has passed 1×`) || !strings.HasPrefix(got[1].Detail, "'a' has passed 2×") {
		t.Errorf("order/repr: %+v", got)
	}
}

func TestInstrumentBlind(t *testing.T) {
	// Four blank screenshots: one catch at the third, the last result quoted.
	blank := func(r any) Event { return ToolEvent("screenshot", r) }
	incident := []Event{blank("blank"), blank(map[string]any{}), blank(map[string]any{"y": 0, "vh": json.Number("0")}), blank(nil)}
	got := InstrumentBlind(incident, 3)
	ev := "screenshot -> {'vh': 0, 'y': 0}"
	if len(got) != 1 || got[0].Signature != "instrument-blind" ||
		got[0].Detail != "'screenshot' returned nothing 3× running — check the instrument before the subject" ||
		!slices.Equal(got[0].Evidence, []string{ev, ev, ev}) {
		t.Errorf("incident: %+v", got)
	}
	// Clean: a real result in between resets the run; false is an answer.
	clean := []Event{blank(""), blank(0), blank(map[string]any{"rows": 3}), blank(""), blank(false), blank([]any{})}
	if got := InstrumentBlind(clean, 3); len(got) != 0 {
		t.Errorf("clean: %+v", got)
	}
	// Counted per tool; a second unbroken run fires again.
	mixed := []Event{blank(""), ToolEvent("grep", ""), blank(""), ToolEvent("grep", "hit"), blank(""), blank("ok"), blank(""), blank(""), blank("")}
	if got := InstrumentBlind(mixed, 3); len(got) != 2 {
		t.Errorf("two runs of three: %+v", got)
	}
}

func TestUnrun(t *testing.T) {
	long := strings.Repeat("é", 130)
	incident := []Event{ClaimEvent("parser", "four hold, four interrupt"), ToolEvent("parser", ""), ClaimEvent("cache", long)}
	got := Unrun(incident)
	if len(got) != 2 || got[0].Detail != "claim about 'parser' with nothing executed against it — run behaviour, do not read it" ||
		!slices.Equal(got[0].Evidence, []string{"four hold, four interrupt"}) || got[1].Evidence[0] != strings.Repeat("é", 120) {
		t.Errorf("incident: %+v", got)
	}
	// Clean: the subject was run (after the claim is as good as before).
	clean := []Event{ClaimEvent("parser", "two of eight hold"), ToolEvent("parser", "3 passed"), CheckEvent("parser", true)}
	if got := Unrun(clean); len(got) != 0 {
		t.Errorf("clean: %+v", got)
	}
}

func TestCatchesOrder(t *testing.T) {
	log := []Event{ClaimEvent("x", "y"), ToolEvent("s", nil), ToolEvent("s", nil), ToolEvent("s", nil), CheckEvent("c", true)}
	if got := signatures(Catches(log)); !slices.Equal(got, []string{"unfalsified", "instrument-blind", "unrun"}) {
		t.Errorf("Catches order %v", got)
	}
	if got := Catches(nil); len(got) != 0 {
		t.Errorf("Catches(nil) = %v", got)
	}
}

func TestDegenerate(t *testing.T) {
	for _, v := range []any{nil, "", 0, 0.0, json.Number("0"), json.Number("-0.0"), []any{}, map[string]any{}, "blank", "empty",
		map[string]any{"y": 0, "vh": nil, "s": ""}, map[string]any{"a": false}, []string{}, map[string]int{"a": 0}, uint8(0)} {
		if !Degenerate(v) {
			t.Errorf("Degenerate(%#v) = false", v)
		}
	}
	for _, v := range []any{false, true, "0", "Blank", 1, json.Number("0.5"), []any{0}, map[string]any{"a": 1}, map[string]any{"a": []any{}}, map[string]any{"a": true}} {
		if Degenerate(v) {
			t.Errorf("Degenerate(%#v) = true", v)
		}
	}
}

func TestResidue(t *testing.T) {
	// The #3a93c9 sweep: case-sensitive, right three times, wrong the fourth.
	re := regexp.MustCompile(`(?i)#3a93c9`)
	before := "a{color:#3a93c9} b{color:#3a93c9} c{color:#3a93c9} d{color:#3A93C9}"
	after := "a{color:#2f6f99} b{color:#2f6f99} c{color:#2f6f99} d{color:#3A93C9}"
	got := Residue(before, after, re)
	if len(got) != 1 || got[0].Signature != "residue" || got[0].Detail != "the sweep changed 3 and left 1 still matching — justify each" ||
		!slices.Equal(got[0].Evidence, []string{"#3A93C9"}) {
		t.Errorf("incident: %+v", got)
	}
	if got := Residue(before, strings.ReplaceAll(after, "#3A93C9", "#2f6f99"), re); got != nil {
		t.Errorf("clean: %+v", got)
	}
}

func TestContaminated(t *testing.T) {
	page := "<p>Price: <b> undefined </b></p>\n/* see .sheet-grain\n   below */\n<p>todo: lorem ipsum</p>"
	got := Contaminated(page)
	if !slices.Equal(signatures(got), []string{"contaminated", "contaminated", "contaminated", "contaminated"}) {
		t.Fatalf("incident: %+v", got)
	}
	want := []struct{ detail, sample string }{
		{"a block comment is visible in the output", "/* see .sheet-grain below */"},
		{"a work note is visible in the output", "todo:"},
		{"placeholder text is visible in the output", "lorem ipsum"},
		{"a leaked value is visible in the output", "> undefined <"},
	}
	for i, w := range want {
		if got[i].Detail != w.detail || got[i].Evidence[0] != w.sample {
			t.Errorf("catch %d: %+v, want %q %q", i, got[i], w.detail, w.sample)
		}
	}
	if got := Contaminated("<p>Price: <b>12 €</b></p> — a todolist app, TBDx"); len(got) != 0 {
		t.Errorf("clean: %+v", got)
	}
}

func TestStaleGate(t *testing.T) {
	// The grain guard tested for the class name in the source and matched a
	// comment: it passes the page with the grain removed.
	sample := `<div class="sheet-grain"></div><!-- see .sheet-grain below -->`
	removeGrain := func(s string) string { return strings.Replace(s, `class="sheet-grain"`, `class=""`, 1) }
	stale := func(s string) bool { return strings.Contains(s, "sheet-grain") }
	got := StaleGate(stale, removeGrain, sample)
	if len(got) != 1 || got[0].Signature != "stale-gate" ||
		got[0].Detail != "the gate still passes a deliberately broken input — it is green for a reason other than the thing being correct" ||
		got[0].Evidence[0] != `<div class=""></div><!-- see .sheet-grain below -->` {
		t.Errorf("incident: %+v", got)
	}
	sound := func(s string) bool { return strings.Contains(s, `class="sheet-grain"`) }
	if got := StaleGate(sound, removeGrain, sample); got != nil {
		t.Errorf("clean: %+v", got)
	}
	broken := func(s string) bool { return false }
	if got := StaleGate(broken, removeGrain, sample); len(got) != 1 || got[0].Detail != "the gate fails its own clean sample — it is broken, not stale" {
		t.Errorf("broken gate: %+v", got)
	}
}

func TestPyRepr(t *testing.T) {
	for v, want := range map[any]string{
		"a'b": `"a'b"`, `a"b'c`: `'a"b\'c'`, "x\ny": `'x\ny'`, "\x01é": `'\x01é'`, nil: "None", true: "True",
		json.Number("1"): "1", json.Number("1.0"): "1.0", 2.5: "2.5",
		3.0: "3", // a Go float64 that is whole is what encoding/json makes of a JSON integer
	} {
		if got := PyRepr(v); got != want {
			t.Errorf("PyRepr(%#v) = %s, want %s", v, got, want)
		}
	}
	if got := PyRepr([]any{"a", map[string]any{"b": nil}}); got != "['a', {'b': None}]" {
		t.Errorf("nested: %s", got)
	}
}
