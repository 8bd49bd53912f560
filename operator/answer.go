package operator

import (
	"fmt"

	"github.com/laserkit/laserkit/operator/shell"
)

// Answer is what the gate says to a tool call.
type Answer uint8

const (
	// Allow: nothing irreversible found (or a person's authorization, or
	// the project policy, lets it through); the agent's own permission
	// flow decides. With a Context the call goes ahead with a note.
	Allow Answer = iota
	// Ask: a person should decide.
	Ask
	// Deny: refused.
	Deny
)

var answerNames = [...]string{"allow", "ask", "deny"}

func (d Answer) String() string { return answerNames[d] }

// MarshalText writes the answer's name in JSON output.
func (d Answer) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads an answer by its name.
func (d *Answer) UnmarshalText(b []byte) error {
	for i, n := range answerNames {
		if string(b) == n {
			*d = Answer(i)
			return nil
		}
	}
	return fmt.Errorf("answer %q: want allow, ask or deny", b)
}

// Presence says whether a person is there to answer a question. An ask
// with nobody to answer it is a deny (Claude Code under -p refuses the
// call), so the answer to an unclear command depends on it.
type Presence uint8

const (
	// PresenceUnknown: nothing says. Answered as attended: a question may
	// find a person.
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

// UnmarshalText reads a presence by its name.
func (p *Presence) UnmarshalText(b []byte) error {
	v, err := ParsePresence(string(b))
	*p = v
	return err
}

// ParsePresence reads a presence by name.
func ParsePresence(s string) (Presence, error) {
	for i, n := range presenceNames {
		if s == n {
			return Presence(i), nil
		}
	}
	return PresenceUnknown, fmt.Errorf("presence %q: want attended, unattended or unknown", s)
}

// roleAnswers is the answer to one finding, by its role and by presence
// (PresenceUnknown, Attended, Unattended). Unattended, Allow means the
// call goes ahead with the finding put before the model and recorded on
// the run; POLICY.md states the same table.
var roleAnswers = [...][3]Answer{
	shell.Executed:   {Deny, Deny, Deny},
	shell.InlineCode: {Ask, Ask, Deny},
	shell.Data:       {Ask, Ask, Allow},
	shell.Unknown:    {Ask, Ask, Deny},
	shell.DryRun:     {Ask, Ask, Allow},
}

// RoleAnswer is the answer to a finding in role w when presence is p.
func RoleAnswer(w shell.Where, p Presence) Answer { return roleAnswers[w][p] }
