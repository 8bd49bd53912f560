package coverage

import (
	"fmt"
	"strings"
)

// The reference's agent-facing texts, character for character: its
// answers are what the vectors hold us to (Reference mode only).

func refWarn(since int, cov, floor float64, hardAfter int) string {
	return fmt.Sprintf("laserbrain gate: %d steps since your last check_state (coverage %s, floor %s). Reads still pass. "+
		"Writes and commands are refused until you check, and at %d steps everything is.", since, pct(cov), pct(floor), hardAfter)
}

func refDeny(late bool, since, steps int, cov, floor float64, hard bool, me string) string {
	why := fmt.Sprintf("%d steps since your last check_state", since)
	if !late {
		why = fmt.Sprintf("coverage %s is below the %s floor this run is held to", pct(cov), pct(floor))
	}
	scope := "calls that change something — reads are still passing"
	if hard {
		scope = "every call"
	}
	return strings.Join([]string{
		fmt.Sprintf("laserbrain gate: %s (coverage %s over %d steps, floor %s).", why, pct(cov), steps, pct(floor)),
		"Refusing " + scope + ". Nudging alone did not work — coverage was 10% one day and 6% the next while a reminder printed every 8 steps.",
		"THIS CALL DID NOT RUN. Nothing was written, executed or sent — you must reissue it after checking. " +
			"(A draft composed inside a blocked call is gone: on 2026-07-25 a 100-line heredoc was denied here and the file simply did not exist, which only surfaced when the next command failed.)",
		"IF YOU SENT SEVERAL CALLS AT ONCE, some of them ran and this one did not. This gate sees one call and cannot tell you which. " +
			"Re-read the state before reissuing — do not replay the whole block.",
		refHowTo(me),
	}, "\n")
}

// refHowTo is the last line of a refusal: how the host calls check_state
// (the reference's hosts.json: grok has its own; every other agent the
// default).
func refHowTo(me string) string {
	if strings.ToLower(strings.TrimSpace(me)) == "grok" {
		return `Call laserbrain__check_state via use_tool (tool_name="laserbrain__check_state") ALONE — do not batch with other tools — ` +
			"with your CURRENT goal, progress (advancing|stuck|circling) and distance 0-10, then reissue the blocked call. " +
			"If you need the schema first, search_tool is always allowed."
	}
	return "Call mcp__laserbrain__check_state now with your CURRENT goal, progress (advancing|stuck|circling) and distance 0-10, " +
		"then reissue the blocked call. Do not batch check_state with other tools (gate race)."
}

func refClaim(path, who, me string) string {
	return fmt.Sprintf("laserbrain claim gate: %s is claimed by %s in the open wave.\n"+
		"THIS CALL DID NOT RUN — nothing was written.\n"+
		"Editing another agent's scope is the collision waves exist to prevent (2026-07-25: a path was edited while another agent was building there).\n"+
		"Either wait for %s to close, or say so on the link and agree a handoff before touching it.\n"+
		"(me=%s; set LASERBRAIN_AGENT on the hook env if this is wrong.)", path, who, who, me)
}

func refNudge(since, steps int, cov float64) string {
	return fmt.Sprintf("laserbrain: %d steps since your last check_state (coverage %s over %d steps). "+
		"dogfood.py withholds any detection result below 50%%. Call check_state now with your CURRENT goal, progress and distance 0-10.",
		since, pct(cov), steps)
}

func refGoalShape(goal string) string {
	return fmt.Sprintf("Your ground reads as a report of what happened, not what you are pursuing: \"%s\". "+
		"A ground has to stay fixed while the work moves, and a sentence about what was just finished cannot — by the next step something else has been. "+
		"State the goal as the thing you are trying to reach; it is 5x more likely to fire drift otherwise.", cut(goal, 60))
}

const (
	refLinkExtra = "laserbrain link: multi-step work in a shared repo → link_read (limit≥10) and answer open claims before first write. " +
		"Gate: never batch non-laserbrain tools with the check_state that clears the gate — check alone, then reissue. " +
		"Subagents: parent check_state between spawn waves; children do not share parent harness Φ."
	refSubagentExtra = "laserbrain subagent: child sessions have their own Φ. check_state on the parent before the next spawn wave; " +
		"do not assume coverage from the child."
	refHonestyExtra = "laserbrain honesty: distance has not fallen across the last two checks. If you are circling or stuck, say so — " +
		"false advancing wastes the dogfood corpus."
)
