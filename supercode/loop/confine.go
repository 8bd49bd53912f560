package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Session is what Options.Confine is told of one session it confines: its
// own run (its hooks and checks record there), its call directory and role
// (its MCP server serves that call and no other), and Dir, the session's
// private directory (its broker's socket), removed when the session ends.
type Session struct {
	Run, CallDir, Role, Dir string
}

// confine puts a session's command behind the kernel's boundary when the
// loop confines its sessions; done undoes it once the session exited.
func (l *Loop) confine(cmd *exec.Cmd, t turn) (done func(), err error) {
	if l.o.Confine == nil {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", agentrun.RunDirPrefix)
	if err != nil {
		return nil, err
	}
	note, undo, err := l.o.Confine(cmd, Session{Run: t.childRun, CallDir: t.callDir, Role: t.role, Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("confining the session: %w", err)
	}
	if note != "" {
		// On the session's own run, as laserbrain run records its agent's.
		if st, err := l.sup.Fleet(); err == nil {
			_, _ = st.AppendEvent(context.Background(), t.childRun, fleet.RunEvent{At: time.Now().UTC(), Kind: fleet.KindSession, Name: "confinement", Text: note})
		}
	}
	return func() {
		if undo != nil {
			undo()
		}
		os.RemoveAll(dir)
	}, nil
}

// exchange is where a confined command service writes what the loop reads
// back (its escalation, its usage): its call directory is in the laserbrain
// home, which it cannot write. Unconfined, it is the call directory.
func (l *Loop) exchange(t turn) (dir string, done func(), err error) {
	if l.o.Confine == nil {
		return t.callDir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "laserbrain-call-")
	if err != nil {
		return "", nil, err
	}
	return d, func() {
		// The journal keeps them, as an unconfined call leaves them.
		for _, f := range []string{"escalate.txt", "usage.json"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
				_ = os.WriteFile(filepath.Join(t.callDir, f), b, 0o644)
			}
		}
		os.RemoveAll(d)
	}, nil
}
