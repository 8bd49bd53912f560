package operator

// HookAnswer is what a pre-execution hook (Claude Code's PreToolUse) says
// about a classified command: deny when an irreversible or outward command
// would run; ask when a match is only in data or code, in a dry run or help
// request, or could not be read; allow (say nothing) otherwise. Reason is
// written for whoever reads it: the model on a deny, the person on an ask.
type HookAnswer struct {
	Decision Decision
	Reason   string
}

// HookAnswer turns a classification into the hook's answer. Only the
// answer softens for data, code, dry runs and help: the classification
// (rule 0) stays irreversible.
func (r Result) HookAnswer() HookAnswer {
	switch r.Decision {
	case Deny:
		return HookAnswer{Deny, "laserbrain operator gate: this command is irreversible or outward and nobody authorized it — " + r.Why +
			". Do not retry it in another form; ask the user to run it or to authorize it."}
	case Ask:
		return HookAnswer{Ask, "laserbrain operator gate: " + r.Why + " — confirm before it runs."}
	}
	return HookAnswer{Decision: Allow}
}
