package coverage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
)

// Our texts (On mode). Each refusal says exactly how to get out: the name
// the client gives check_state, its fields as the grammar states them, and
// one example call in the grammar's notation, on the session's own ground
// when it has one.

// exampleDistance is the distance the example call spells.
const exampleDistance = 5

// HowTo is how to check, in two sentences: the tool, its fields, an
// example call (with the laserscore laserbrain would read from it).
func HowTo(checkTool, ground string) string {
	if checkTool == "" {
		checkTool = DefaultCheckTool
	}
	n := laserbrain.GrammarNotation()
	var fields []string
	for _, f := range n.Measured {
		fields = append(fields, f+" ("+n.Says(f)+")")
	}
	goal := pyStrip(ground)
	example := ""
	if goal == "" {
		goal = "<the one goal you are pursuing>"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Goal     string `json:"goal"`
		Progress string `json:"progress"`
		Distance int    `json:"distance"`
	}{goal, n.Progress[0], exampleDistance})
	example = strings.TrimSpace(buf.String())
	if ls, ok := laserbrain.Laserscore(ground, n.Progress[0], laserbrain.Dist(exampleDistance), ""); ok {
		example += " — laserbrain reads it as " + ls
	}
	return fmt.Sprintf("Check in a call of its own (not batched with other calls): %s with %s, e.g. %s.",
		checkTool, strings.Join(fields, ", "), example)
}

// refusalText is a coverage warning or refusal in our words.
func refusalText(stage string, late bool, f Facts, ground, checkTool string) string {
	why := text.Plural(f.Since, "step") + " since your last check"
	if !late {
		why = fmt.Sprintf("coverage %s (%d of %d steps checked) is below the %s floor", pct(f.Coverage), int(f.Coverage*float64(f.Steps)+0.5), f.Steps, pct(f.Floor))
	}
	var what string
	switch stage {
	case StageWarn:
		what = fmt.Sprintf("This call runs (it only reads), but calls that change something are refused until you check, and after %s every call is.", text.Plural(f.HardAfter, "step"))
	case StageActing:
		what = fmt.Sprintf("THIS CALL DID NOT RUN: calls that change something are refused until you check (reads still run until %s have passed). Reissue it after the check.", text.Plural(f.HardAfter, "step"))
	default:
		what = "THIS CALL DID NOT RUN: every call is refused until you check. Reissue it after the check."
	}
	return "laserbrain: " + why + ". " + what + "\n" + HowTo(checkTool, ground) +
		" laserbrain's own tools are never refused."
}

// nudgeText reminds the model before the gate closes.
func nudgeText(since int, c Config, ground, checkTool string) string {
	s := fmt.Sprintf("laserbrain: %s since your last check.", text.Plural(since, "step"))
	if since < c.BlockAfter {
		s += fmt.Sprintf(" After %s without a check, calls that change something are refused until you check.", text.Plural(c.BlockAfter, "step"))
	}
	return s + "\n" + HowTo(checkTool, ground)
}

// stopText holds a Stop that would end the session unmeasured.
func stopText(since int, ground, checkTool string) string {
	return fmt.Sprintf("laserbrain: %s since your last check — spell your state once more before you stop, so the run ends measured.\n%s",
		text.Plural(since, "step"), HowTo(checkTool, ground))
}

// claimText refuses a write into another agent's claim.
func claimText(file string, cl Claim, me string) string {
	return fmt.Sprintf("laserbrain: %s is claimed by %s on the link (claim %q). THIS CALL DID NOT RUN — nothing was written. "+
		"Wait for %s to release it, or agree a handoff on the link first. (You are %s; LASERBRAIN_AGENT names you.)",
		file, cl.Agent, cl.Path, cl.Agent, me)
}

// Brief is what a session is told at its start (SessionStart's
// additionalContext, laserbrain run --goal): what laserbrain measures, the
// run's ground, the reasoning-state notation from the grammar, and how
// coverage is held. checkTool is how the client names check_state.
func (c Config) Brief(ground, checkTool string) string {
	if checkTool == "" {
		checkTool = DefaultCheckTool
	}
	n := laserbrain.GrammarNotation()
	var b strings.Builder
	b.WriteString("laserbrain supervises this session: it measures drift by comparing the reasoning state you spell with your ground, the goal this run started from.\n")
	if g := pyStrip(ground); g != "" {
		fmt.Fprintf(&b, "Your ground: %q. If the person gives you a new task, reset_task first; a sub-task names its parent_goal.\n", g)
	}
	fmt.Fprintf(&b, "Spell your state with %s — a %s reading:\n", checkTool, n.Kind)
	for _, f := range n.Measured {
		fmt.Fprintf(&b, "- %s: %s\n", f, n.Says(f))
	}
	fmt.Fprintf(&b, "- optional: %s\n", strings.Join(n.Carried, ", "))
	fmt.Fprintf(&b, "A state is read only when well-formed: %s.\n", n.WellFormed)
	b.WriteString(n.Use + "\n")
	switch c.Mode {
	case On:
		fmt.Fprintf(&b, "Check at least every %s: after %s without a check, calls that change something are refused until you check (reads still run); after %s, every call is. laserbrain's own tools are never refused.\n",
			text.Plural(c.BlockAfter, "step"), text.Plural(c.BlockAfter, "step"), text.Plural(c.BlockAfter*max(1, c.HardMultiple), "step"))
	case Reference:
		fmt.Fprintf(&b, "Check at least every %s: the gate refuses calls that change something after %s without a check, and every call after %s.\n",
			text.Plural(refBlockAfter, "step"), text.Plural(refBlockAfter, "step"), text.Plural(refBlockAfter*refHardMultiple, "step"))
	}
	b.WriteString(HowTo(checkTool, ground))
	return b.String()
}
