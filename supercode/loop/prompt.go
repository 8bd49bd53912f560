package loop

import (
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

func verdictSchema() []byte { return verdict.Schema }

// preamble is what every session is told about where it is, before the
// service's own prompt.
func (l *Loop) preamble(svc *Service, role string) string {
	if role == roleJudge {
		how := "by calling the `verdict` tool exactly once"
		if svc.Kind == KindCommand {
			how = "by printing the verdict as one JSON object on the last line of standard output (schema: $LASERBRAIN_VERDICT_SCHEMA)"
		}
		return fmt.Sprintf("You are `%s`, the judge of laserbrain loop run %s. End every turn %s. "+
			"The next agent has no context but your verdict: write a work order, not a judgment. "+
			"If a person must decide, escalate with the reason instead.", svc.Name, l.id, how)
	}
	esc := "call the `escalate` tool with the reason and stop"
	if svc.Kind == KindCommand {
		esc = "write the reason to $LASERBRAIN_ESCALATE and exit 3"
	}
	return fmt.Sprintf("You are `%s`, an agent of laserbrain loop run %s. You land fresh: your instruction and context are all you are told. "+
		"./ci is the verifier and your own claims of success do not count. When you cannot go on (the failure is environmental, impossible, "+
		"or needs a person), %s. Files named in your context (full logs under %s) are readable.", svc.Name, l.id, esc, l.dir)
}

func (l *Loop) systemFor(svc *Service, role string) (string, error) {
	own, err := svc.systemPrompt()
	if err != nil {
		return "", err
	}
	if own == "" {
		return l.preamble(svc, role), nil
	}
	return l.preamble(svc, role) + "\n\n" + own, nil
}

// agentPrompt is an agent's instruction with its context.
func agentPrompt(instr string, ctx capped) string {
	if strings.TrimSpace(instr) == "" {
		instr = "Work on what your context below asks for."
	}
	if strings.TrimSpace(ctx.Text) == "" {
		return instr + "\n"
	}
	return instr + "\n\n## Context\n\n" + ctx.Text + "\n"
}

// judgePromptIn is what one judge sample is asked.
type judgePromptIn struct {
	instr          string
	ctx            capped
	soakAt, soakOf int // this pass (1-based) of the soak target
	juror, jurors  int
	iteration, max int
	ref, refWhat   string // the checkpoint to diff against, and what it was
	now            string // the checkpoint of the tree being judged
	suggestions    string
	seed           string // included when the session is fresh
	command        bool
}

func judgePrompt(in judgePromptIn) string {
	var b strings.Builder
	if in.seed != "" {
		fmt.Fprintf(&b, "## The design thread this loop was launched from\n\n%s\n\n---\n\n", strings.TrimSpace(in.seed))
	}
	instr := strings.TrimSpace(in.instr)
	if instr == "" {
		instr = "Is the work complete? Render your verdict on the current tree."
	}
	b.WriteString(instr + "\n")
	fmt.Fprintf(&b, "\nThis is iteration %d of at most %d.", in.iteration, in.max)
	if in.soakOf > 0 {
		fmt.Fprintf(&b, " You are on soak pass %d of %d: %d consecutive passing verdicts so far, and the loop ends only after %d in a row. "+
			"Vary your angle of scrutiny: look at what earlier passes did not.", in.soakAt, in.soakOf, in.soakAt-1, in.soakOf)
	}
	if in.jurors > 1 {
		fmt.Fprintf(&b, " You are juror %d of %d, judging independently; every juror must pass the work.", in.juror, in.jurors)
	}
	b.WriteString("\n")
	switch {
	case in.ref != "" && in.now != "":
		fmt.Fprintf(&b, "\nCheckpoints: %s is %s; %s is the tree you are judging now. Both are commits of the whole work tree, untracked files included: "+
			"`git diff %s %s` shows what changed since, new files too, so you need not re-read the world (`git diff --stat %s %s` lists the files).\n",
			in.ref, in.refWhat, in.now, in.ref, in.now, in.ref, in.now)
	case in.now != "":
		fmt.Fprintf(&b, "\nCheckpoint: %s is the tree you are judging now, a commit of the whole work tree, untracked files included.\n", in.now)
	}
	if strings.TrimSpace(in.suggestions) != "" {
		fmt.Fprintf(&b, "\n## Suggestions ledger (this run)\n\nNon-blocking suggestions from passing verdicts so far. If one keeps recurring and you stand behind it, promote it to required.\n\n%s\n",
			strings.TrimSpace(in.suggestions))
	}
	if strings.TrimSpace(in.ctx.Text) != "" {
		fmt.Fprintf(&b, "\n## Context\n\n%s\n", in.ctx.Text)
	}
	if in.command {
		b.WriteString("\nEnd by printing your verdict as one JSON object on the last line of standard output (schema: $LASERBRAIN_VERDICT_SCHEMA).\n")
	} else {
		b.WriteString("\nEnd your turn by calling the `verdict` tool.\n")
	}
	return b.String()
}

// reaskPrompt is the one explicit second request after a turn without a
// valid verdict.
func reaskPrompt(command bool, malformed string) string {
	how := "Call the `verdict` tool now"
	if command {
		how = "Print your verdict now as one JSON object on the last line of standard output"
	}
	if malformed != "" {
		return fmt.Sprintf("Your verdict was refused — %s. %s, corrected. This is the last chance: another malformed verdict ends this judgment as a malfunction.\n", malformed, how)
	}
	return fmt.Sprintf("You ended your turn without a verdict. %s: sufficient, summary, findings (and acceptance). Nothing else you write is read; this is the last chance.\n", how)
}
