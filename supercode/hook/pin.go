package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// What the gate read is what runs. A call the gate lets through may run
// files it read to decide — a script, a makefile's recipe, a package.json
// script, a test file — and a file can change between the gate's read and
// the run (a process the agent left behind rewrites it). So the hook
// keeps, from the call's pre-tool-use to its post-tool-use, the SHA-256 of
// each file it read. Where the client runs a call rewritten by the hook
// (Claude Code), the call becomes a check of those sums and then the
// command, in the same shell: a file that changed makes the call run
// nothing. For every client the post-tool-use compares the files with what
// was read: a change is recorded on the run, told to the person and the
// model, and with nobody there the agent is halted until a person
// releases it. A command that rewrites the very file it runs is read as
// such a change.

// pinsDir is where the read files' sums wait for their call's
// post-tool-use (pins/ under $LASERBRAIN_HOME).
func (h *Handler) pinsDir() (string, error) {
	if h.PinDir != "" {
		return h.PinDir, nil
	}
	return localstore.InHome("pins")
}

// pinKey names one call's pin: its tool call id where the client gives
// one, else its session, directory and command lines.
func pinKey(e *event) string {
	s := e.Session + "\x00" + e.ToolUseID
	if e.ToolUseID == "" && e.Tool != nil {
		s += "\x00" + e.Cwd
		for _, c := range e.Tool.Commands {
			s += "\x00" + c.Line
		}
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// readFiles are the files a call's analyses read from disk.
func readFiles(analyses []shell.Analysis) []shell.FileRead {
	var out []shell.FileRead
	for _, an := range analyses {
		out = append(out, an.Reads...)
	}
	return out
}

// pin keeps what the call read for its post-tool-use and, where the
// client runs a rewritten call, gives the reply the call pinned. A pin
// that cannot be kept is logged: the call goes on as decided, unpinned.
func (h *Handler) pin(e *event, reads []shell.FileRead, a *client.Reply) {
	if len(reads) == 0 || a.Denies() {
		return
	}
	dir, err := h.pinsDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		data, _ := json.Marshal(reads)
		err = fsx.WriteFile(filepath.Join(dir, pinKey(e)+".json"), data, 0o600)
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: what the gate read could not be kept for the check after the call: %v", PreToolUse, err))
	}
	if d, decided := a.Decided(); a.Rewrite == "" && (!decided || d == operator.Allow) && e.Tool != nil && len(e.Tool.Commands) == 1 && client.RunsRewritten(h.clientName()) {
		if cmd, ok := pinnedCommand(reads, e.Tool.Commands[0].Line); ok {
			a.Rewrite = cmd
		}
	}
}

// pinnedCommand is line run only when each file still holds what was read:
// sha256sum checks the sums, then line runs in the same shell; a mismatch
// runs nothing and says which file changed. ok is false when there is no
// sha256sum, or a path sha256sum cannot take (a newline in it).
func pinnedCommand(reads []shell.FileRead, line string) (string, bool) {
	sum, err := exec.LookPath("sha256sum")
	if err != nil || !filepath.IsAbs(sum) {
		return "", false
	}
	var sums, names []string
	for _, r := range reads {
		if strings.ContainsAny(r.Path, "\n\\") {
			return "", false
		}
		sums = append(sums, shellquote.Word(r.SHA256+"  "+r.Path))
		names = append(names, r.Path)
	}
	msg := "laserbrain: refused: what the gate read (" + strings.Join(names, ", ") + ") changed before the run; nothing was run"
	return "if printf '%s\\n' " + strings.Join(sums, " ") + " | " + shellquote.Word(sum) + " --quiet -c - >&2 2>/dev/null; then\n" +
		line + pinnedTail + shellquote.Word(msg) + " >&2\n(exit 86)\nfi", true
}

// pinnedTail ends every pinned command after the command itself.
const pinnedTail = "\nelse\necho "

// unpinned is the command line a pinned call ran (a client may report the
// call as the hook rewrote it); ok is false for any other line.
func unpinned(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "if printf '%s\\n' ")
	if !ok || !strings.HasSuffix(line, "\n(exit 86)\nfi") {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "; then\n")
	end := strings.LastIndex(rest, pinnedTail)
	if !ok || end < 0 {
		return "", false
	}
	return rest[:end], true
}

// restoreCall gives a shell call reported as the hook rewrote it back its
// own command, so the run records what the agent asked to run.
func restoreCall(t *client.Tool) {
	if t == nil || len(t.Commands) != 1 {
		return
	}
	line, ok := unpinned(t.Commands[0].Line)
	if !ok {
		return
	}
	t.Commands[0].Line = line
	var in map[string]any
	if json.Unmarshal(t.Input, &in) == nil && in != nil {
		in["command"] = line
		if data, err := json.Marshal(in); err == nil {
			t.Input = data
		}
	}
}

// unpin takes the call's pin and says which of the files it read no
// longer hold what was read ("" each that does).
func (h *Handler) unpin(e *event) []string {
	dir, err := h.pinsDir()
	if err != nil {
		return nil
	}
	p := filepath.Join(dir, pinKey(e)+".json")
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_ = os.Remove(p)
	var reads []shell.FileRead
	if err != nil || json.Unmarshal(data, &reads) != nil {
		return []string{p}
	}
	var changed []string
	for _, r := range reads {
		if fileSum(r.Path) != r.SHA256 {
			changed = append(changed, r.Path)
		}
	}
	return changed
}

// fileSum is the SHA-256 of a file's bytes, "" when it cannot be read.
func fileSum(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// swapped records on the run that files the gate read changed before
// the call's end, tells the person and the model, and with nobody there
// halts the agent until a person releases it.
func (h *Handler) swapped(ctx context.Context, e *event, changed []string) client.Reply {
	what := "laserbrain: " + strings.Join(changed, ", ") + " changed between the gate's read and the end of " + describeCall(e.Tool) +
		": it did not run as the gate read it"
	a := client.Reply{Notice: what, Context: what}
	r, err := h.open(ctx, e)
	if err != nil {
		a.Log = fmt.Sprintf("laserbrain hook %s: the change could not be recorded: %v", e.Name, err)
		return a
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		a.Log = fmt.Sprintf("laserbrain hook %s: the change could not be recorded: %v", e.Name, err)
		return a
	}
	id := h.eventID("swap")
	if e.ToolUseID != "" {
		id = "swap:" + e.ToolUseID
	}
	if _, err := st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: id, At: h.now(), Kind: fleet.KindGate, Name: toolName(e), OK: laserbrain.OKFalse,
		Text: what, Session: e.Session, Subagent: subagentOf(e)}); err != nil {
		a.Log = fmt.Sprintf("laserbrain hook %s: the change could not be recorded: %v", e.Name, err)
	}
	if h.caller(e).Presence != operator.Unattended {
		return a
	}
	halt := fleet.Halt{ID: "swap-" + pinKey(e), Fleet: r.Fleet, Agent: fleet.RunAgent(r), Run: r.ID, Reason: what, By: "laserbrain gate", At: h.now()}
	if err := fleet.PutJournaledHalt(ctx, st, halt, func(rec fleet.JournalRecord) error { _, err := st.AppendJournal(ctx, rec); return err }, true); err != nil {
		a.Log = fmt.Sprintf("laserbrain hook %s: the agent could not be halted after the change: %v", e.Name, err)
	}
	return a
}
