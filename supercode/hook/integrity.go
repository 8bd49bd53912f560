package hook

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// halted denies a call by an agent the supervisor halted, with the halt's
// reason. It reads the fleet store once when nothing is halted anywhere
// (one directory read, one query in a database), and looks the caller up
// only when something is. When the store's database is out of reach the
// halts cannot be read, and the call is decided from the command alone
// (the failure policy: an action needing authorization is refused, the rest
// goes on); a binary that cannot read the store hands the event on.
func (h *Handler) halted(ctx context.Context, p Payload) (Answer, bool) {
	unreadable := func(err error) (Answer, bool) {
		switch {
		case errors.Is(err, agentrun.ErrStoreElsewhere):
			return Answer{Delegate: true}, true
		case isUnreachable(err):
			return Answer{}, false
		}
		return h.failed(PreToolUse, err), true
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return unreadable(err)
	}
	if any, err := st.AnyHaltInForce(ctx); err != nil {
		return unreadable(err)
	} else if !any {
		return Answer{}, false
	}
	run, found, err := h.Sup.Find(ctx, h.caller(p))
	if err != nil {
		return unreadable(err)
	}
	if !found {
		return Answer{}, false
	}
	halt, ok, err := st.ActiveHalt(ctx, run.Fleet, fleet.RunAgent(run))
	if err != nil {
		return unreadable(err)
	}
	if !ok {
		return Answer{}, false
	}
	reason := "laserbrain: refused: " + halt.Message()
	h.record(ctx, run, found, p, false, reason, gateFacts{labels: []string{"halted by the supervisor"}}.result(fleet.GateDeny, h.caller(p), nil))
	return h.deny(reason), true
}

// ponderWrite denies writing ponder's session files other than through
// ponder: a ledger line forged by an agent would buy coverage the audit
// never did. Shell commands are read for every path they would write
// (operator.WrittenPaths); a command that may write somewhere its text does
// not show and names .ponder is refused too.
func (h *Handler) ponderWrite(ctx context.Context, p Payload, paths []string, complete bool, command string) (Answer, bool) {
	for _, path := range paths {
		if _, abs, ok := ponderPath(path, p.Cwd); ok {
			return h.refuseIntegrity(ctx, p, fmt.Sprintf("the command would write %s", abs)), true
		}
	}
	if !complete && strings.Contains(command, ".ponder") {
		return h.refuseIntegrity(ctx, p, "the command names .ponder and may write where the gate cannot tell"), true
	}
	return Answer{}, false
}

func (h *Handler) refuseIntegrity(ctx context.Context, p Payload, why string) Answer {
	reason := "laserbrain: refused: this file is protected (" + ponderFiles + "): " + why + ". Only ponder writes .ponder/ (ponder delta, grade, judge, …): the supervisor judges a session on its ledger, so the ledger must be ponder's own. This is not something a person authorizes for an agent; run the ponder command instead."
	c := h.caller(p)
	run, found, _ := h.Sup.Find(ctx, c)
	h.record(ctx, run, found, p, false, reason, gateFacts{labels: []string{"protected file: " + ponderFiles}}.result(fleet.GateDeny, c, nil))
	return h.deny(reason)
}

// ponderPath reports whether path (relative to cwd) is inside a .ponder
// directory, following symbolic links as far as the path exists.
func ponderPath(path, cwd string) (what, abs string, ok bool) {
	if path == "" {
		return "", "", false
	}
	path = strings.TrimPrefix(path, "~")
	what, abs, protected := protectedPath(path, cwd)
	if !protected || what != ponderFiles {
		// The path as written names .ponder even when it does not resolve
		// there yet (a directory made by the same command).
		if strings.Contains("/"+filepath.ToSlash(path)+"/", "/.ponder/") {
			return ponderFiles, abs, true
		}
		return "", abs, false
	}
	return what, abs, true
}
