package operator

import (
	"slices"
	"strings"

	"github.com/laserkit/laserkit/operator/shell"
)

// actionWhat says what kind of action was refused.
func actionWhat(kind, why, writeWhat string) string {
	if kind == "write" {
		return "this file is protected (" + writeWhat + ")"
	}
	what := "this command is irreversible or outward"
	if why != "" {
		what += " — " + why
	}
	return what
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// presenceClause says which presence an answer assumed and why.
func presenceClause(p Presence, why string) string {
	name := p.String()
	if p == PresenceUnknown {
		name = "unknown, answered as attended"
	}
	if why == "" {
		return "(presence: " + name + ")"
	}
	return "(presence: " + name + " — " + why + ")"
}

func findingText(f shell.Finding) string {
	if f.Note == "" || f.Where == shell.Data {
		return f.Label
	}
	return f.Label + " (" + f.Note + ")"
}

func findingsText(fs []shell.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = findingText(f)
	}
	return strings.Join(parts, "; ")
}

func hasRole(fs []shell.Finding, w shell.Where) bool {
	return slices.ContainsFunc(fs, func(f shell.Finding) bool { return f.Where == w })
}

// unattendedRefusal is the deny for code or a command the gate cannot
// read when nobody can be asked. It tells the model what it can do
// instead: nothing here is proof of harm, only of not knowing.
func unattendedRefusal(fs []shell.Finding, why string) string {
	var b strings.Builder
	b.WriteString("laserbrain operator gate: nobody is attending this run " + presenceClause(Unattended, why) +
		", so a command the gate cannot clear is refused instead of asked: " + findingsText(fs) + ".")
	if hasRole(fs, shell.InlineCode) {
		b.WriteString(" The gate reads shell, not the program an interpreter is given, so it cannot tell whether that code does this or only mentions it." +
			" If the code only mentions it (a message, a pattern, a string), split the command so that text is not program code: pass it as an argument or keep it in a data file the code reads.")
	}
	if slices.ContainsFunc(fs, shell.Finding.ChangedTestCode) {
		b.WriteString(" The test files named changed in this work tree, and the gate does not follow what test code does:" +
			" keep running a program, the network or a deletion out of changed tests, or have a person review them and run the tests.")
	}
	if slices.ContainsFunc(fs, func(f shell.Finding) bool { return f.Where == shell.Unknown && !f.ChangedTestCode() }) {
		b.WriteString(" Split the command into simple commands the gate can read: name every command literally (not through a variable or a substitution), run programs the gate knows rather than passing a command to another program, and run a script's commands directly instead of piping them into a shell or an interpreter.")
	}
	b.WriteString(" If it must run as it is, ask the user to run it or to authorize exactly this command;" +
		" do not hide an irreversible action in another form.")
	return b.String()
}

// unattendedNote is put before the model when a call with a finding goes
// ahead unattended: what was found, where, and that it was not run.
func unattendedNote(fs []shell.Finding, why string) string {
	var data, dry []string
	for _, f := range fs {
		if f.Where == shell.DryRun {
			dry = append(dry, f.Label)
		} else {
			data = append(data, f.Label)
		}
	}
	var b strings.Builder
	b.WriteString("laserbrain operator gate: ")
	if len(data) > 0 {
		b.WriteString("your command mentions " + strings.Join(data, "; ") +
			" only as data (an argument, a message, a heredoc or a comment): no command in it does that, so that action itself does not run. ")
	}
	if len(dry) > 0 {
		b.WriteString("your command runs " + strings.Join(dry, "; ") +
			" as a dry run or a help request, which changes nothing; the same command without it would be refused. ")
	}
	b.WriteString("Nobody is attending this run " + presenceClause(Unattended, why) +
		", so your command went ahead without asking, and the finding is recorded on the run. Doing that action for real needs a person's authorization.")
	return b.String()
}

// PersonOnlyReason is the refusal of a person's command run by an agent.
// It names what was refused and why, and not how a person would grant it.
func PersonOnlyReason(f shell.Finding) string {
	what := strings.TrimPrefix(f.Label, "parsed: ")
	if i := strings.Index(what, " ("); i >= 0 {
		what = what[:i]
	}
	return "laserbrain operator gate: refused: " + what + " is a person's command — it grants authorizations, releases halted agents, " +
		"cancels running loops, installs or removes the hooks, or moves the fleet's store, which is the supervision itself. An agent never runs it, in any form, " +
		"and it is not something a person authorizes for an agent. Do not retry it in another form; if it is needed, tell the user what and why."
}

// policyInvalidReason is the refusal while the project policy is not
// valid.
func policyInvalidReason(pol Policy) string {
	return "laserbrain: the project policy " + pol.Source + " is not valid: " + pol.Err +
		". The gate refuses commands and file writes until a person fixes it; tell the user what is wrong with it."
}
