package install

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
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
	if _, err := toml.Decode(rest, &user); err != nil {
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
	if _, err := toml.Decode(out, &got); err != nil {
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
	if _, err := toml.Decode(string(data), &m); err != nil {
		return CodexSandbox{}, err
	}
	mode, _ := m["sandbox_mode"].(string)
	return CodexSandbox{Mode: mode, Ours: strings.Contains(string(data), codexSandboxBegin+"\n")}, nil
}
