package operator

import (
	"slices"
	"strings"

	"github.com/laserkit/laserkit/operator/shell"
)

// RunState is what the run a call belongs to says, as the caller read it.
// It matters only for an action a person's authorization could lift;
// Decision.NeedsRun says when a caller that has not read it must (and
// Decision.InRun applies it then).
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

	// what says what kind of action a refusal refused (for the run's
	// refusals, InRun).
	what string
}

// WantsAuthorization: the call is refused, and a person's authorization
// of exactly this action would let it through (once the run is read and
// allows it): the caller looks one up, and Authorized is the answer when
// one is there.
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
// refused while the run has no reading, drifts or is judged to stop
// (InRun; NeedsRun when rs was not read), and let through by a person's
// authorization of exactly this action (Authorized).
func Decide(an shell.Analysis, p Presence, rs RunState, pol Policy) Decision {
	d := newDecision(an, p, rs.PresenceWhy)
	switch {
	case rs.Halted:
		d.Labels = []string{"halted by the supervisor"}
		return d.refusedAs(RuleHalted, rs.HaltReason)
	case pol.Err != "":
		return d.refusedAs(RulePolicyInvalid, policyInvalidReason(pol))
	}
	if f, ok := an.PersonOnly(); ok {
		d.Findings = []shell.Finding{f}
		return d.refusedAs(RulePersonOnly, PersonOnlyReason(f))
	}
	prot := pol.protectedWrites(an)
	if prot.outright != "" {
		label := "protected file: " + prot.outright
		d.Findings = []shell.Finding{{Label: label, Where: shell.Executed}}
		d.Labels = []string{label}
		return d.refusedAs(RuleProtectedOutright, outrightReason(prot.outright, prot.outrightWhy))
	}
	findings, why := d.collect(an, pol, prot)
	role := d.answerFindings(an, findings, pol.covers(an, findings), p)
	switch d.Action {
	case Allow:
		return d.allowed(findings, pol, role)
	case Ask:
		d.Rule = ruleOfRole(role)
		d.Reason = "laserbrain operator gate: " + why + " — confirm before it runs " + presenceClause(p, d.PresenceWhy) + "."
		d.Authorizable = true
		return d
	}
	d = d.refused(an, role, why, prot.writeWhat)
	if !rs.Read {
		d.NeedsRun = true
		return d
	}
	return d.InRun(rs)
}

// newDecision is the decision's frame: who is there, and the action —
// a shell command, or a file tool's write of its first path.
func newDecision(an shell.Analysis, p Presence, presenceWhy string) Decision {
	d := Decision{Presence: p, PresenceWhy: presenceWhy, Labels: an.Labels, Kind: "shell", Target: actionOf(an), Outward: an.Outward}
	if d.Labels == nil {
		d.Labels = []string{}
	}
	if an.Tool() != "" {
		d.Kind = "write"
	}
	return d
}

// refusedAs refuses the action outright by rule, with reason.
func (d Decision) refusedAs(rule, reason string) Decision {
	d.Action, d.Rule, d.Reason = Deny, rule, reason
	return d
}

// collect is the analysis's findings with what the project adds: writes
// into protected places, a write whose place the gate cannot tell near
// one, and the policy's publishers. Each added finding's label joins the
// decision's labels (and its outward flag the decision's); why is the
// analysis's account with theirs.
func (d *Decision) collect(an shell.Analysis, pol Policy, prot protection) (findings []shell.Finding, why string) {
	findings, why = slices.Clone(an.Findings), an.Why
	add := func(f shell.Finding) {
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
	for i, w := range prot.writes {
		label := "writes a protected file: " + w
		if an.Tool() != "" {
			// A file tool names the file: the label says what it is.
			label = "protected file: " + prot.whats[i]
		}
		add(shell.Finding{Label: label, Where: shell.Executed})
	}
	if prot.unsure != "" {
		add(shell.Finding{Label: "may write a protected file (" + prot.unsure + ")", Where: shell.Unknown,
			Note: "the gate cannot tell where this command writes"})
	}
	for _, f := range pol.publisherFindings(an) {
		add(f)
	}
	return findings, why
}

// answerFindings answers each finding by its role and presence, the
// strongest answer winning (a carve-out or the policy's allow rules take a
// finding out, never a person's command, refused before), and returns the
// strongest deciding role ("" for none). Covered findings are marked with
// the rule that covered them.
func (d *Decision) answerFindings(an shell.Analysis, findings []shell.Finding, covered []string, p Presence) string {
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
	return role
}

// allowed is an allow: with nothing deciding, by the project policy, by a
// carve-out or for nothing found; with findings that go ahead (data or a
// dry run, nobody there), with the note the model reads.
func (d Decision) allowed(findings []shell.Finding, pol Policy, role string) Decision {
	if len(d.Findings) > 0 {
		d.Rule = RuleData
		if role == shell.DryRun.String() {
			d.Rule = RuleDryRun
		}
		d.Context = unattendedNote(d.Findings, d.PresenceWhy)
		d.Reason = d.Context
		return d
	}
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
}

// refused is a deny a person's authorization could lift, by the rule of
// its strongest role (a write into a protected place by its own rule),
// with the refusal the model reads.
func (d Decision) refused(an shell.Analysis, role, why, writeWhat string) Decision {
	d.Authorizable = true
	d.Rule = ruleOfRole(role)
	if an.Tool() != "" || hasLabelPrefix(d.Findings, "writes a protected file") && role == shell.Executed.String() && !hasRealFinding(d.Findings) {
		d.Rule = RuleProtected
	}
	d.what = actionWhat(d.Kind, why, writeWhat)
	d.Reason = "laserbrain operator gate: " + d.what + ", and nobody authorized it. Do not retry it in another form; ask the user to run it or to authorize it."
	if role != shell.Executed.String() {
		d.Reason = unattendedRefusal(d.Findings, d.PresenceWhy)
	}
	return d
}

// InRun is a decision once its run is read: an action an authorization
// could lift is refused while the run has no drift reading, drifts, or is
// judged to stop. Any other decision is as it was.
func (d Decision) InRun(rs RunState) Decision {
	if !d.WantsAuthorization() {
		return d
	}
	d.NeedsRun = false
	switch {
	case rs.Attached && !rs.Reading:
		return d.refusedAs(RuleNoReading, "laserbrain: refused: the run has no drift reading yet; check before asking for something that cannot be undone. "+capitalize(d.what)+".")
	case rs.Drifting:
		return d.refusedAs(RuleDrifting, "laserbrain: refused because your run is drifting: the agent is off its ground ("+rs.DriftReason+"); return to it before acting irreversibly. "+capitalize(d.what)+
			", and nothing irreversible or outward runs while the run is off its ground. Check your state (check_state) and return to your goal first; do not retry it in another form.")
	case blockingJudgment(rs.Judgment):
		return d.refusedAs(RuleJudgment, "laserbrain: refused because the whole-run judgment is "+rs.Judgment+": the run as a whole should stop, not act. "+capitalize(d.what)+
			". Do not retry it in another form; tell the user.")
	}
	return d
}

// Authorized is the answer when a person's authorization of exactly this
// action lets it through (by says which: "id (by), use n of m"): an allow
// whose use the caller records. A decision that wants none, or whose run
// is not read yet, is as it was.
func (d Decision) Authorized(by string) Decision {
	if !d.WantsAuthorization() || d.NeedsRun {
		return d
	}
	d.Action, d.Rule, d.UseAuthorization = Allow, RuleAuthorized, true
	d.Reason = "laserbrain: authorized by " + by
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

// ActAuthorizable says whether a person may authorize a command for
// laserbrain act, which carries it out for an agent outside laserbrain
// run's boundary, where every outward command needs leave, whether the
// gate refuses it or not: never a person's command, a write no
// authorization opens, or anything under a policy that is not valid.
func ActAuthorizable(an shell.Analysis, pol Policy) (ok bool, why string) {
	ok, why = Authorizable(an, pol)
	if ok {
		return true, ""
	}
	switch d := Decide(an, Unattended, RunState{Read: true}, pol); d.Rule {
	case RulePersonOnly, RuleProtectedOutright, RulePolicyInvalid:
		return false, why
	}
	return true, ""
}
