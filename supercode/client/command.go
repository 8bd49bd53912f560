package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/shellquote"
)

// Events are our hook events with the subcommand of `laserbrain hook`
// that answers each, in install order.
var Events = []struct {
	Event EventName
	Name  string
}{
	{SessionStart, "session-start"},
	{UserPromptSubmit, "user-prompt-submit"},
	{PreToolUse, "pre-tool-use"},
	{PostToolUse, "post-tool-use"},
	{PostToolUseFailure, "post-tool-use-failure"},
	{Stop, "stop"},
	{SessionEnd, "session-end"},
	{Notification, "notification"},
}

// Subcommand is the `laserbrain hook` subcommand answering ev ("" when
// none does).
func Subcommand(ev EventName) string {
	for _, e := range Events {
		if e.Event == ev {
			return e.Name
		}
	}
	return ""
}

// EventOf is the event a `laserbrain hook` subcommand answers.
func EventOf(sub string) (EventName, bool) {
	for _, e := range Events {
		if e.Name == sub {
			return e.Event, true
		}
	}
	return "", false
}

// Hook is one hook laserbrain installs for a client.
type Hook struct {
	// ClientEvent is the client's name for the event: a settings key, a
	// Cline hook file's name, a plugin hook.
	ClientEvent string
	Event       EventName
	// Matcher is the tool pattern the client filters on ("" = every tool,
	// or an event without tools).
	Matcher string
}

// Hooks are the hooks laserbrain installs for a client, in order.
func Hooks(n Name) []Hook {
	var out []Hook
	add := func(clientEvent string, ev EventName, matcher string) {
		out = append(out, Hook{ClientEvent: clientEvent, Event: ev, Matcher: matcher})
	}
	switch n {
	case Claude:
		for _, e := range Events {
			m := ""
			switch e.Event {
			case PreToolUse, PostToolUse, PostToolUseFailure:
				m = "*"
			}
			add(string(e.Event), e.Event, m)
		}
	case Qwen:
		for _, e := range Events {
			add(string(e.Event), e.Event, "")
		}
	case Codex:
		// Codex has no PostToolUseFailure: a failed call is a
		// PostToolUse; nor a Notification hook (its notify program is
		// configuration, not a hook).
		for _, e := range Events {
			if e.Event != PostToolUseFailure && e.Event != Notification {
				add(string(e.Event), e.Event, "")
			}
		}
	case Gemini:
		for _, e := range Events {
			if g := GeminiEvent(e.Event); g != "" {
				add(g, e.Event, "")
			}
		}
	case Copilot:
		// Copilot CLI's notification payload was never seen: not hooked.
		for _, e := range Events {
			if c := CopilotEvent(e.Event); c != "" && e.Event != Notification {
				add(c, e.Event, "")
			}
		}
	case Cline:
		for _, h := range ClineHooks {
			add(h.File, h.Event, "")
		}
	case OpenCode:
		for _, e := range Events {
			if o := OpenCodeEvent(e.Event); o != "" {
				add(o, e.Event, "")
			}
		}
	}
	return out
}

// HookTimeout is the deadline, in seconds, written into a client's hook
// entry where it has one (Claude Code, Codex, Qwen Code: seconds; Gemini
// CLI: milliseconds; Copilot CLI: timeoutSec). A hook past it is killed,
// and the client decides what that means; our hooks answer well within.
var HookTimeout = 30

// GateName is the pre-tool-use hook's own binary: the same handler as
// "laserbrain hook pre-tool-use" in a binary that starts faster (it links
// none of the CLI), which every tool call pays.
const GateName = "laserbrain-gate"

// GateBeside is the laserbrain-gate installed next to the laserbrain
// binary self, or "" when there is none (then "laserbrain hook
// pre-tool-use" answers, the same way, only slower).
func GateBeside(self string) string {
	gate := filepath.Join(filepath.Dir(self), GateName)
	if fi, err := os.Stat(gate); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return gate
	}
	return ""
}

// GateEvents are the events laserbrain-gate answers: the ones a client
// runs a hook for on every tool call, where a smaller binary's start is
// paid most often. Every other event is laserbrain's.
var GateEvents = []EventName{PreToolUse, PostToolUse, PostToolUseFailure}

// Argv is the program and arguments that answer event ev for client n:
// laserbrain-gate beside self for GateEvents when there is one (with
// --event naming any but pre-tool-use), else
// `self hook SUBCOMMAND`; --client names every client but Claude Code
// (the default). Claude Code's pre-tool-use answers a denial with its
// structured answer (--format json): with exit 2 Claude Code would show
// the model the whole hook command before the reason.
func Argv(self string, n Name, ev EventName) []string {
	var argv []string
	if slices.Contains(GateEvents, ev) {
		if gate := GateBeside(self); gate != "" {
			argv = []string{gate}
			if ev != PreToolUse {
				argv = append(argv, "--event", Subcommand(ev))
			}
		}
	}
	if argv == nil {
		argv = []string{self, "hook", Subcommand(ev)}
	}
	if n != Claude && n != "" {
		argv = append(argv, "--client", string(n))
	}
	if n == Claude && ev == PreToolUse {
		argv = append(argv, "--format", "json")
	}
	return argv
}

// AnsweredStatus is the exit status the installed pre-tool-use command asks
// of its program in place of 0 (--ok-status), and the only status it takes
// for "the gate answered": a program that is not laserbrain's gate —
// /bin/true put in its place, another program copied there, the gate
// renamed aside (the shell's 127) — exits otherwise, and the call is
// denied. It is none of the statuses programs use by convention (0, 1, 2,
// the sysexits 64–78, 126, 127, 128+signal).
const AnsweredStatus = 86

// OKStatusFlag is the flag that asks laserbrain-gate and laserbrain hook
// pre-tool-use for AnsweredStatus in place of 0.
const OKStatusFlag = "--ok-status"

// HookCommand is the command line a client runs (through a POSIX shell) for
// our hook on event ev: Argv, guarded so that a program that does not
// answer as laserbrain — gone, not executable, or another program in its
// place — still gets an answer: a denial for pre-tool-use, in the form the
// client obeys; nothing for the others, which only observe. Without the
// guard the shell would exit 127 for a missing program, which Claude Code,
// Codex and Copilot CLI take for a non-blocking error, and /bin/true put in
// the gate's place would answer every call with 0: the gate would be off
// without a word.
//
// The pre-tool-use program runs with --ok-status AnsweredStatus and only
// that status is taken for its answer (it costs the shell a fork: it
// waits, where it would exec). Where the client shows the command itself
// (Claude Code puts it before a denial's reason and a Stop hook's
// feedback), the command carries no text of its own: "PROGRAM ARGS
// --ok-status 86; [ $? = 86 ] || exit 2" denies with the shell's own words
// for what went wrong ("not found", "Permission denied"), true whenever
// they are read. Clients that need a structured denial to block (Cline) or
// to show a reason (Copilot CLI) print one, only when the program did not
// answer; they never show the command. (opencode's plugin runs Argv itself
// and takes only laserbrain's JSON for an answer.)
func HookCommand(self string, n Name, ev EventName) string {
	argv := Argv(self, n, ev)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellquote.Word(a)
	}
	line := strings.Join(quoted, " ")
	ok := strconv.Itoa(AnsweredStatus)
	if ev == PreToolUse {
		line += " " + OKStatusFlag + " " + ok
	}
	if n != Copilot && n != Cline && n != OpenCode {
		if ev == PreToolUse {
			return line + "; [ $? = " + ok + " ] || exit 2"
		}
		return line + " || exit 0"
	}
	out, code := missing(n, ev, argv[0])
	fallback := "printf '%s\\n' " + shellquote.Word(out.text) + out.redirect + "; exit " + code
	if ev == PreToolUse {
		return line + "; case $? in " + ok + ") exit 0;; 2) exit 2;; esac; " + fallback
	}
	return "if [ -x " + quoted[0] + " ]; then exec " + line + "; fi; " + fallback
}

type missingOut struct {
	text     string
	redirect string // "" for stdout, " >&2" for stderr
}

// UnansweredReason is what the pre-tool-use guard says when its program
// did not answer as laserbrain's gate.
func UnansweredReason(prog string) string {
	return "laserbrain: refused: " + prog + " did not answer as laserbrain's gate (it is missing, not executable, or another program in its place), so this call cannot be checked. " +
		"Ask the user to run laserbrain doctor, which says how to repair the install; do not retry it in another form."
}

// MissingReason is what a hook says when its program is gone.
func MissingReason(prog string) string {
	return "laserbrain: refused: " + prog + " is missing or not executable, so this call cannot be checked. " +
		"Ask the user to run laserbrain doctor, which says how to repair the install; do not retry it in another form."
}

// missing is what the guard of a client that needs a structured denial
// prints and its exit status when prog is gone: the client's own denial
// for pre-tool-use, a note for the observers.
func missing(n Name, ev EventName, prog string) (missingOut, string) {
	if ev != PreToolUse {
		return missingOut{"laserbrain: " + prog + " is missing or not executable; nothing is recorded until it is back: run laserbrain doctor", " >&2"}, "0"
	}
	reason := UnansweredReason(prog)
	switch n {
	case Cline:
		return missingOut{jsonText(map[string]any{"cancel": true, "errorMessage": reason}), ""}, "0"
	case OpenCode:
		return missingOut{jsonText(map[string]string{"decision": "deny", "reason": reason}), ""}, "0"
	}
	// Copilot CLI: the reason reaches the model only in
	// permissionDecisionReason; exit 2 blocks too.
	return missingOut{jsonText(map[string]string{"permissionDecision": "deny", "permissionDecisionReason": reason}), ""}, "2"
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Parsed is what an installed hook command says: the program it runs, the
// event it answers and the client it names.
type Parsed struct {
	Program string
	Event   EventName
	Client  Name
	Guarded bool // it answers when the program is gone (HookCommand's guard)
	// Answered: a pre-tool-use command that takes only the gate's own
	// answer status (--ok-status) for an answer, so another program put in
	// the gate's place is a denial.
	Answered bool
}

// ParseCommand recognises a hook command laserbrain installed — a
// program named laserbrain (or self) running `hook SUBCOMMAND`, or
// laserbrain-gate (pre-tool-use, or the event its --event names) — at any path, guarded or not, so a reinstall from a new
// location replaces the old entry and doctor can check it.
func ParseCommand(command, self string) (Parsed, bool) {
	words := shellWords(command)
	for i, w := range words {
		words[i] = strings.TrimSuffix(w, ";")
	}
	trimmed := strings.TrimSpace(command)
	answered := strings.Contains(trimmed, " "+OKStatusFlag+" ")
	p := Parsed{Client: Claude, Answered: answered, Guarded: answered || strings.HasPrefix(trimmed, "if [ -x ") ||
		strings.HasSuffix(trimmed, "|| exit 2") || strings.HasSuffix(trimmed, "|| exit 0")}
	found, isGate := false, false
	for i := 0; i < len(words); i++ {
		w := words[i]
		if found {
			switch {
			case w == "--client" && i+1 < len(words):
				p.Client = Name(words[i+1])
				i++
			case strings.HasPrefix(w, "--client="):
				p.Client = Name(strings.TrimPrefix(w, "--client="))
			case isGate && (w == "--event" || strings.HasPrefix(w, "--event=")):
				sub, ok := strings.CutPrefix(w, "--event=")
				if !ok && i+1 < len(words) {
					sub = words[i+1]
					i++
				}
				if ev, ok := EventOf(sub); ok {
					p.Event = ev
				}
			case w == "fi" || w == "&&" || w == "||" || w == "|":
				return p, true
			}
			continue
		}
		switch {
		case filepath.Base(w) == GateName:
			p.Program, p.Event, found, isGate = w, PreToolUse, true, true
		case (filepath.Base(w) == "laserbrain" || w == self) && i+2 < len(words) && words[i+1] == "hook":
			if ev, ok := EventOf(words[i+2]); ok {
				p.Program, p.Event, found = w, ev, true
				i += 2
			}
		}
	}
	return p, found
}

// shellWords splits a command line into words, single and double quotes
// taken off (enough for the commands Command writes and the ones users
// write by hand; a word's trailing ";" is kept).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Denied reports whether a hook's reply is client n's denial of the call:
// what Encode writes for a Deny (exit 2 for the Claude-shaped clients and
// Gemini CLI, Gemini CLI's and opencode's decision, Cline's cancel or its call
// rewritten into a Refusal, Copilot CLI's permissionDecision) — or
// permissionDecision deny in Claude Code's JSON.
func Denied(n Name, r Output) bool {
	var v map[string]any
	_ = json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &v)
	switch n {
	case Gemini:
		return v["decision"] == "deny" || r.Exit == 2 // Gemini CLI blocks on exit 2 too
	case OpenCode:
		return v["decision"] == "deny"
	case Cline:
		if v["cancel"] == true {
			return true
		}
		in, _ := v["overrideInput"].(map[string]any)
		if c, ok := in["command"].(string); ok {
			return isRefusal(c)
		}
		cs, _ := in["commands"].([]any)
		for _, c := range cs {
			if s, _ := c.(string); !isRefusal(s) {
				return false
			}
		}
		return len(cs) > 0
	case Copilot:
		return v["permissionDecision"] == "deny" || r.Exit == 2
	}
	if r.Exit == 2 {
		return true
	}
	hso, _ := v["hookSpecificOutput"].(map[string]any)
	return hso["permissionDecision"] == "deny"
}
