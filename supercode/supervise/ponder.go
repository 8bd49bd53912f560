package supervise

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
)

// SessionGround is a ponder session's ground: its subject, and its lens
// when it has one.
func SessionGround(subject string, lens *string) string {
	if lens != nil && strings.TrimSpace(*lens) != "" {
		return subject + " " + *lens
	}
	return subject
}

// PassStep is how one pass of a ponder session reads as a spelled state,
// from the ledger's facts alone (the mapping, ponder/SPEC.md §10):
//
//	gap       = 1 − graded/counted (1 when nothing is counted)
//	unsettled = max(gap, min(1, novelty + churn)); 1 on pass 1
//	distance  = 0 when this pass and the one before are quiet (Rule 6 as
//	            far as the ledger shows it: coverage 1, novelty < 0.05,
//	            churn < 0.10, thrash ≤ 0.25); 1 when only this one is;
//	            else min(10, 2 + ⌈8·unsettled⌉)
//	progress  = circling when thrash > 0.25 (the pass undid the one
//	            before); advancing otherwise
//
// A session is never spelled stuck: a stall is the instrument's own reading
// of a distance that stops falling (stalled), not something declared.
func PassStep(passes []ponder.PassFacts, k int) (progress string, distance int) {
	p := passes[k]
	progress = laserbrain.ProgressAdvancing
	if p.Thrash != nil && *p.Thrash > thrashCircling {
		progress = laserbrain.ProgressCircling
	}
	switch {
	case p.Quiet && k > 0 && passes[k-1].Quiet:
		return progress, 0
	case p.Quiet:
		return progress, 1
	}
	return progress, min(10, 2+int(math.Ceil(8*Unsettled(p))))
}

// thrashCircling is ponder's R3 threshold: above it a pass undid the one
// before.
const thrashCircling = 0.25

// Unsettled is the share of a pass still open: the coverage gap, or the
// findings it added and revised over the live ones, whichever is larger.
func Unsettled(p ponder.PassFacts) float64 {
	gap := 1.0
	if p.Counted > 0 {
		gap = 1 - float64(p.Graded)/float64(p.Counted)
	}
	if p.Novelty == nil || p.Churn == nil {
		return 1 // pass 1: the survey, nothing settled yet
	}
	return max(gap, min(1, *p.Novelty+*p.Churn))
}

// PassEvents are the events a pass shows (ponder/SPEC.md §10): the judge's
// verdict as a check ("rule6", passed only on stop), every unit graded and
// every phantom delete re-verified as a tool call on the unit's path,
// findings raised and retracted as claims about it, edits and changes as
// edits of it. Each tool result names the session, so two sessions reading
// one file never look like one blind tool.
func PassEvents(slug string, p ponder.PassFacts) []laserbrain.Event {
	var out []laserbrain.Event
	if j := p.Judgement; j != nil {
		ev := laserbrain.CheckEvent("rule6", j.Verdict == ponder.VerdictStop)
		ev.Result = j.Verdict
		ev.Text = "pass " + itoa(p.Pass) + ": " + j.Verdict + " (" + j.Rule + ") " + j.Reason
		out = append(out, ev)
	}
	for _, g := range p.GradedUnits {
		res := map[string]any{"session": slug, "pass": p.Pass, "unit": g.Unit, "by": g.By}
		if g.Grade != nil {
			res["grade"] = *g.Grade
		}
		out = append(out, laserbrain.Event{Kind: laserbrain.EventTool, Name: g.Path, OK: laserbrain.OKTrue, Result: res})
	}
	for _, ph := range p.Phantoms {
		name := ph.Unit
		if len(ph.Paths) > 0 {
			name = ph.Paths[len(ph.Paths)-1]
		}
		out = append(out, laserbrain.Event{Kind: laserbrain.EventTool, Name: name, OK: laserbrain.OKOf(len(ph.OnDisk) == 0),
			Result: map[string]any{"session": slug, "unit": ph.Unit, "phantom": true, "on_disk": ph.OnDisk}})
	}
	for _, f := range p.FindingOps {
		switch f.Op {
		case "add":
			out = append(out, laserbrain.ClaimEvent(f.Path, f.Text))
		case "delete":
			out = append(out, laserbrain.ClaimEvent(f.Path, "retracted "+f.Finding))
		default:
			out = append(out, laserbrain.EditEvent(f.Path, 1))
		}
	}
	return out
}

// SessionStart is the step a session's start makes: its ground (subject
// and lens), advancing, the distance not yet known.
func SessionStart(f *ponder.SessionFacts) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: SessionGround(f.Subject, f.Lens), Progress: laserbrain.ProgressAdvancing}
}

// SessionStep is pass k (0-based) of a session as the supervisor reads it:
// the state it spells (PassStep) and the events it shows (PassEvents). ok
// is false while the pass is not a step yet: neither decided nor judged in
// a session that closed. An open pass can still change (grades, a re-run
// judge), and a step is never taken back; so the steps of a session are
// the passes before its first open one.
func SessionStep(f *ponder.SessionFacts, k int) (in laserbrain.StepInput, events []laserbrain.Event, ok bool) {
	p := f.Passes[k]
	if p.Decision == nil && (f.Status == ponder.StatusActive || p.Judgement == nil) {
		return laserbrain.StepInput{}, nil, false
	}
	progress, d := PassStep(f.Passes, k)
	return laserbrain.StepInput{Goal: SessionGround(f.Subject, f.Lens), Progress: progress, Distance: laserbrain.Dist(d)},
		PassEvents(f.Slug, p), true
}

// SessionFiles is a session's footprint: every path its units carried,
// relative to the repository, slash separated; files outside it are left
// out (they cannot be shared).
func SessionFiles(repo string, f *ponder.SessionFacts) []string {
	out := make([]string, 0, len(f.Files))
	for _, p := range f.Files {
		if rel, ok := inRepo(repo, filepath.Join(f.Root, filepath.FromSlash(p))); ok {
			out = append(out, rel)
		}
	}
	return out
}
