package operator

import (
	"fmt"
	"strings"
)

// Presence says whether a person is there to answer a hook's question. An
// ask with nobody to answer it is a deny (Claude Code under -p refuses the
// call), so the hook's answer to an unclear command depends on it.
type Presence uint8

const (
	// PresenceUnknown: nothing says. Answered as attended: a question may
	// find a person, and attended answers are the ones the gate always gave.
	PresenceUnknown Presence = iota
	// Attended: a person answers questions (an interactive session).
	Attended
	// Unattended: nobody will (claude -p, CI, laserbrain loop, an agent
	// started by laserbrain run without a terminal).
	Unattended
)

var presenceNames = [...]string{"unknown", "attended", "unattended"}

func (p Presence) String() string { return presenceNames[p] }

// MarshalText writes the presence's name in JSON output.
func (p Presence) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ParsePresence reads a presence by name.
func ParsePresence(s string) (Presence, error) {
	for i, n := range presenceNames {
		if s == n {
			return Presence(i), nil
		}
	}
	return PresenceUnknown, fmt.Errorf("presence %q: want attended, unattended or unknown", s)
}

// roleAnswers is the hook's answer to one finding, by its role and by
// presence (PresenceUnknown, Attended, Unattended). Unattended, Allow means
// the call goes ahead with the finding put before the model and recorded
// on the run; POLICY.md states the same table.
var roleAnswers = [...][3]Decision{
	Executed:   {Deny, Deny, Deny},
	InlineCode: {Ask, Ask, Deny},
	Data:       {Ask, Ask, Allow},
	Unknown:    {Ask, Ask, Deny},
	DryRun:     {Ask, Ask, Allow},
}

// RoleAnswer is the hook's answer to a finding in role w when presence is p.
func RoleAnswer(w Where, p Presence) Decision { return roleAnswers[w][p] }

// HookAnswer is what a pre-execution hook (Claude Code's PreToolUse) says
// about a classified command.
type HookAnswer struct {
	Decision Decision `json:"decision"`
	// Reason is written for whoever reads it: the model on a deny, the
	// person on an ask; on an allow with a note, the note.
	Reason string `json:"reason,omitempty"`
	// Context is put before the model when the call goes ahead with a
	// finding (unattended: a match only in data, or a dry run): what was
	// found and that it was not run. Empty otherwise.
	Context string `json:"context,omitempty"`
	// Presence is the presence the answer assumed, and PresenceWhy what
	// said so.
	Presence    Presence `json:"presence"`
	PresenceWhy string   `json:"presence_why,omitempty"`
	// Findings are the findings that decided the answer (none for a plain
	// allow).
	Findings []Finding `json:"findings,omitempty"`
}

// HookAnswer is the answer with nothing known about presence (answered as
// attended): deny when an irreversible or outward command would run; ask
// when a match is only in data or code, in a dry run or help request, or
// could not be read; allow (say nothing) otherwise.
func (r Result) HookAnswer() HookAnswer { return r.HookAnswerFor(PresenceUnknown, "") }

// HookAnswerFor turns a classification into the hook's answer for a
// presence (why: what said so, quoted in the reason). Each finding not
// carved out is answered by RoleAnswer and the strongest answer wins (deny,
// then ask, then allow). Only the answer depends on presence: the
// classification (rule 0) stays irreversible.
func (r Result) HookAnswerFor(p Presence, why string) HookAnswer {
	a := HookAnswer{Decision: Allow, Presence: p, PresenceWhy: why}
	for _, f := range r.Findings {
		if f.CarvedOut {
			continue
		}
		switch d := RoleAnswer(f.Where, p); {
		case d > a.Decision:
			a.Decision, a.Findings = d, []Finding{f}
		case d == a.Decision:
			a.Findings = append(a.Findings, f)
		}
	}
	if f, ok := r.PersonOnly(); ok {
		// Whoever is there: no authorization lets it through.
		a.Decision, a.Findings, a.Context = Deny, []Finding{f}, ""
		a.Reason = PersonOnlyReason(f)
		return a
	}
	switch {
	case a.Decision == Deny && hasRole(a.Findings, Executed):
		a.Reason = "laserbrain operator gate: this command is irreversible or outward and nobody authorized it — " + r.Why +
			". Do not retry it in another form; ask the user to run it or to authorize it."
	case a.Decision == Deny:
		a.Reason = unattendedRefusal(a.Findings, why)
	case a.Decision == Ask:
		a.Reason = "laserbrain operator gate: " + r.Why + " — confirm before it runs " + presenceClause(p, why) + "."
	case len(a.Findings) > 0:
		a.Context = unattendedNote(a.Findings, why)
		a.Reason = a.Context
	}
	return a
}

func hasRole(fs []Finding, w Where) bool {
	for _, f := range fs {
		if f.Where == w {
			return true
		}
	}
	return false
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

func findingText(f Finding) string {
	if f.Note == "" || f.Where == Data {
		return f.Label
	}
	return f.Label + " (" + f.Note + ")"
}

func findingsText(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = findingText(f)
	}
	return strings.Join(parts, "; ")
}

// unattendedRefusal is the deny for code or a command the gate cannot
// read when nobody can be asked. It tells the model what it can do
// instead: nothing here is proof of harm, only of not knowing.
func unattendedRefusal(fs []Finding, why string) string {
	var b strings.Builder
	b.WriteString("laserbrain operator gate: nobody is attending this run " + presenceClause(Unattended, why) +
		", so a command the gate cannot clear is refused instead of asked: " + findingsText(fs) + ".")
	if hasRole(fs, InlineCode) {
		b.WriteString(" The gate reads shell, not the program an interpreter is given, so it cannot tell whether that code does this or only mentions it." +
			" If the code only mentions it (a message, a pattern, a string), split the command so that text is not program code: pass it as an argument or keep it in a data file the code reads.")
	}
	if hasRole(fs, Unknown) {
		b.WriteString(" Split the command into simple commands the gate can read: name every command literally (not through a variable or a substitution) and run a script's commands directly instead of piping them into a shell or an interpreter.")
	}
	b.WriteString(" If it must run as it is, ask the user to run it or to authorize exactly this command;" +
		" do not hide an irreversible action in another form.")
	return b.String()
}

// unattendedNote is put before the model when a call with a finding goes
// ahead unattended: what was found, where, and that it was not run.
func unattendedNote(fs []Finding, why string) string {
	var data, dry []string
	for _, f := range fs {
		if f.Where == DryRun {
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
