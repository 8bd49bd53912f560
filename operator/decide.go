package operator

import (
	"fmt"
	"slices"
	"strings"

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

// RunState is what the run a call belongs to says, as the caller read it
// (the hook: find the run once, read the authorizations once). It matters
// only for an action that needs authorization; Decision.NeedsRun says
// when a caller that has not read it must.
type RunState struct {
	// Read: the caller looked the run up.
	Read bool
	// Attached: the call belongs to a run whose task the operator checks;
	// Reading: that run has a drift reading; Drifting with DriftReason its
	// latest one; Judgment its whole-run verdict.
	Attached, Reading, Drifting bool
	DriftReason, Judgment       string
	// Halted: the supervisor halted this agent; HaltReason is the answer.
	Halted     bool
	HaltReason string
	// Authorized: a person's live authorization matches exactly this
	// action; AuthorizedBy says which ("id (by), use n of m").
	Authorized   bool
	AuthorizedBy string
	// PresenceWhy is what said who is there (quoted in the answer).
	PresenceWhy string
}

// The rules that decide, as Decision.Rule names them.
const (
	RuleNothing           = "nothing found"
	RuleCarveOut          = "carve-out"
	RulePolicy            = "policy"
	RuleData              = "data"
	RuleDryRun            = "dry run"
	RuleExecuted          = "executed"
	RuleInlineCode        = "inline code"
	RuleUnknown           = "unknown"
	RuleProtected         = "protected file"
	RuleProtectedOutright = "protected outright"
	RulePersonOnly        = "person's command"
	RulePolicyInvalid     = "policy invalid"
	RuleHalted            = "halted"
	RuleNoReading         = "no drift reading"
	RuleDrifting          = "drifting"
	RuleJudgment          = "judgment"
	RuleAuthorized        = "authorized"
)

// Decision is the gate's answer to one tool call, with everything the
// record needs.
type Decision struct {
	Action Answer `json:"action"`
	// Reason is written for whoever reads it: the model on a deny, the
	// person on an ask; on an allow with a note, the note; on an allow by
	// policy or authorization, what let it through.
	Reason string `json:"reason,omitempty"`
	// Context is put before the model when the call goes ahead with a
	// finding (unattended: data, or a dry run).
	Context string `json:"context,omitempty"`
	// Authorizable: a person's authorization of exactly this action would
	// let it through (not so for a person's command, a protected place no
	// one opens to an agent, a halt, an invalid policy).
	Authorizable bool `json:"authorizable"`
	// Rule is what decided (RuleExecuted, RulePolicy, …); Policy the
	// project policy rules that let findings through ("id: reason").
	Rule   string   `json:"rule"`
	Policy []string `json:"policy,omitempty"`
	// Presence the answer assumed, and what said so.
	Presence    Presence `json:"presence"`
	PresenceWhy string   `json:"presence_why,omitempty"`
	// Findings are the findings that decided (none for a plain allow);
	// Labels every label; Role the strongest deciding role.
	Findings []shell.Finding `json:"findings,omitempty"`
	Labels   []string        `json:"labels"`
	Role     string          `json:"role,omitempty"`
	// Kind is the action's kind ("shell" or "write"), Target what it is
	// (the command, or "write PATH"), Outward whether it reaches beyond
	// the machine: the operator's action.
	Kind    string `json:"kind"`
	Target  string `json:"target"`
	Outward bool   `json:"outward,omitempty"`
	// UseAuthorization: the answer relies on a person's authorization,
	// whose use the caller records.
	UseAuthorization bool `json:"use_authorization,omitempty"`
	// NeedsRun: the answer depends on the run (drift, judgment, a
	// person's authorization) and the caller did not read it.
	NeedsRun bool `json:"needs_run,omitempty"`
}

// WantsAuthorization: the call is refused, and a person's authorization
// of exactly this action would let it through now (the run allows it):
// the caller looks one up (and spends it) and decides again.
func (d Decision) WantsAuthorization() bool {
	if d.Action != Deny || !d.Authorizable {
		return false
	}
	switch d.Rule {
	case RuleExecuted, RuleInlineCode, RuleUnknown, RuleProtected:
		return true
	}
	return false
}

// Decide is the gate's one decision: the analysis of a call, who is
// there, what its run says and the project policy in, the answer out.
// In order: a halt refuses everything; an invalid policy refuses commands
// and writes; a person's command and a write into what no authorization
// opens are refused outright; each other finding (protected writes and
// the policy's publishers included) not covered by a carve-out or a
// policy rule is answered by its role and presence (RoleAnswer), the
// strongest answer winning; a deny that an authorization could lift is
// refused while the run has no reading, drifts or is judged to stop, and
// let through by a person's authorization of exactly this action.
func Decide(an shell.Analysis, p Presence, rs RunState, pol Policy) Decision {
	d := Decision{Presence: p, PresenceWhy: rs.PresenceWhy, Labels: an.Labels, Kind: "shell", Target: an.Command, Outward: an.Outward}
	if d.Labels == nil {
		d.Labels = []string{}
	}
	if an.Tool() != "" {
		d.Kind = "write"
		if len(an.Writes) > 0 {
			d.Target = "write " + an.Writes[0].Path
		}
	}
	deny := func(rule, reason string) Decision {
		d.Action, d.Rule, d.Reason = Deny, rule, reason
		return d
	}
	if rs.Halted {
		d.Labels = []string{"halted by the supervisor"}
		return deny(RuleHalted, rs.HaltReason)
	}
	if pol.Err != "" {
		return deny(RulePolicyInvalid, "laserbrain: the project policy "+pol.Source+" is not valid: "+pol.Err+
			". The gate refuses commands and file writes until a person fixes it; tell the user what is wrong with it.")
	}
	if f, ok := an.PersonOnly(); ok {
		d.Findings = []shell.Finding{f}
		return deny(RulePersonOnly, PersonOnlyReason(f))
	}
	findings := slices.Clone(an.Findings)
	why := an.Why
	addFinding := func(f shell.Finding) {
		findings = append(findings, f)
		d.Outward = d.Outward || f.Outward
		if !slices.Contains(d.Labels, f.Label) {
			d.Labels = append(slices.Clone(d.Labels), f.Label)
		}
		w := f.Label
		if f.Note != "" {
			w += " (" + f.Note + ")"
		}
		if why != "" {
			why += "; "
		}
		why += w
	}
	prot := pol.protectedWrites(an)
	if prot.outright != "" {
		d.Findings = []shell.Finding{{Label: "protected file: " + prot.outright, Where: shell.Executed}}
		d.Labels = []string{"protected file: " + prot.outright}
		return deny(RuleProtectedOutright, outrightReason(prot.outright, prot.outrightWhy))
	}
	for i, w := range prot.writes {
		label := "writes a protected file: " + w
		if an.Tool() != "" {
			// A file tool names the file: the label says what it is.
			label = "protected file: " + prot.whats[i]
		}
		addFinding(shell.Finding{Label: label, Where: shell.Executed})
	}
	if prot.unsure != "" {
		addFinding(shell.Finding{Label: "may write a protected file (" + prot.unsure + ")", Where: shell.Unknown,
			Note: "the gate cannot tell where this command writes"})
	}
	for _, f := range pol.publisherFindings(an) {
		addFinding(f)
	}
	// The policy's allow rules, like a carve-out, take a finding out of
	// the answer; they never take a person's command (refused above).
	covered := pol.covers(an, findings)
	d.Action = Allow
	for i, f := range findings {
		if f.CarvedOut || covered[i] != "" {
			if covered[i] != "" && !slices.Contains(d.Policy, covered[i]) {
				d.Policy = append(d.Policy, covered[i])
			}
			continue
		}
		switch ans := RoleAnswer(f.Where, p); {
		case ans > d.Action:
			d.Action, d.Findings = ans, []shell.Finding{f}
		case ans == d.Action:
			d.Findings = append(d.Findings, f)
		}
	}
	role := ""
	if w, ok := shell.Strongest(d.Findings); ok {
		role = w.String()
		if an.Tool() == "" {
			d.Role = role
		}
	}
	for i := range findings {
		if covered[i] != "" {
			findings[i].Rule = strings.SplitN(covered[i], ":", 2)[0]
		}
	}
	switch {
	case d.Action == Allow && len(d.Findings) == 0:
		switch {
		case len(d.Policy) > 0:
			d.Rule = RulePolicy
			d.Reason = "laserbrain operator gate: allowed by the project policy (" + pol.Source + "): " + strings.Join(d.Policy, "; ")
			for _, f := range findings {
				if f.Rule != "" {
					d.Findings = append(d.Findings, f)
				}
			}
		case slices.ContainsFunc(findings, func(f shell.Finding) bool { return f.CarvedOut }):
			d.Rule = RuleCarveOut
		default:
			d.Rule = RuleNothing
		}
		return d
	case d.Action == Allow:
		d.Rule = RuleData
		if role == shell.DryRun.String() {
			d.Rule = RuleDryRun
		}
		d.Context = unattendedNote(d.Findings, d.PresenceWhy)
		d.Reason = d.Context
		return d
	case d.Action == Ask:
		d.Rule = ruleOfRole(role)
		d.Reason = "laserbrain operator gate: " + why + " — confirm before it runs " + presenceClause(p, d.PresenceWhy) + "."
		d.Authorizable = true
		return d
	}
	// A deny an authorization could lift: the run decides first.
	d.Authorizable = true
	d.Rule = ruleOfRole(role)
	if an.Tool() != "" || hasLabelPrefix(d.Findings, "writes a protected file") && role == shell.Executed.String() && !hasRealFinding(d.Findings) {
		d.Rule = RuleProtected
	}
	what := actionWhat(d.Kind, why, prot.writeWhat)
	plain := "laserbrain operator gate: " + what + ", and nobody authorized it. Do not retry it in another form; ask the user to run it or to authorize it."
	if role != shell.Executed.String() {
		plain = unattendedRefusal(d.Findings, d.PresenceWhy)
	}
	d.Reason = plain
	if !rs.Read {
		d.NeedsRun = true
		return d
	}
	switch {
	case rs.Attached && !rs.Reading:
		return deny(RuleNoReading, "laserbrain: refused: the run has no drift reading yet; check before asking for something that cannot be undone. "+capitalize(what)+".")
	case rs.Drifting:
		return deny(RuleDrifting, "laserbrain: refused because your run is drifting: the agent is off its ground ("+rs.DriftReason+"); return to it before acting irreversibly. "+capitalize(what)+
			", and nothing irreversible or outward runs while the run is off its ground. Check your state (check_state) and return to your goal first; do not retry it in another form.")
	case blockingJudgment(rs.Judgment):
		return deny(RuleJudgment, "laserbrain: refused because the whole-run judgment is "+rs.Judgment+": the run as a whole should stop, not act. "+capitalize(what)+
			". Do not retry it in another form; tell the user.")
	case rs.Authorized:
		d.Action, d.Rule, d.UseAuthorization = Allow, RuleAuthorized, true
		d.Reason = "laserbrain: authorized by " + rs.AuthorizedBy
		return d
	}
	return d
}

// blockingJudgment: the whole-run verdicts that refuse an action needing
// authorization (narrow, verify, unbacked and over-budget do not). A
// switch, not a map: a map literal is built at package init, in every
// hook process.
func blockingJudgment(j string) bool {
	switch j {
	case "abandon", "wrong-problem", "repeating":
		return true
	}
	return false
}

func ruleOfRole(role string) string {
	switch role {
	case shell.InlineCode.String():
		return RuleInlineCode
	case shell.Unknown.String():
		return RuleUnknown
	case shell.Data.String():
		return RuleData
	case shell.DryRun.String():
		return RuleDryRun
	}
	return RuleExecuted
}

func hasLabelPrefix(fs []shell.Finding, prefix string) bool {
	return slices.ContainsFunc(fs, func(f shell.Finding) bool { return strings.HasPrefix(f.Label, prefix) })
}

// hasRealFinding: a deciding finding other than a protected write.
func hasRealFinding(fs []shell.Finding) bool {
	return slices.ContainsFunc(fs, func(f shell.Finding) bool { return !strings.HasPrefix(f.Label, "writes a protected file") })
}

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
	if hasRole(fs, shell.Unknown) {
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

// Authorizable reports whether a person's authorization of the analysed
// command (or write) could ever be used by the gate: it is refused with
// nobody there to ask (the strictest answer), and an authorization would
// lift that refusal. A person's command, a write into what no
// authorization opens, a command the project policy lets through and one
// the gate does not refuse need none; why says which.
func Authorizable(an shell.Analysis, pol Policy) (ok bool, why string) {
	d := Decide(an, Unattended, RunState{Read: true}, pol)
	switch {
	case d.Rule == RulePersonOnly:
		what := strings.TrimPrefix(d.Findings[0].Label, "parsed: ")
		if i := strings.Index(what, " ("); i >= 0 {
			what = what[:i]
		}
		return false, what + " is a person's command: the gate refuses it to agents whatever is authorized; run it yourself"
	case d.Rule == RuleProtectedOutright:
		return false, "it writes " + strings.TrimPrefix(d.Labels[0], "protected file: ") + ", which no authorization opens to an agent"
	case d.Rule == RulePolicyInvalid:
		return false, "the project policy is not valid (" + pol.Err + "): fix it first"
	case d.WantsAuthorization():
		return true, ""
	case d.Rule == RulePolicy:
		return false, "the project policy already lets it through (" + strings.Join(d.Policy, "; ") + "), so there is nothing to authorize"
	}
	return false, "the gate does not refuse it (nothing irreversible or outward, no protected file), so there is nothing to authorize"
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
