package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

// Options configure a server beyond the caller's run.
type Options struct {
	// Loop, when set, serves one session of a `laserbrain loop` run: the
	// escalate tool, and for a judge the verdict tool, answering into the
	// call's directory. Without it neither tool is offered.
	Loop *LoopCall
	// Workflows is the user's directory of methods the shelf tools add to
	// the shipped ones ("": ~/.laserbrain/workflows under the caller's
	// HOME).
	Workflows string
}

// LoopCall is the loop session this server answers for.
type LoopCall struct {
	Dir  string // the call directory the loop reads when the session ends
	Role string // RoleAgent or RoleJudge
}

// Loop session roles.
const (
	RoleAgent = "agent"
	RoleJudge = "judge"
)

// NewWithOptions is New with options.
func NewWithOptions(sup *agentrun.Tracker, opts Options) (*Server, error) {
	if l := opts.Loop; l != nil {
		if l.Dir == "" {
			return nil, errors.New("a loop session needs its call directory")
		}
		if l.Role != RoleAgent && l.Role != RoleJudge {
			return nil, fmt.Errorf("loop role %q: want %s or %s", l.Role, RoleAgent, RoleJudge)
		}
	}
	return newServer(sup, opts), nil
}

// loopTools are the tools a loop session gets: escalate always, verdict for
// a judge.
func (s *Server) loopTools() []toolDef {
	l := s.opts.Loop
	if l == nil {
		return nil
	}
	tools := []toolDef{def("escalate", "Stop and ask for a person: the failure is environmental, impossible, or needs a decision you cannot make. "+
		"Give the reason; then end your turn. This is the only way to report that you cannot go on.",
		schema(map[string]any{"reason": prop("string", "What a person must decide or do, and why.")}, "reason"), s.escalate)}
	if l.Role == RoleJudge {
		tools = append(tools, def("verdict", verdict.Description(), verdict.ToolSchema(), s.verdict))
	}
	return tools
}

func (s *Server) escalate(ctx context.Context, a args) (any, error) {
	reason, err := a.str("reason")
	if err != nil {
		return nil, err
	}
	if err := verdict.Escalate(s.opts.Loop.Dir, reason); err != nil {
		return nil, badf("%v", err)
	}
	return map[string]any{"ok": true, "note": "escalated: the loop will ask a person. End your turn now."}, nil
}

// verdict records the judge's verdict. A malformed one is a tool error with
// every reason, so the judge can correct it at once; the second malformed
// verdict of the call ends it as a malfunction.
func (s *Server) verdict(ctx context.Context, a args) (any, error) {
	raw, err := a.object()
	if err != nil {
		return nil, err
	}
	v, n, err := verdict.Submit(s.opts.Loop.Dir, raw)
	var me *verdict.MalformedError
	switch {
	case errors.As(err, &me):
		if n >= verdict.MaxMalformed {
			return nil, badf("%v. That was malformed verdict %d of %d allowed: the loop ends this judgment as a malfunction. End your turn.", me, n, verdict.MaxMalformed-1)
		}
		return nil, badf("%v. Fix it and call verdict again (one more malformed verdict ends this judgment as a malfunction).", me)
	case errors.Is(err, verdict.ErrAlreadyRecorded):
		return nil, badf("%v", err)
	case err != nil:
		return nil, err
	}
	return map[string]any{"ok": true, "sufficient": v.Sufficient, "findings": len(v.Findings),
		"note": "verdict recorded. End your turn now."}, nil
}
