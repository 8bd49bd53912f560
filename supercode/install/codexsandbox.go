package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
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
	// Mode is the sandbox the config gives the agent's shell after the
	// change, in sandbox_mode's words (a permissions profile read as the
	// mode it extends: ":workspace" is workspace-write); Ours says
	// laserbrain wrote it (false: the user's own, kept as it is).
	Mode string
	Ours bool
	// Profile is the permissions profile the config selects
	// (default_permissions), "" when it names a sandbox_mode or nothing.
	Profile string
	// TmpExcluded: /tmp and $TMPDIR are left out of the writable roots,
	// for a protected path lies below one of them.
	TmpExcluded bool
}

// CodexProfile is the permissions profile install codex writes and
// selects: Codex's :workspace, with the credential places unreadable and
// the protected paths read-only.
const CodexProfile = "laserbrain"

// codexSandboxBlock is our block. Where the user keeps a
// [sandbox_workspace_write] of their own (settings only the older
// sandbox_mode reads), it names workspace-write beside it. Otherwise it
// selects a permissions profile of ours (Codex takes one or the other,
// never both): Codex's :workspace — writes in the workspace and the
// temporary directories (/tmp and $TMPDIR read-only when excludeTmp),
// .git and .codex held —, each credential place unreadable ("none") and
// each protected path read-only. Only the ones that exist are named: for
// an absent one Codex 0.171.0 binds a placeholder, and its bubblewrap then
// fails every command when the placeholder's directory is absent too
// ("Can't bind mount … No such file or directory"). Dotted keys keep it
// all top-level, at the top of the file.
func codexSandboxBlock(legacy, excludeTmp bool, protect, credentials, hosts []string) string {
	var b strings.Builder
	b.WriteString(codexSandboxBegin + "\n")
	if legacy {
		b.WriteString("sandbox_mode = \"workspace-write\"\n")
		b.WriteString(codexSandboxEnd + "\n")
		return b.String()
	}
	fs := "permissions." + CodexProfile + ".filesystem."
	b.WriteString("default_permissions = " + tomlString(CodexProfile) + "\n")
	b.WriteString("permissions." + CodexProfile + ".extends = \":workspace\"\n")
	if excludeTmp {
		b.WriteString(fs + "\":slash_tmp\" = \"read\"\n")
		b.WriteString(fs + "\":tmpdir\" = \"read\"\n")
	}
	hidden := present(credentials)
	seen := map[string]bool{}
	for _, p := range present(protect) {
		if !slices.Contains(hidden, p) && !seen[p] {
			seen[p] = true
			b.WriteString(fs + tomlString(p) + " = \"read\"\n")
		}
	}
	for _, p := range hidden {
		if !seen[p] {
			seen[p] = true
			b.WriteString(fs + tomlString(p) + " = \"none\"\n")
		}
	}
	if len(hosts) > 0 {
		// The network on, through Codex's own proxy, to these hosts
		// alone (at every port: its domain rules name hosts).
		b.WriteString("permissions." + CodexProfile + ".network.enabled = true\n")
		for _, h := range hosts {
			b.WriteString("permissions." + CodexProfile + ".network.domains." + tomlString(h) + " = \"allow\"\n")
		}
		b.WriteString("features.network_proxy = true\n")
	}
	b.WriteString(codexSandboxEnd + "\n")
	return b.String()
}

// codexHosts are the hosts of o's policy endpoints Codex's proxy lets the
// shell reach: at the project scope alone (the user's config serves every
// project), and none where the user keeps a [features] table (our
// features.network_proxy beside it would not be valid TOML).
func codexHosts(o Options, user map[string]any) []string {
	if o.Scope != Project {
		return nil
	}
	if _, ok := user["features"]; ok {
		return nil
	}
	var out []string
	for _, e := range o.Hosts {
		if i := strings.LastIndexByte(e, ':'); i > 0 {
			if h := strings.Trim(e[:i], "[]"); !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// present are the absolute paths among paths that exist, cleaned.
func present(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// codexModeOf is the sandbox_mode a permissions profile stands for: a
// built-in one by name, ours by the one it extends; "" for any other.
func codexModeOf(profile string) string {
	switch profile {
	case ":workspace", CodexProfile:
		return "workspace-write"
	case ":read-only":
		return "read-only"
	case ":danger-full-access":
		return "danger-full-access"
	}
	return ""
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
// takes it out). A config that names its own sandbox_mode or permissions
// profile keeps it, and one with its own [sandbox_workspace_write] keeps
// that: laserbrain never replaces a person's choice, stricter or not. The
// result is read back: apart from our keys it must mean what it meant.
//
// userMode is the sandbox a layer below c names (the user's config.toml,
// for a project's .codex/config.toml): a project layer would override it,
// so none is written there either.
func editCodexSandbox(c Change, o Options, userMode string) (Change, CodexSandbox, error) {
	var dec CodexSandbox
	text := string(c.After)
	if c.After == nil && !c.Delete {
		text = string(c.Before)
	}
	rest, err := withoutOurBlock(c.Path, text)
	if err != nil {
		return c, dec, err
	}
	user := map[string]any{}
	if err := decodeTOML(rest, &user); err != nil {
		return c, dec, fmt.Errorf("%s is not valid TOML (fix it by hand; nothing was changed): %w", c.Path, err)
	}
	out := rest
	mode, named := user["sandbox_mode"].(string)
	profile, chosen := user["default_permissions"].(string)
	_, table := user["sandbox_workspace_write"]
	switch {
	case named:
		dec.Mode = mode // the person's own choice
	case chosen:
		dec.Mode, dec.Profile = codexModeOf(profile), profile
	case userMode != "":
		dec.Mode = userMode // theirs, in the user's own config
	case !o.Remove:
		dec.Mode, dec.Ours = "workspace-write", true
		if !table {
			dec.Profile = CodexProfile
			dec.TmpExcluded = underTmp(o.Protect, o.getenv("TMPDIR"))
		}
		var hosts []string
		if !table {
			hosts = codexHosts(o, user)
		}
		block := codexSandboxBlock(table, dec.TmpExcluded, o.Protect, o.Credentials, hosts)
		if strings.TrimSpace(rest) != "" {
			block += "\n"
		}
		out = block + rest
	}
	if err := sameApartFromOurs(c.Path, out, user, dec.Ours); err != nil {
		return c, dec, err
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

// withoutOurBlock is text with our sandbox block (and the blank line
// install put after it) taken out.
func withoutOurBlock(path, text string) (string, error) {
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
		return "", fmt.Errorf("%s: laserbrain's sandbox block has no end line; edit it by hand (nothing was changed)", path)
	}
	if begin < 0 {
		return text, nil
	}
	after := lines[end+1:]
	if len(after) > 0 && strings.TrimSpace(after[0]) == "" {
		after = after[1:]
	}
	return strings.Join(lines[:begin], "") + strings.Join(after, ""), nil
}

// sameApartFromOurs checks that out, read as Codex reads it, means what
// the user's config meant but for the keys our block sets.
func sameApartFromOurs(path, out string, user map[string]any, ours bool) error {
	got := map[string]any{}
	if err := decodeTOML(out, &got); err != nil {
		return fmt.Errorf("%s: adding Codex's sandbox would not leave valid TOML (%v); nothing was changed", path, err)
	}
	if ours {
		delete(got, "sandbox_mode")
		delete(got, "default_permissions")
		if f, ok := got["features"].(map[string]any); ok {
			delete(f, "network_proxy")
			if _, theirs := user["features"]; !theirs && len(f) == 0 {
				delete(got, "features")
			}
		}
		if perms, ok := got["permissions"].(map[string]any); ok {
			delete(perms, CodexProfile)
			if _, theirs := user["permissions"]; !theirs && len(perms) == 0 {
				delete(got, "permissions")
			}
		}
	}
	if !reflect.DeepEqual(got, user) {
		return fmt.Errorf("%s: Codex's sandbox could not be set without touching the rest; nothing was changed", path)
	}
	return nil
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
	sb := CodexSandbox{Ours: strings.Contains(string(data), codexSandboxBegin+"\n")}
	if mode, ok := m["sandbox_mode"].(string); ok {
		sb.Mode = mode
	} else if p, ok := m["default_permissions"].(string); ok {
		sb.Mode, sb.Profile = codexModeOf(p), p
	}
	return sb, nil
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
