package laserbrain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// OK is tri-state in JSON: true, false, null; anything else is refused.
func TestOKJSON(t *testing.T) {
	for o, want := range map[OK]string{OKTrue: "true", OKFalse: "false", OKUnknown: "null"} {
		b, err := json.Marshal(o)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", o, b, err, want)
		}
		var back OK = 99
		if err := json.Unmarshal(b, &back); err != nil || back != o {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, o)
		}
	}
	var o OK
	if err := json.Unmarshal([]byte(`"yes"`), &o); err == nil {
		t.Error(`ok "yes" was accepted`)
	}
	if OKUnknown.Known() || !OKTrue.Known() || !OKFalse.Failed() || OKUnknown.Failed() || OKOf(true) != OKTrue || OKOf(false) != OKFalse {
		t.Error("OK helpers disagree with their names")
	}
}

// An event decodes in the reference's shape, with an absent ok unknown,
// keeps numbers exact, and refuses a kind that is not one of the four.
func TestEventJSON(t *testing.T) {
	var ev Event
	if err := json.Unmarshal([]byte(`{"kind":"tool","name":"screenshot","result":{"vh":0,"n":1.0}}`), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != EventTool || ev.Name != "screenshot" || ev.OK != OKUnknown {
		t.Errorf("decoded %+v", ev)
	}
	if m, _ := ev.Result.(map[string]any); m["n"] != json.Number("1.0") {
		t.Errorf("result %#v: want the number kept as written", ev.Result)
	}
	b, _ := json.Marshal(CheckEvent("tests", false))
	if string(b) != `{"kind":"check","name":"tests","ok":false}` {
		t.Errorf("CheckEvent marshals as %s", b)
	}
	err := json.Unmarshal([]byte(`{"kind":"cheque","name":"x"}`), &ev)
	if err == nil || !strings.Contains(err.Error(), `"cheque"`) {
		t.Errorf("a misspelt kind: %v", err)
	}
	// A pending tool call saved before events had kinds still loads.
	if err := json.Unmarshal([]byte(`{"tool":"Bash","args":{"command":"make"},"ok":true}`), &ev); err != nil ||
		ev.Kind != EventTool || ev.Name != "Bash" || ev.OK != OKTrue || ev.Signature() != `Bash|{"command": "make"}` {
		t.Errorf("legacy tool call: %+v, %v", ev, err)
	}
	if err := (Event{Kind: "operator"}).Validate(); err == nil {
		t.Error("Validate accepted kind operator")
	}
}

// With events handed in, a check is corroborated iff at least one
// has ok ≠ false — so an event whose success is unknown corroborates,
// which a bool could not say.
func TestSawUnknownCorroborates(t *testing.T) {
	r := NewRun(RunOptions{})
	h := in("fix the contrast gate", adv, Dist(5))
	for i, c := range []struct {
		saw  []Event
		want float64
	}{
		{nil, 0.5}, // no events, no evidence source: dark
		{[]Event{ToolEvent("screenshot", "blank")}, 1},
		{[]Event{CheckEvent("tests", false)}, 0.5},
		{[]Event{CheckEvent("tests", false), EditEvent("a.css", 2)}, 1},
		{[]Event{ClaimEvent("gate", "it passes")}, 1},
		{[]Event{ToolCall("Bash", nil, false), ToolCall("Bash", nil, false)}, 0.5},
	} {
		r.Saw(c.saw...)
		v, _ := r.Step(h)
		if v.Anchored != c.want {
			t.Errorf("check %d after %v: anchored %v, want %v", i+1, c.saw, v.Anchored, c.want)
		}
	}
	if got := r.Corroboration(); got != 0.5 { // 3 of 6
		t.Errorf("corroboration %v, want 0.5", got)
	}
}

// Seeing an event marks the run observed before the next check (the
// reference sets saw_any in saw()), so the judgment's control says so.
func TestSawMarksObservedAtOnce(t *testing.T) {
	r := NewRun(RunOptions{})
	if _, err := r.Step(in("fix the contrast gate", adv, Dist(5))); err != nil {
		t.Fatal(err)
	}
	if r.Phronesis().Control.Observed {
		t.Fatal("observed before anything was seen")
	}
	r.Saw()
	if r.Phronesis().Control.Observed {
		t.Fatal("an empty Saw marked the run observed")
	}
	r.Saw(CheckEvent("tests", false))
	if !r.Phronesis().Control.Observed {
		t.Error("an event was seen but control reads observed false")
	}
}

// Machine evidence keeps working from tool events: the counters treat an
// unknown outcome as not failed, and the signature is the tool and its args.
func TestEvidenceFromToolEvents(t *testing.T) {
	var e Evidence
	at := time.Unix(1780000000, 0)
	e.Record(ToolCall("Bash", map[string]any{"command": "make"}, true), at)
	e.Record(ToolCall("Bash", map[string]any{"command": "make"}, false), at)
	e.Record(ToolEvent("Read", "text"), at)
	if e.OK != 2 || e.Fail != 1 || e.Steps != 3 {
		t.Errorf("counters ok %d fail %d steps %d, want 2 1 3", e.OK, e.Fail, e.Steps)
	}
	if e.Window[0].Sig != `Bash|{"command": "make"}` || e.Window[1].OK || !e.Window[2].OK {
		t.Errorf("window %+v", e.Window)
	}
}

// scores.ground is ground_score to 2 places, as the reference reports it
// (Φ 0.03: ground_score round(1/1.12, 3) = 0.893, scores.ground 0.89).
func TestScoresGroundRounded(t *testing.T) {
	r := NewRun(RunOptions{})
	if _, err := r.Step(in("ship the sky billboard", adv, Dist(5))); err != nil {
		t.Fatal(err)
	}
	v, _ := r.Step(in("ship the sky billboard", adv, Dist(4)))
	if v.GroundScore != 0.893 || v.Scores.Ground != 0.89 {
		t.Errorf("ground_score %v, scores.ground %v; want 0.893, 0.89", v.GroundScore, v.Scores.Ground)
	}
}
