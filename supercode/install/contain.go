package install

import "github.com/laserkit/laserkit/supercode/client"

// WordsOnly is what doctor and install say of a client whose effects,
// with the hooks alone, nothing holds: the gate reads what a command
// says, not what a program the agent wrote does.
const WordsOnly = "with the hooks alone an agent that rewrites files can lift its own supervision; run it under `laserbrain run`"

// Containment is whether a client's effects are held with the hooks alone
// (an agent started by hand, outside laserbrain run): binding when the
// client's own sandbox keeps its shell's writes off what supervision
// stands on, words only when the gate reading its commands is all there
// is.
type Containment struct {
	Binding bool
	// Why names what binds, or what is missing.
	Why string
}

// Word is the one word doctor and install print for c.
func (c Containment) Word() string {
	if c.Binding {
		return "binding"
	}
	return "words only"
}

// SandboxState is what a client's own sandbox is here, as the settings
// and this machine leave it: Claude Code's Bash sandbox and whether it can
// start; Codex's sandbox_mode ("" when none is named).
type SandboxState struct {
	Claude       ClaudeSandbox
	ClaudeStarts bool
	CodexMode    string
}

// ContainmentOf decides, for client n, whether its effects are held with
// the hooks alone. Only Claude Code and Codex have a sandbox of their own;
// the other clients' shells run with the user's rights.
func ContainmentOf(n client.Name, s SandboxState) Containment {
	switch n {
	case client.Claude:
		switch {
		case !s.Claude.On():
			return Containment{Why: "Claude Code's Bash sandbox is off: " + WordsOnly}
		case !s.ClaudeStarts:
			return Containment{Why: "Claude Code's Bash sandbox is on but cannot start here, so Bash runs unsandboxed: " + WordsOnly}
		case !s.Claude.Closed():
			return Containment{Why: "Claude Code's Bash sandbox lets the model ask to run a command outside it (sandbox.allowUnsandboxedCommands is not false): " + WordsOnly}
		}
		return Containment{Binding: true, Why: "Claude Code's own sandbox (bubblewrap) keeps Bash's writes to the project and its temporary directory and off every protected path; permissions.deny keeps its file tools off them"}
	case client.Codex:
		switch s.CodexMode {
		case "workspace-write", "read-only":
			return Containment{Binding: true, Why: "Codex's own sandbox (" + s.CodexMode + ") keeps the shell's writes to the workspace and the temporary directories, its .codex and .git read-only; inside the workspace the gate alone holds the project's .laserbrain/ and the other clients' settings"}
		case "danger-full-access":
			return Containment{Why: "Codex's sandbox_mode is danger-full-access: " + WordsOnly}
		}
		return Containment{Why: "no sandbox_mode is named for Codex: " + WordsOnly}
	}
	return Containment{Why: n.Title() + " has no sandbox of its own: " + WordsOnly}
}
