package client

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What the model can be told, and how it checks, under each client.

// CheckTool is the name a client's model calls laserbrain's check_state
// by (agents-facts: observed with each client's scripted model): Claude
// Code, Codex and Qwen Code mcp__laserbrain__check_state (Codex's model
// calls it check_state inside the namespace tool mcp__laserbrain, and its
// hooks see the joined name), Gemini CLI mcp_laserbrain_check_state,
// opencode laserbrain_check_state, Cline laserbrain__check_state, Copilot
// CLI laserbrain-check_state. An unknown client gets Claude Code's.
func CheckTool(n Name) string {
	const tool = "check_state"
	switch n {
	case Gemini:
		return "mcp_" + ServerName + "_" + tool
	case OpenCode:
		return ServerName + "_" + tool
	case Cline:
		return ServerName + "__" + tool
	case Copilot:
		return ServerName + "-" + tool
	}
	return "mcp__" + ServerName + "__" + tool
}

// A channel is how an answer puts text before the model.
type channel uint8

const (
	// byContext: additional context (Reply.Context), beside an allowed
	// call or an observed event.
	byContext channel = 1 << iota
	// byDenial: the reason of a PreToolUse denial, which the model reads
	// as the tool's result.
	byDenial
	// byBlock: the reason of a held Stop, which the agent goes on with.
	byBlock
)

// channelsOf are the ways client n carries our text to its model, by
// event: what was seen reach a scripted model or what its makers document, and what its adapter writes. Text put in
// an answer its client drops is lost, so an event is listed only where the
// text surely arrives; a message waits for one that is. An unknown client
// is read as Claude Code. A switch over arrays of constants, which the
// compiler lays out: a map of maps would be built at package init, in
// every hook process.
func channelsOf(n Name) []eventChannel {
	switch n {
	case Codex:
		return codexChannels
	case Qwen:
		return qwenChannels
	case Gemini:
		return geminiChannels
	case OpenCode:
		return openCodeChannels
	case Cline:
		return clineChannels
	case Copilot:
		return copilotChannels
	}
	return claudeChannels
}

// eventChannel is how a client carries our text on one event.
type eventChannel struct {
	ev EventName
	c  channel
}

var (
	// Claude Code: additionalContext on every event but Stop (PreToolUse's
	// seen as a system message after the tool result), a denial's reason
	// as the tool result, a held Stop's reason as the next turn.
	claudeChannels = []eventChannel{{PreToolUse, byContext | byDenial}, {PostToolUse, byContext}, {PostToolUseFailure, byContext},
		{UserPromptSubmit, byContext}, {SessionStart, byContext}, {Stop, byBlock}}
	// Codex: "Command blocked by PreToolUse hook: <reason>", a held Stop
	// (both seen); additionalContext after a tool, on a prompt and at the
	// start (its hook schemas).
	codexChannels = []eventChannel{{PreToolUse, byDenial}, {PostToolUse, byContext}, {UserPromptSubmit, byContext}, {SessionStart, byContext}, {Stop, byBlock}}
	// Qwen Code: Claude Code's protocol; a denial seen blocking.
	qwenChannels = []eventChannel{{PreToolUse, byDenial}, {PostToolUse, byContext}, {PostToolUseFailure, byContext}, {UserPromptSubmit, byContext},
		{SessionStart, byContext}, {Stop, byBlock}}
	// Gemini CLI: "Tool execution blocked: <reason>", AfterAgent's deny
	// going on with the reason (both seen); additionalContext after a
	// tool, before the agent and at the start.
	geminiChannels = []eventChannel{{PreToolUse, byDenial}, {PostToolUse, byContext}, {UserPromptSubmit, byContext}, {SessionStart, byContext}, {Stop, byBlock}}
	// opencode: our plugin throws a denial's reason, which becomes the
	// tool error; it passes nothing else on.
	openCodeChannels = []eventChannel{{PreToolUse, byDenial}}
	// Cline: contextModification before and after a tool (seen), and on a
	// prompt; TaskStart's was seen never to reach the model. A denial
	// cancels the whole task, so its reason is the last thing said.
	clineChannels = []eventChannel{{PreToolUse, byContext | byDenial}, {PostToolUse, byContext}, {UserPromptSubmit, byContext}}
	// Copilot CLI: only a preToolUse denial's reason reaches the model.
	copilotChannels = []eventChannel{{PreToolUse, byDenial}}
)

// Tells reports whether answer a to event ev can put text before client
// n's model, and how: as a denial's reason (a PreToolUse a denies), as a
// held Stop's reason (blocking it is how the text arrives), or as
// additional context. An unknown client is read as Claude Code.
func Tells(n Name, ev EventName, a Reply) (ok, reason, block bool) {
	var c channel
	for _, ec := range channelsOf(n) {
		if ec.ev == ev {
			c = ec.c
			break
		}
	}
	switch {
	case ev == PreToolUse && a.Denies():
		return c&byDenial != 0, true, false
	case ev == Stop:
		return c&byBlock != 0, true, true
	}
	return c&byContext != 0, false, false
}

// IsCheckCommand reports whether a shell command line is the agent
// checking by the CLI, and nothing else: exactly one simple command
// `laserbrain check …`, every word plain text (quoted or not, nothing the
// shell expands), no assignment, redirection, pipe or list. Anything more
// is work, and is gated as work.
func IsCheckCommand(line string) bool {
	if !strings.Contains(line, "laserbrain") {
		return false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 {
		return false
	}
	var words []string
	for _, w := range call.Args {
		s, ok := plainWord(w)
		if !ok {
			return false
		}
		words = append(words, s)
	}
	return path.Base(words[0]) == "laserbrain" && words[1] == "check"
}

// plainWord is a word's text when the shell expands nothing in it.
func plainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `*?[{\~`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(lit.Value, `\`) {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
