package coverage

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/operator"
)

// A session under Default: the sequence a user can predict from the
// numbers alone.
type session struct {
	t   *testing.T
	cfg Config
	rec *Record
}

func (s *session) pre(tool string, kind Kind) Decision {
	return s.cfg.Gate(Input{Event: HookEvent{Name: PreToolUse, Session: "s", Tool: tool, Kind: kind}, Record: s.rec})
}

func (s *session) post(ev HookEvent) Outcome {
	if ev.Name == "" {
		ev.Name = PostToolUse
	}
	ev.Session = "s"
	o := s.cfg.Observe(Input{Event: ev, Record: s.rec})
	if o.Changed {
		s.rec = o.Record
	}
	return o
}

// call is one tool call the gate let through, then its post-tool-use.
func (s *session) call(tool string, kind Kind) Outcome {
	s.t.Helper()
	if d := s.pre(tool, kind); d.Answer == operator.Deny {
		s.t.Fatalf("%s refused at step %d: %s", tool, s.rec.Steps+1, d.Reason)
	}
	return s.post(HookEvent{Tool: tool, Kind: kind})
}

func (s *session) check(goal string) {
	s.t.Helper()
	tool := "mcp__laserbrain__check_state"
	if d := s.pre(tool, Own); d.Answer != operator.Allow {
		s.t.Fatalf("check_state not allowed: %+v", d)
	}
	in, _ := json.Marshal(map[string]any{"goal": goal, "progress": "advancing", "distance": 4})
	s.post(HookEvent{Tool: tool, Kind: Own, Own: CheckState, Input: in})
}

func TestDefaultCadence(t *testing.T) {
	s := &session{t: t, cfg: Default()}
	s.post(HookEvent{Name: UserPromptSubmit, Prompt: ptr("add a CSV importer to the shop")})
	if s.rec == nil || s.rec.Goal != "add a CSV importer to the shop" {
		t.Fatalf("the prompt did not ground the record: %+v", s.rec)
	}
	// Steps 1–5 run; the 3rd is followed by a reminder.
	for i := 1; i <= 5; i++ {
		o := s.call("Bash", Shell)
		if (i == 3) != (o.Context != "") {
			t.Errorf("step %d: context %q", i, o.Context)
		}
		if i == 3 && !strings.Contains(o.Context, "After 5 steps without a check, calls that change something are refused until you check.") {
			t.Errorf("the reminder does not say when the gate closes: %q", o.Context)
		}
	}
	// 5 steps since the last check: acting calls are refused, reads warned.
	d := s.pre("Write", Write)
	if d.Answer != operator.Deny || d.Rule != RuleCoverage || d.Stage != StageActing {
		t.Fatalf("6th call: %+v", d)
	}
	for _, want := range []string{
		"laserbrain: 5 steps since your last check.", "THIS CALL DID NOT RUN",
		"mcp__laserbrain__check_state with goal (string, non-empty — the ONE goal, held stable across steps), progress (one of: advancing | stuck | circling), distance (integer 0-10 — how far from done (0 = done))",
		`e.g. {"goal":"add a CSV importer to the shop","progress":"advancing","distance":5} — laserbrain reads it as ⟨add|csv|import|shop⟩ advancing d5`,
		"laserbrain's own tools are never refused",
	} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, d.Reason)
		}
	}
	for i := 5; i < 10; i++ { // unchecked steps before the call
		if d := s.pre("Read", Read); !d.Warns() || d.Stage != StageWarn {
			t.Fatalf("read at %d unchecked steps: %+v", i, d)
		}
		s.post(HookEvent{Tool: "Read", Kind: Read})
	}
	// 10: everything but laserbrain's own tools.
	if d := s.pre("Read", Read); d.Answer != operator.Deny || d.Stage != StageHard {
		t.Fatalf("read at 10 unchecked steps: %+v", d)
	}
	for _, self := range []string{"mcp__laserbrain__supervision", "mcp__laserbrain__get_history"} {
		if d := s.pre(self, Own); d.Answer != operator.Allow {
			t.Errorf("%s refused: %+v", self, d)
		}
	}
	s.check("add a CSV importer to the shop")
	if d := s.pre("Bash", Shell); d.Answer != operator.Allow {
		t.Errorf("after a check: %+v", d)
	}
	if s.rec.Since() != 0 || len(s.rec.Checks) != 1 || s.rec.Steps != 11 {
		t.Errorf("record after the check: since %d, checks %d, steps %d", s.rec.Since(), len(s.rec.Checks), s.rec.Steps)
	}
	// Default has no floor: 1 check in 11 steps is not refused.
	for range 4 {
		s.call("Edit", Write)
	}
}

func TestDefaultStopHeldOnceWithUncheckedSteps(t *testing.T) {
	s := &session{t: t, cfg: Default()}
	for range 2 {
		s.call("Bash", Shell)
	}
	if o := s.post(HookEvent{Name: Stop}); o.Block != "" {
		t.Errorf("2 unchecked steps held the stop: %q", o.Block)
	}
	s.call("Bash", Shell)
	o := s.post(HookEvent{Name: Stop})
	if !strings.Contains(o.Block, "3 steps since your last check — spell your state once more before you stop") {
		t.Errorf("3 unchecked steps: %q", o.Block)
	}
	if o := s.post(HookEvent{Name: Stop, StopHookActive: true}); o.Block != "" {
		t.Errorf("a stop after the hold was held again: %q", o.Block)
	}
}

func TestChecksFromOtherRoutesCount(t *testing.T) {
	c := Default()
	s := &session{t: t, cfg: c}
	for range 5 {
		s.post(HookEvent{Tool: "Bash", Kind: Shell})
	}
	// A `laserbrain check` command line is never refused and not counted
	// by the hook: the command counts itself.
	if d := c.Gate(Input{Event: HookEvent{Name: PreToolUse, Tool: "Bash", Kind: Shell, Own: CheckCommand}, Record: s.rec}); d.Answer != operator.Allow {
		t.Fatalf("laserbrain check refused: %+v", d)
	}
	s.post(HookEvent{Tool: "Bash", Kind: Shell, Own: CheckCommand})
	if s.rec.Steps != 5 {
		t.Errorf("the check command's call counted as a step: %d", s.rec.Steps)
	}
	s.rec = c.Checked(s.rec, "", CheckInput{Goal: "ship it", Progress: "advancing", Distance: json.RawMessage("3"), Reason: "grounded"})
	if s.rec.Since() != 0 || s.rec.Goal != "ship it" || s.rec.Checks[0].Reason != "grounded" {
		t.Errorf("after Checked: %+v", s.rec)
	}
	if d := s.pre("Bash", Shell); d.Answer != operator.Allow {
		t.Errorf("after a CLI check: %+v", d)
	}
	// A check before any tool call makes the record.
	if r := c.Checked(nil, "Builder", CheckInput{Goal: "g", Progress: "stuck"}); r == nil || r.Steps != 1 || r.Agent != "builder" {
		t.Errorf("Checked on no record: %+v", r)
	}
}

func TestResetStartsOver(t *testing.T) {
	s := &session{t: t, cfg: Default()}
	s.check("first task")
	for range 4 {
		s.call("Bash", Shell)
	}
	s.post(HookEvent{Tool: "mcp__laserbrain__reset_task", Kind: Own, Own: ResetTask})
	if s.rec.Steps != 0 || len(s.rec.Segments) != 1 || s.rec.Goal != "" || s.rec.WasReset == nil || !*s.rec.WasReset {
		t.Fatalf("after reset: %+v", s.rec)
	}
	// A prompt after a reset does not ground; the next check does.
	s.post(HookEvent{Name: UserPromptSubmit, Prompt: ptr("and now the other thing")})
	if s.rec.Goal != "" {
		t.Errorf("a prompt after a reset grounded the record: %q", s.rec.Goal)
	}
	s.check("the other thing")
	if s.rec.Goal != "the other thing" || *s.rec.WasReset {
		t.Errorf("the check after a reset did not ground: %+v", s.rec)
	}
}

func TestOffNeverRefuses(t *testing.T) {
	c, err := Configure(Settings{}, env(map[string]string{ModeEnv: "off"}))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cfg: c}
	for range 50 {
		s.call("Bash", Shell)
	}
	if s.rec != nil {
		t.Errorf("off kept a record: %+v", s.rec)
	}
}

func TestFloorWhenSet(t *testing.T) {
	f := 0.3
	c, err := Configure(Settings{Floor: &f, BlockAfter: iptr(100)}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cfg: c}
	s.check("g")
	for range 6 {
		s.call("Bash", Shell)
	}
	// 1 check over 7 steps; the floor waits for MinSteps.
	s.call("Bash", Shell)
	// 8 steps, 1 check: 12% < 15% (half the floor): every call refused.
	d := s.pre("Read", Read)
	if d.Answer != operator.Deny || d.Stage != StageHard || !strings.Contains(d.Reason, "coverage 12% (1 of 8 steps checked) is below the 30% floor") {
		t.Errorf("%+v", d)
	}
}

func TestConfigurePrecedenceAndErrors(t *testing.T) {
	ba := 7
	cases := []struct {
		name string
		s    Settings
		env  map[string]string
		want Mode
		ba   int
	}{
		{"default", Settings{}, nil, On, 5},
		{"policy on", Settings{Mode: "on", BlockAfter: &ba}, nil, On, 7},
		{"policy reference", Settings{Mode: "reference"}, nil, Reference, 4},
		{"reference variables", Settings{}, map[string]string{"LASERBRAIN_PROBE_SHARE": "0"}, Reference, 4},
		{"policy beats reference variables", Settings{Mode: "on"}, map[string]string{"LASERBRAIN_MIN_COVERAGE": "0.5"}, On, 5},
		{"run beats policy", Settings{Mode: "reference"}, map[string]string{ModeEnv: "on", BlockAfterEnv: "3"}, On, 3},
	}
	for _, c := range cases {
		got, err := Configure(c.s, env(c.env))
		if err != nil || got.Mode != c.want || got.BlockAfter != c.ba {
			t.Errorf("%s: %+v, %v; want %s block_after %d", c.name, got, err, c.want, c.ba)
		}
	}
	for _, bad := range []map[string]string{{ModeEnv: "strict"}, {FloorEnv: "high"}, {FloorEnv: "1.5"}, {BlockAfterEnv: "0"}, {NudgeEveryEnv: "-1"}} {
		if _, err := Configure(Settings{}, env(bad)); err == nil || !envconfig.Is(err) {
			t.Errorf("%v: error %v, want a configuration error", bad, err)
		}
	}
}

func TestReferenceConfigReadsItsVariablesAsPythonDoes(t *testing.T) {
	// int() and float() as CPython 3.11 reads them; unreadable → default.
	for s, want := range map[string]int{" 25 ": 25, "+25": 25, "1_0": 10, "-3": 0, "2.5": 50, "abc": 50, "": 50, "٣": 3, "1__0": 50, "150": 100} {
		if got := ReferenceConfig(env(map[string]string{"LASERBRAIN_PROBE_SHARE": s})).ProbeShare; got != want {
			t.Errorf("LASERBRAIN_PROBE_SHARE=%q: %d, want %d", s, got, want)
		}
	}
	for s, want := range map[string]float64{"0.3": 0.3, " 1e-1 ": 0.1, "inf": 1, "nan": 0, "1_0.5": 1, "": 0.2, "abc": 0.2, "-1": 0, "2": 1} {
		c := ReferenceConfig(env(map[string]string{"LASERBRAIN_MIN_COVERAGE": s}))
		if c.Floor != want || !c.FloorSet {
			t.Errorf("LASERBRAIN_MIN_COVERAGE=%q: %v (set %v), want %v", s, c.Floor, c.FloorSet, want)
		}
	}
}

func TestPercentAsPythonFormatsIt(t *testing.T) {
	// format(x, ".0%") in CPython 3.11.
	for x, want := range map[float64]string{1.0 / 8: "12%", 3.0 / 8: "38%", 0.08: "8%", 0.35: "35%", 2.0 / 11: "18%",
		1.0 / 9: "11%", 0.005: "0%", 0.015: "2%", 0.025: "2%", 0.045: "4%", 2.0 / 3: "67%"} {
		if got := pct(x); got != want {
			t.Errorf("pct(%v) = %s, want %s", x, got, want)
		}
	}
}

func TestPythonEquality(t *testing.T) {
	v := func(s string) grammar.Value { return value(json.RawMessage(s)) }
	for _, c := range []struct {
		a, b string
		eq   bool
	}{{"5", "5.0", true}, {"true", "1", true}, {`"5"`, "5", false}, {"[1,2]", "[1.0,2]", true},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true}, {"9007199254740993", "9007199254740992.0", false}, {"null", "null", true}} {
		if got := pyEqual(v(c.a), v(c.b)); got != c.eq {
			t.Errorf("%s == %s: %v", c.a, c.b, got)
		}
	}
	if !zeroish(v("false")) || !zeroish(v(`"0"`)) || zeroish(v(`"0.0"`)) || !zeroish(v("0.0")) {
		t.Error("zeroish disagrees with Python's `in (0, '0', 0.0)`")
	}
}

func TestClaims(t *testing.T) {
	rows := func(ss ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, s := range ss {
			out = append(out, json.RawMessage(s))
		}
		return out
	}
	// Standing claims: a later claim replaces the agent's earlier one; a
	// release drops them; my own never count.
	got := Claims(rows(
		`{"kind":"claim","from":"a","payload":{"paths":["src/"]}}`,
		`{"kind":"claim","from":"b","payload":{"claims":["fix the parser","lib/x.py"]}}`,
		`{"kind":"claim","from":"a","payload":{"paths":["docs/"]}}`,
		`{"kind":"claim","from":"me","payload":{"paths":["mine/"]}}`,
		`{"kind":"done","from":"b","payload":{"release":true}}`,
	), "ME")
	if len(got) != 1 || got[0] != (Claim{"docs/", "a"}) {
		t.Errorf("standing claims: %+v", got)
	}
	// An open wave: only its claimants who have not closed.
	got = Claims(rows(
		`{"kind":"wave_open","from":"a","payload":{"wave":"w1"}}`,
		`{"kind":"claim","from":"a","payload":{"wave":"w1","paths":["a/"]}}`,
		`{"kind":"claim","from":"b","payload":{"wave":"w1","paths":["b/"]}}`,
		`{"kind":"wave_close","from":"c","payload":{"wave":"w1","on_behalf_of":"a"}}`,
	), "me")
	if len(got) != 1 || got[0] != (Claim{"b/", "b"}) {
		t.Errorf("wave claims: %+v", got)
	}
	// One line that is not JSON: the reference reads no claims at all.
	if got := Claims(rows(`{"kind":"claim","from":"a","payload":{"paths":["src/"]}}`, `{torn`), "me"); got != nil {
		t.Errorf("an unreadable link: %+v", got)
	}
	for _, c := range []struct {
		target, claim string
		hit           bool
	}{ // the reference's touches() (and its substring rule) in CPython 3.11
		{"/repo/src/a.py", "src/", true}, {"/repo/src/a.py", "src/*.py", false}, {"src/a.py", "*.py", true},
		{"/repo/lib/a.py", "src/", false}, {"src", "src/a.py", true}, {"/x/srcs/a", "src/", true},
		{"/r/a[1].py", "*[1].py", false}, {"/r/x.py", "/r/[!y].py", true}} {
		if _, hit := claimOn(c.target, []Claim{{c.claim, "a"}}); hit != c.hit {
			t.Errorf("%s against claim %s: %v", c.target, c.claim, hit)
		}
	}
	// The gate: a write into a claimed path is refused, in both modes;
	// a read is not.
	link := rows(`{"kind":"claim","from":"other","payload":{"paths":["src/"]}}`)
	d := Default().Gate(Input{Event: HookEvent{Tool: "Write", Kind: Write, Files: []string{"/r/src/a.go"}, Agent: "me"}, Link: link})
	if d.Answer != operator.Deny || d.Rule != RuleClaim || !strings.Contains(d.Reason, "/r/src/a.go is claimed by other") {
		t.Errorf("our claim gate: %+v", d)
	}
	if !Default().NeedsLink(HookEvent{Kind: Write, Files: []string{"x"}}) || Default().NeedsLink(HookEvent{Kind: Read}) {
		t.Error("NeedsLink")
	}
}

func TestTranscriptTokens(t *testing.T) {
	tr := `{"type":"user","message":{"content":"usage is not a key here"}}
{"type":"assistant","message":{"usage":{"input_tokens":21,"output_tokens":182,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}
{"type":"assistant","message":{"usage":{"input_tokens":27,"output_tokens":35,"cache_read_input_tokens":12000,"cache_creation_input_tokens":null}}}
not json but "usage"
`
	// 21 + 5·182 = 931; 27 + 0.1·12000 + 5·35 = 1402 → 2333.
	if n, ok := TranscriptTokens(strings.NewReader(tr)); !ok || n != 2333 {
		t.Errorf("tokens %d %v, want 2333", n, ok)
	}
	if _, ok := TranscriptTokens(strings.NewReader(`{"message":{"usage":[1]}}` + "\n")); ok {
		t.Error("a usage that is not an object read as a count")
	}
}

func TestBriefIsTheGrammars(t *testing.T) {
	// Read grammar.json directly: every measured field's text, the
	// progress values, the use line and well-formedness are in the brief.
	doc, err := grammar.Parse(grammar.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	b := Default().Brief("add a CSV importer", "mcp_laserbrain_check_state")
	look := func(p string) grammar.Value {
		v, err := doc.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		return *v
	}
	for _, f := range look("/laserscore/measured").Items {
		says := look("/fields/" + f.Str).Str
		if !strings.Contains(b, "- "+f.Str+": "+says) {
			t.Errorf("the brief does not give field %s as %q", f.Str, says)
		}
	}
	for _, f := range look("/laserscore/carried").Items {
		if !strings.Contains(b, f.Str) {
			t.Errorf("the brief does not name %s", f.Str)
		}
	}
	for _, want := range []string{look("/use").Str, look("/well_formed").Str, look("/kind").Str,
		`Your ground: "add a CSV importer"`, "mcp_laserbrain_check_state with", "⟨add|csv|import⟩ advancing d5", "every 5 steps"} {
		if !strings.Contains(b, want) {
			t.Errorf("the brief lacks %q:\n%s", want, b)
		}
	}
	if n := strings.Count(b, "\n"); n > 14 {
		t.Errorf("the brief runs to %d lines; it should be short:\n%s", n, b)
	}
	if strings.Contains(Config{Mode: Off}.Brief("", ""), "Check at least") {
		t.Error("coverage off still promises refusals")
	}
}

func ptr(s string) *string { return &s }
func iptr(n int) *int      { return &n }

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var _ = math.Inf

func TestConfigureNamesTheBadSetting(t *testing.T) {
	f := 1.5
	for _, c := range []struct {
		s    Settings
		env  map[string]string
		want string
	}{
		{Settings{Floor: &f}, nil, "coverage.floor 1.5: want a number from 0 to 1"},
		{Settings{}, map[string]string{FloorEnv: "1.5"}, "LASERBRAIN_COVERAGE_FLOOR=1.5: want a number from 0 to 1"},
		{Settings{BlockAfter: iptr(0)}, nil, "coverage.block_after 0: want at least 1 step"},
		{Settings{Mode: "strict"}, nil, `coverage.mode "strict": want on, off or reference`},
		{Settings{}, map[string]string{ModeEnv: "strict"}, "LASERBRAIN_COVERAGE=strict: want on, off or reference"},
	} {
		if _, err := Configure(c.s, env(c.env)); err == nil || err.Error() != c.want {
			t.Errorf("%+v %v: error %v, want %q", c.s, c.env, err, c.want)
		}
	}
}

// A kept record lists the last two checks and counts the rest, its catches
// and its closed tasks' rows; the record it came from is left as it was.
func TestKeptRecordCountsWhatItDropsLeavingTheOriginal(t *testing.T) {
	r := &Record{Agent: "a", Goal: "g", Steps: 9}
	for i := 1; i <= 5; i++ {
		r.Checks = append(r.Checks, Check{Step: i, Goal: "g", Progress: "advancing"})
	}
	r.Catches = []Catch{{Step: 6, What: "failed call: Bash"}, {Step: 7, What: "failed call: Edit"}}
	r.Segments = []Segment{{Goal: "old", Steps: 4, Checks: []Check{{Step: 1}, {Step: 3}}, Catches: []Catch{{Step: 2}}}}
	before := fmt.Sprintf("%+v", *r)
	k := r.Kept()
	if got := fmt.Sprintf("%+v", *r); got != before {
		t.Fatalf("Kept changed its record:\n%s\nwas\n%s", got, before)
	}
	if len(k.Checks) != 2 || k.Checks[0].Step != 4 || k.Checks[1].Step != 5 || k.NumChecks() != 5 || r.NumChecks() != 5 {
		t.Fatalf("kept checks %+v (%d in all)", k.Checks, k.NumChecks())
	}
	if len(k.Catches) != 0 || k.EarlierCatches != 2 {
		t.Fatalf("kept catches %+v, %d counted", k.Catches, k.EarlierCatches)
	}
	if g := k.Segments[0]; g.Checks != nil || g.Catches != nil || g.EarlierChecks != 2 || g.EarlierCatches != 1 || g.Steps != 4 || g.Goal != "old" {
		t.Fatalf("kept segment %+v", g)
	}
	if k.Since() != r.Since() || k.Coverage() != r.Coverage() {
		t.Fatalf("kept: since %d coverage %v; whole: %d %v", k.Since(), k.Coverage(), r.Since(), r.Coverage())
	}
	// Kept again, nothing more is lost.
	if kk := k.Kept(); kk.NumChecks() != 5 || kk.EarlierCatches != 2 || kk.Segments[0].EarlierChecks != 2 {
		t.Fatalf("kept twice: %+v", kk)
	}
}
