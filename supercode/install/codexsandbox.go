package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

// The lines that open and close our sandbox block in Codex's config.toml.
const (
	codexSandboxBegin = "# laserbrain: begin: Codex's own sandbox for the agent's shell (laserbrain uninstall codex takes it out)"
	codexSandboxEnd   = "# laserbrain: end"
)

// CodexSandbox is what install decided about Codex's sandbox for one
// config.toml.
type CodexSandbox struct {
	// Mode is the sandbox_mode the config names after the change; Ours
	// says laserbrain wrote it (false: the user's own, kept as it is).
	Mode string
	Ours bool
	// TmpExcluded: /tmp and $TMPDIR are left out of the writable roots,
	// for a protected path lies below one of them.
	TmpExcluded bool
}

// codexSandboxBlock is our block: workspace-write, with no writable root
// beyond the workspace Codex always gives (and /tmp, $TMPDIR unless
// excluded). It goes at the top of the file, where a key is top-level.
func codexSandboxBlock(withTable, excludeTmp bool) string {
	var b strings.Builder
	b.WriteString(codexSandboxBegin + "\n")
	b.WriteString("sandbox_mode = \"workspace-write\"\n")
	if withTable {
		ex := "false"
		if excludeTmp {
			ex = "true"
		}
		b.WriteString("sandbox_workspace_write = { writable_roots = [], exclude_slash_tmp = " + ex + ", exclude_tmpdir_env_var = " + ex + " }\n")
	}
	b.WriteString(codexSandboxEnd + "\n")
	return b.String()
}

// underTmp reports whether a protected path lies below /tmp or tmpdir,
// which Codex's workspace-write leaves writable by default.
func underTmp(protect []string, tmpdir string) bool {
	for _, root := range []string{"/tmp", tmpdir} {
		if root == "" {
			continue
		}
		root = filepath.Clean(root)
		for _, p := range protect {
			if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return true
			}
		}
	}
	return false
}

// editCodexSandbox puts our sandbox block into the config c leaves (or
// takes it out). A config that names its own sandbox_mode keeps it, and
// one with its own [sandbox_workspace_write] keeps that: laserbrain never
// replaces a person's choice, stricter or not. The result is read back:
// apart from our keys it must mean what it meant.
//
// userMode is the sandbox_mode a layer below c names (the user's
// config.toml, for a project's .codex/config.toml): a project layer would
// override it, so none is written there either.
func editCodexSandbox(c Change, protect []string, tmpdir, userMode string, remove bool) (Change, CodexSandbox, error) {
	var dec CodexSandbox
	text := string(c.After)
	if c.After == nil && !c.Delete {
		text = string(c.Before)
	}
	lines := strings.SplitAfter(text, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimRight(l, "\r\n") {
		case codexSandboxBegin:
			begin = i
		case codexSandboxEnd:
			if begin >= 0 && end < 0 {
				end = i
			}
		}
	}
	if begin >= 0 && end < 0 {
		return c, dec, fmt.Errorf("%s: laserbrain's sandbox block has no end line; edit it by hand (nothing was changed)", c.Path)
	}
	rest := text
	if begin >= 0 {
		after := lines[end+1:]
		if len(after) > 0 && strings.TrimSpace(after[0]) == "" {
			after = after[1:] // the blank line install put after it
		}
		rest = strings.Join(lines[:begin], "") + strings.Join(after, "")
	}
	user := map[string]any{}
	if err := decodeTOML(rest, &user); err != nil {
		return c, dec, fmt.Errorf("%s is not valid TOML (fix it by hand; nothing was changed): %w", c.Path, err)
	}
	out := rest
	if mode, ok := user["sandbox_mode"].(string); ok {
		dec.Mode = mode // the person's own choice
	} else if userMode != "" {
		dec.Mode = userMode // theirs, in the user's own config
	} else if !remove {
		_, table := user["sandbox_workspace_write"]
		dec.Mode, dec.Ours = "workspace-write", true
		dec.TmpExcluded = !table && underTmp(protect, tmpdir)
		block := codexSandboxBlock(!table, dec.TmpExcluded)
		if strings.TrimSpace(rest) != "" {
			block += "\n"
		}
		out = block + rest
	}
	got := map[string]any{}
	if err := decodeTOML(out, &got); err != nil {
		return c, dec, fmt.Errorf("%s: adding Codex's sandbox would not leave valid TOML (%v); nothing was changed", c.Path, err)
	}
	if dec.Ours {
		delete(got, "sandbox_mode")
		if _, table := user["sandbox_workspace_write"]; !table {
			delete(got, "sandbox_workspace_write")
		}
	}
	if !reflect.DeepEqual(got, user) {
		return c, dec, fmt.Errorf("%s: Codex's sandbox could not be set without touching the rest; nothing was changed", c.Path)
	}
	switch {
	case out == text:
		return c, dec, nil
	case strings.TrimSpace(out) == "" && c.Before != nil:
		c.After, c.Delete = nil, true
	case strings.TrimSpace(out) == "":
		c.After, c.Delete = nil, false
	default:
		c.After, c.Delete = []byte(out), false
	}
	return c, dec, nil
}

// CodexSandboxOf reads what a Codex config.toml says of the sandbox (for
// doctor): the mode it names ("" when none) and whether it is ours.
func CodexSandboxOf(path string) (CodexSandbox, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return CodexSandbox{}, err
	}
	m := map[string]any{}
	if err := decodeTOML(string(data), &m); err != nil {
		return CodexSandbox{}, err
	}
	mode, _ := m["sandbox_mode"].(string)
	return CodexSandbox{Mode: mode, Ours: strings.Contains(string(data), codexSandboxBegin+"\n")}, nil
}

// CodexSandboxError is Codex's own sandbox, on, failing to run even a
// harmless command: every shell call the agent makes would fail the same
// way.
type CodexSandboxError struct {
	// Said is what Codex printed (its last lines).
	Said string
	// Cause is why, when laserbrain can tell; Fix, what to do then.
	Cause, Fix string
}

func (e *CodexSandboxError) Error() string {
	msg := "Codex's sandbox runs no command here: " + e.Said
	if e.Cause != "" {
		msg += "; " + e.Cause
	}
	return msg
}

// CodexSandboxRuns runs one harmless command (/bin/true) in o.Dir under
// Codex's own sandbox, as Codex runs the agent's shell: in mode, or in
// Codex's default when mode is "". It returns nil when the command ran, a
// *CodexSandboxError when the sandbox would not run it, another error when
// codex itself could not be asked.
//
// The case it is for: a bwrap on PATH without --argv0 (Debian 12's
// bubblewrap 0.8.0). Codex prefers it to the bwrap it bundles, and then
// starts its sandbox helper by name, codex-linux-sandbox, from aliases it
// keeps in CODEX_HOME; it makes none when CODEX_HOME lies under the
// temporary directory, and every shell call fails "bwrap: execvp
// codex-linux-sandbox: No such file or directory".
func CodexSandboxRuns(ctx context.Context, o CodexOptions, mode string) error {
	ctx, cancel := context.WithTimeout(ctx, CodexTimeout)
	defer cancel()
	args := []string{"sandbox"}
	args = append(args, o.args()...)
	if mode != "" {
		args = append(args, "-c", "sandbox_mode="+tomlString(mode))
	}
	args = append(args, "--", "/bin/true")
	cmd := exec.CommandContext(ctx, o.Bin, args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		return fmt.Errorf("%s sandbox: %w", o.Bin, err)
	}
	e := &CodexSandboxError{}
	said := out.String()
	if e.Cause, e.Fix = codexSandboxCause(ctx, said, o.Env); e.Cause != "" {
		// The cause quotes Codex's warning about its aliases already.
		said = dropLines(said, "could not create PATH aliases: ")
	}
	if e.Said = lastLines(said, 3); e.Said == "" {
		e.Said = "exit " + strconv.Itoa(exit.ExitCode()) + ", nothing said"
	}
	return e
}

// codexSandboxCause says why Codex's helper was not found, when the bwrap
// first on the PATH Codex runs with has no --argv0.
func codexSandboxCause(ctx context.Context, said string, env []string) (cause, fix string) {
	if !strings.Contains(said, "execvp codex-linux-sandbox") {
		return "", ""
	}
	bwrap := lookPathIn("bwrap", envValue(env, "PATH"))
	if bwrap == "" {
		return "", ""
	}
	help, _ := exec.CommandContext(ctx, bwrap, "--help").CombinedOutput()
	if strings.Contains(string(help), "--argv0") {
		return "", ""
	}
	cause = "the bwrap first on PATH, " + bwrap + ", has no --argv0, so Codex starts its sandbox helper by name, from the aliases it keeps in CODEX_HOME"
	for _, l := range strings.Split(said, "\n") {
		if _, why, ok := strings.Cut(l, "could not create PATH aliases: "); ok {
			cause += ", and it made none (" + strings.TrimSpace(why) + ")"
			break
		}
	}
	fix = "run Codex with a CODEX_HOME outside the temporary directory (its default, ~/.codex, is), or put a bwrap that has --argv0 first on PATH; the sandbox stays on meanwhile, and the agent's shell runs nothing"
	return cause, fix
}

// lookPathIn finds an executable file name in a PATH value.
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// envValue is KEY's value in env (the last one, as exec reads it).
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// dropLines is s without the lines that contain sub.
func dropLines(s, sub string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, sub) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// lastLines is s's last n non-empty lines, joined by " / ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// CodexSandboxMode is the sandbox_mode Codex runs with for a project: the
// project's .codex/config.toml, else the user's config.toml; "" when
// neither names one (Codex's own default).
func CodexSandboxMode(o Options) string {
	for _, scope := range []Scope{Project, User} {
		o.Client, o.Scope = client.Codex, scope
		f, err := Locate(o)
		if err != nil {
			continue
		}
		if sb, err := CodexSandboxOf(f.MCP); err == nil && sb.Mode != "" {
			return sb.Mode
		}
	}
	return ""
}
