// Package hook is laserbrain's Claude Code hooks as a library, one handler
// per event, so the command stays thin: pre-tool-use gates shell commands
// (Bash and the shell tools of other agent CLIs) and writes into protected
// paths through the operator, joined to the agent's run; post-tool-use and
// post-tool-use-failure record the observed call on the run; user-prompt-
// submit marks the next check a user turn; stop blocks a drifting run's stop
// once with its own advice; session-start and session-end open and close
// the run. A payload for another event is refused. Hooks never fail open:
// an internal error denies in pre-tool-use (exit 2) and is logged and passed
// over (exit 0) by the observers; nothing exits 1.
//
// The pre-tool-use path reads no store for a call it clears: the stores open
// only when an action needs authorization.
package hook
