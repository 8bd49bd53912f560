package shell

// The grammar's patterns and the extra pack run on one command's
// normalised words or on code, each match recorded as a finding in the
// role the command runs in.

// packOn runs the pack's command rules on a command's normalised words
// (anchored at the command).
func (a *analyzer) packOn(name, text string, where Where, command string) {
	a.packAs(name, text, where, "", command)
}

// packAs runs the extra pack's rules of one scope on a text: a command's
// normalised words (scope "command", anchored at the command; where is the
// command's role: executed, or a dry run) or code handed to an interpreter
// or database client (scope "code", where InlineCode).
func (a *analyzer) packAs(name, text string, where Where, note, command string) {
	for i := range packRules {
		r := &packRules[i]
		if (where == InlineCode) != (r.Scope == "code") {
			continue
		}
		if !r.appliesTo(name) || a.overTime() {
			continue
		}
		m, err := packRegexp(i, a.deadline.timeout()).FindStringMatch(text)
		f := Finding{Label: "parsed: " + r.Label, Outward: r.Outward, Where: where, Note: note, Command: command}
		switch {
		case err != nil:
			f.Where, f.Note = Unknown, errTimeout.Error()
		case m == nil:
			continue
		case where == InlineCode && note == "":
			f.Note = "in code run by " + name
		}
		a.add(f)
	}
}

// grammarOn runs the grammar patterns on one command's normalised text. A
// pattern counts only if it matches at the start, i.e. names this command
// rather than appearing in its arguments.
func (a *analyzer) grammarOn(text, command string) { a.grammarAs(text, Executed, "", command) }

// grammarAs is grammarOn for a command that runs in a given role (a dry
// run, for one).
func (a *analyzer) grammarAs(text string, where Where, note, command string) {
	lower := lowerForPrefilter(text)
	var allow []span
	for i := range allowPatterns {
		if p := allowPattern(i); p.mayMatch(lower) {
			allow = append(allow, find(p.regexp(a.deadline.timeout()), text).spans...)
		}
	}
	for i := range irreversiblePatterns {
		p := atStartPattern(i)
		if !p.mayMatch(lower) || a.overTime() {
			continue
		}
		m, err := p.regexp(a.deadline.timeout()).FindStringMatch(text)
		if err != nil {
			a.add(Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: Unknown, Note: errTimeout.Error(), grammarNo: i + 1, Command: command})
			continue
		}
		if m == nil {
			continue
		}
		carved := within([]span{{m.Index, m.Index + m.Length}}, allow)
		a.add(Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: where, Note: note, CarvedOut: carved, grammarNo: i + 1, Command: command})
	}
}

// grammarAnywhere runs the grammar patterns anywhere in text, each match a
// finding in role w.
func (a *analyzer) grammarAnywhere(text string, w Where, note, command string) {
	lower := lowerForPrefilter(text)
	for i := range irreversiblePatterns {
		p := irreversiblePattern(i)
		if !p.mayMatch(lower) || a.overTime() {
			continue
		}
		m := find(p.regexp(a.deadline.timeout()), text)
		if !m.found {
			continue
		}
		f := Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: w, Note: note, grammarNo: i + 1, Command: command}
		if m.timedOut {
			f.Where, f.Note = Unknown, errTimeout.Error()
		}
		a.add(f)
	}
}
