package hook

import (
	"strings"

	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
)

// Act is how a confined agent's outward call, asked about in the person's
// own client, goes through the supervisor: behind the boundary a push or a
// publish reaches nothing, so instead of refusing it the hook asks, with
// the call rewritten into `laserbrain act --pass PASS -- COMMAND`. The
// client shows the person that call; approved, it runs inside the
// boundary, hands the pass to the broker and the supervisor carries out
// exactly COMMAND once, outside (laserbrain act). Refused, nothing runs
// and the pass dies unused.
type Act struct {
	// Self is the laserbrain binary the rewritten call runs, by its
	// absolute path (readable inside the boundary, and held there).
	Self string
	// Passes are the supervisor's one-use passes.
	Passes *broker.Passes
}

// viaAct is the rule: an outward command a person could let through —
// asked about, or refused only for want of a person's authorization of
// exactly it —, a person there, in a client that shows them the call
// rewritten, and the command one simple command of literal words (act
// runs words, no shell). Its words, and false for any other call.
func viaAct(d operator.Decision, an shell.Analysis, asksRewritten bool) ([]string, bool) {
	if !asksRewritten || !d.Outward || d.Presence != operator.Attended {
		return nil, false
	}
	if d.Action != operator.Ask && !d.WantsAuthorization() {
		return nil, false
	}
	return an.Words()
}

// throughAct gives the decision for the one command of a call when it goes
// through the supervisor (viaAct): an ask whose reason tells the person
// what approving does, and the command line the call runs instead. Any
// other call keeps d, and rewrite is "".
func (h *Handler) throughAct(c agentrun.Caller, e *event, an shell.Analysis, d operator.Decision) (operator.Decision, string) {
	if h.Act == nil || h.Act.Passes == nil || c.Run == "" || e.Tool == nil {
		return d, ""
	}
	words, ok := viaAct(d, an, client.AsksRewritten(e.Client))
	if !ok {
		return d, ""
	}
	line := shellquote.Command(words)
	what := e.Client.Title() + " asked the person about tool call " + e.ToolUseID
	pass, err := h.Act.Passes.Issue(c.Run, operator.ActionKey(line), what)
	if err != nil {
		h.log("laserbrain hook " + string(PreToolUse) + ": no pass for laserbrain act (" + err.Error() + "); the gate's answer stands")
		return d, ""
	}
	d.Action = operator.Ask
	d.Reason = "laserbrain: " + line + " is outward (" + strings.Join(findingLabels(d), "; ") + "). " +
		"Inside the agent's boundary it reaches nothing. Approve to have the supervisor carry out exactly this command once, " +
		"outside the boundary, with your credentials and network (laserbrain act); refuse and nothing runs."
	return d, shellquote.Word(h.Act.Self) + " act --pass " + pass + " -- " + line
}

// findingLabels are the labels of the findings that decided d.
func findingLabels(d operator.Decision) []string {
	var out []string
	for _, f := range d.Findings {
		if !f.CarvedOut {
			out = append(out, f.Label)
		}
	}
	if len(out) == 0 {
		out = d.Labels
	}
	return out
}
