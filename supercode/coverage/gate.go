package coverage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/operator"
)

// Input is what a decision reads: the event, the session's record (nil
// when it has none yet) and, for a write, the link's rows (the claim gate;
// NeedsLink says when to read them).
type Input struct {
	Event  HookEvent
	Record *Record
	Link   []json.RawMessage
}

// Rules: what decided a warning or a refusal, for the record (a gate
// event's label is Rule + ": " + the stage).
const (
	// RuleCoverage: too many steps since the last check, or coverage
	// below the floor. The label laserbrain coverage counts refusals by.
	RuleCoverage = "coverage"
	// RuleClaim: the write touches a path another agent claimed.
	RuleClaim = "claim"
)

// Stages of a coverage answer: reads warned in the band past the
// threshold, acting calls refused there, every call refused past twice it
// (or far below the floor).
const (
	StageWarn   = "warn"
	StageActing = "acting"
	StageHard   = "hard"
)

// Decision is the gate's answer to one call, with its reasons.
type Decision struct {
	// Answer is allow or deny: coverage never asks a person. An allow at
	// StageWarn is a warning (Warns): the call runs, and the model is told
	// why it nearly did not.
	Answer operator.Answer
	// Reason is what the model is told: the warning or the refusal, with
	// how to check. Empty for a silent allow.
	Reason string
	// Rule and Stage say what decided (RuleCoverage with a Stage, or
	// RuleClaim); empty for a silent allow.
	Rule, Stage string
	// Facts are the numbers behind a coverage answer.
	Facts Facts
	// Claim is the claim a write ran into (RuleClaim).
	Claim *Claim
	// Arm is the session's probe arm, reported the first time the session
	// is gated (the reference's probe-arms log); Record is then the record
	// marked as reported, to be saved.
	Arm    *ArmRow
	Record *Record
}

// Warns reports an allow that carries a warning for the model (Reason).
func (d Decision) Warns() bool { return d.Answer == operator.Allow && d.Stage == StageWarn }

// Facts are the numbers a coverage answer was decided on (the reference's
// refusals log: the stage, the tool, and these).
type Facts struct {
	Tool       string  `json:"tool"`
	Arm        string  `json:"arm"`
	Since      int     `json:"since"`
	Steps      int     `json:"steps"`
	Coverage   float64 `json:"coverage"`
	Floor      float64 `json:"floor"`
	BlockAfter int     `json:"block_after"`
	HardAfter  int     `json:"hard_after"`
}

// ArmRow is one line of the reference's probe-arms log.
type ArmRow struct {
	Session    string `json:"session"`
	Arm        string `json:"arm"`
	Share      int    `json:"share"`
	BlockAfter int    `json:"block_after"`
}

// Arms of the reference's probe.
const (
	ArmControl = "control"
	ArmRelaxed = "relaxed"
)

// NeedsLink reports whether Gate reads the link for this event: only a
// write can run into a claim.
func (c Config) NeedsLink(ev HookEvent) bool {
	switch c.Mode {
	case Reference:
		return !c.GateOff && refWriteTool(gateTool(&ev)) && refEditTarget(&ev) != ""
	case On:
		return ev.Kind == Write && len(ev.Files) > 0
	}
	return false
}

// Gate decides a pre-tool-use call. It never reads or writes anything:
// the caller hands in the record and the link, and keeps what comes back.
func (c Config) Gate(in Input) Decision {
	switch c.Mode {
	case Reference:
		return c.refGate(in)
	case On:
		return c.onGate(in)
	}
	return Decision{Answer: operator.Allow}
}

// refAlwaysAllow: names the reference never gates (substrings of the
// lowercased name). Its other tools (modulate, similarity, store_*) are
// gated like any other.
var refAlwaysAllow = [...]string{"check_state", "reset_task", "get_history", "read_field", "field_vocabulary",
	"speak_to_field", "link_read", "link_whoami", "link_write", "drift_grammar", "search_tool"}

// refReadWords: a name holding one of these (and no write word) reads.
var refReadWords = [...]string{"read", "grep", "glob", "ls", "list_", "get_", "search", "find", "webfetch", "websearch", "fetch"}

var refWriteWords = [...]string{"edit", "write", "notebookedit", "str_replace", "search_replace"}

func anyIn(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func refWriteTool(low string) bool { return anyIn(low, refWriteWords[:]) }

// refEditTarget is the file a write names (file_path, path,
// notebook_path, filePath of its raw input), "" when none.
func refEditTarget(ev *HookEvent) string {
	ti := value(ev.Input)
	if ti.Kind != grammar.Object {
		return ""
	}
	t := firstTruthy(get(ti, "file_path"), get(ti, "path"), get(ti, "notebook_path"), get(ti, "filePath"))
	if !truthy(t) {
		return ""
	}
	return str(t)
}

// refMe is who the reference's gate is: LASERBRAIN_AGENT, else the
// record's stamp, else "unknown" (our payloads carry no agent field).
func refMe(ev *HookEvent, rec *Record) string {
	if a := strings.ToLower(strings.TrimSpace(ev.Agent)); a != "" && a != "unknown" {
		return a
	}
	if rec != nil {
		if a := strings.ToLower(strings.TrimSpace(rec.Agent)); a != "" && a != "unknown" {
			return a
		}
	}
	return "unknown"
}

func (c Config) refGate(in Input) Decision {
	if c.GateOff {
		return Decision{Answer: operator.Allow}
	}
	ev := &in.Event
	tool := gateTool(ev)
	if anyIn(tool, refAlwaysAllow[:]) {
		return Decision{Answer: operator.Allow}
	}
	rec := in.Record
	me := refMe(ev, rec)
	if refWriteTool(tool) {
		if target := refEditTarget(ev); target != "" {
			if cl, ok := claimOn(target, Claims(in.Link, me)); ok {
				return Decision{Answer: operator.Deny, Rule: RuleClaim, Claim: &cl, Reason: refClaim(cl.Path, cl.Agent, me)}
			}
		}
	}
	if ev.Session == "" || rec == nil {
		return Decision{Answer: operator.Allow}
	}
	var d Decision
	arm := c.probeArm(ev.Session)
	if !rec.ArmLogged {
		nominal := refBlockAfter
		if arm == ArmRelaxed {
			nominal = refRelaxedBlockAfter
		}
		d.Arm = &ArmRow{Session: ev.Session, Arm: arm, Share: c.ProbeShare, BlockAfter: nominal}
		d.Record = rec.clone()
		d.Record.ArmLogged = true
	}
	blockAfter, floor := refBlockAfter, c.Floor
	if arm == ArmRelaxed && !c.FloorSet {
		floor = refRelaxedFloor
		blockAfter = c.gapDraw(ev.Session, rec.NumChecks())
	}
	f := Facts{Tool: tool, Arm: arm, Since: rec.Since(), Steps: rec.Steps, Coverage: rec.Coverage(),
		Floor: floor, BlockAfter: blockAfter, HardAfter: blockAfter * refHardMultiple}
	late := f.Since >= blockAfter
	thin := f.Steps >= refMinSteps && f.Coverage < floor
	if !late && !thin {
		d.Answer = operator.Allow
		return d
	}
	starved := f.Coverage < floor/2 && f.Steps >= refMinSteps
	hard := f.Since >= f.HardAfter || starved
	reading := anyIn(tool, refReadWords[:]) && !refWriteTool(tool)
	d.Rule, d.Facts = RuleCoverage, f
	if !hard && reading {
		d.Answer, d.Stage = operator.Allow, StageWarn
		d.Reason = refWarn(f.Since, f.Coverage, floor, f.HardAfter)
		return d
	}
	d.Answer, d.Stage = operator.Deny, StageActing
	if hard {
		d.Stage = StageHard
	}
	d.Reason = refDeny(late, f.Since, f.Steps, f.Coverage, floor, hard, me)
	return d
}

// probeArm is the session's arm: relaxed for ProbeShare percent of
// session ids (the first 8 hex digits of their SHA-256, mod 100), else
// control; stable for the life of the id.
func (c Config) probeArm(session string) string {
	if c.ProbeShare == 0 || session == "" {
		return ArmControl
	}
	if hash8(session)%100 < uint64(c.ProbeShare) {
		return ArmRelaxed
	}
	return ArmControl
}

// gapDraw is the relaxed arm's threshold for the gap after the n-th check.
func (c Config) gapDraw(session string, n int) int {
	return refGapDraws[hash8(session+":"+strconv.Itoa(n))%uint64(len(refGapDraws))]
}

func hash8(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	n, _ := strconv.ParseUint(hex.EncodeToString(sum[:4]), 16, 64)
	return n
}

func (c Config) onGate(in Input) Decision {
	ev := &in.Event
	// laserbrain's own tools are how an agent gets out: never held.
	if ev.Kind == Own || ev.Own != "" {
		return Decision{Answer: operator.Allow}
	}
	rec := in.Record
	me := refMe(ev, rec)
	if ev.Kind == Write {
		claims := Claims(in.Link, me)
		for _, file := range ev.Files {
			if cl, ok := claimOn(file, claims); ok {
				return Decision{Answer: operator.Deny, Rule: RuleClaim, Claim: &cl, Reason: claimText(file, cl, me)}
			}
		}
	}
	if rec == nil {
		return Decision{Answer: operator.Allow}
	}
	f := Facts{Tool: ev.Tool, Since: rec.Since(), Steps: rec.Steps, Coverage: rec.Coverage(), Floor: c.Floor,
		BlockAfter: c.BlockAfter, HardAfter: c.BlockAfter * max(1, c.HardMultiple)}
	late := f.Since >= c.BlockAfter
	thin := c.Floor > 0 && f.Steps >= MinSteps && f.Coverage < c.Floor
	if !late && !thin {
		return Decision{Answer: operator.Allow}
	}
	hard := f.Since >= f.HardAfter || (c.Floor > 0 && f.Steps >= MinSteps && f.Coverage < c.Floor/2)
	d := Decision{Rule: RuleCoverage, Facts: f}
	if !hard && ev.Kind == Read {
		d.Answer, d.Stage = operator.Allow, StageWarn
	} else {
		d.Answer, d.Stage = operator.Deny, StageActing
		if hard {
			d.Stage = StageHard
		}
	}
	d.Reason = refusalText(d.Stage, late, f, rec.Goal, ev.checkTool())
	return d
}
