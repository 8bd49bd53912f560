package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/supercode/client"
)

// Scope is which of a client's settings layers laserbrain is installed
// into.
type Scope string

// The scopes. Every client has project and user; local is Claude Code's
// alone.
const (
	Project Scope = "project" // the project's own settings, shared with the repository
	Local   Scope = "local"   // Claude Code: .claude/settings.local.json; the MCP server in ~/.claude.json for this project
	User    Scope = "user"    // the user's settings, for every project
)

// Options say what to install where.
type Options struct {
	// Client is the agent client ("": Claude Code).
	Client client.Name
	Scope  Scope
	Dir    string // the project directory (project and local scopes)
	Home   string // the user's home directory
	// Self is the absolute path of the laserbrain binary the hooks and the
	// MCP server run as.
	Self string
	// Remove uninstalls instead.
	Remove bool
	// Getenv reads the variables that move a client's settings (CODEX_HOME,
	// XDG_CONFIG_HOME, COPILOT_HOME, CLINE_DIR, …); nil: none set.
	Getenv func(string) string
	// Protect are the paths supervision stands on (as RunOptions.Protect):
	// for Claude Code, its permissions.deny keeps its own file tools off
	// them (ClaudeDeny), beside the gate, never instead. At the user scope
	// the paths inside Dir are left out (they are one project's). Claude
	// Code's sandbox, which install turns on for its Bash, denies writes to
	// the same paths (it reads the Edit deny rules).
	Protect []string
	// NoClaudeSandbox says why Claude Code's sandbox cannot start here
	// (SandboxHere.Why; "" when it can): install then turns it on nowhere
	// — Claude Code would warn and run Bash unsandboxed — and leaves one
	// already there as it is.
	NoClaudeSandbox string
	// Credentials are the places credentials are kept in the user's home
	// (the ones laserbrain run's boundary masks): Claude Code's Read tool,
	// and its sandboxed Bash, which reads the Read deny rules, are kept
	// from reading them (ClaudeReadDeny).
	Credentials []string
	// Hosts are the endpoints the project's policy lets the agent reach
	// (boundary.connect: host:port, *.domain:port). At the project and
	// local scopes Claude Code's sandbox lets its Bash reach them without
	// asking (sandbox.network.allowedDomains), and at the project scope
	// Codex's proxy lets its shell reach their hosts; the user scope, which
	// every project shares, gets none.
	Hosts []string
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// Change is one file's new content.
type Change struct {
	Path   string
	Before []byte // nil when the file does not exist
	After  []byte
	Mode   fs.FileMode
	// Delete: the file is removed (an uninstall left a project file that
	// configures nothing).
	Delete bool
}

// Changed reports whether the file would change.
func (c Change) Changed() bool {
	if c.Delete {
		return c.Before != nil
	}
	return c.Before == nil && c.After != nil || !bytes.Equal(c.Before, c.After)
}

// State says what Apply does to the file: created, updated, removed or
// unchanged.
func (c Change) State() string {
	switch {
	case !c.Changed():
		return "unchanged"
	case c.Delete:
		return "removed"
	case c.Before == nil:
		return "created"
	}
	return "updated"
}

// Diff is a unified diff of the change ("" when none).
func (c Change) Diff() string {
	if !c.Changed() {
		return ""
	}
	return string(diff.Diff(c.Path, c.Before, c.Path, c.After))
}

// Claude computes the changes that install (or remove) laserbrain's hooks
// and MCP server in Claude Code's settings for a scope. Nothing is written;
// Apply writes them.
func Claude(o Options) ([]Change, error) {
	if !filepath.IsAbs(o.Self) {
		return nil, fmt.Errorf("the laserbrain path %q is not absolute (hooks must not depend on PATH)", o.Self)
	}
	var settingsPath, mcpPath string
	var mcpKeys []string // where the server entry goes inside the MCP file
	switch o.Scope {
	case Project:
		settingsPath = filepath.Join(o.Dir, ".claude", "settings.json")
		mcpPath, mcpKeys = filepath.Join(o.Dir, ".mcp.json"), []string{"mcpServers"}
	case Local:
		settingsPath = filepath.Join(o.Dir, ".claude", "settings.local.json")
		mcpPath, mcpKeys = filepath.Join(o.Home, ".claude.json"), []string{"projects", o.Dir, "mcpServers"}
	case User:
		settingsPath = filepath.Join(o.Home, ".claude", "settings.json")
		mcpPath, mcpKeys = filepath.Join(o.Home, ".claude.json"), []string{"mcpServers"}
	default:
		return nil, fmt.Errorf("scope %q: use project, local or user", o.Scope)
	}
	settings, err := edit(settingsPath, func(root *node) error {
		if err := mergeGroupedHooks(root, client.Claude, o.Self, o.Remove, settingsPath); err != nil {
			return err
		}
		if err := mergeList(root, []string{"permissions"}, "deny", ClaudeDenyFor(o), o.Remove, settingsPath); err != nil {
			return err
		}
		if err := mergeClaudeSandbox(root, below(o), o.Remove, o.NoClaudeSandbox != "", settingsPath); err != nil {
			return err
		}
		if o.Scope != User {
			// The hosts Claude Code's sandbox lets the agent reach.
			if err := mergeList(root, []string{"sandbox", "network"}, "allowedDomains", o.Hosts, o.Remove, settingsPath); err != nil {
				return err
			}
		}
		if o.Scope == Project {
			// A project's .mcp.json servers wait for approval; naming ours
			// here approves it.
			return mergeEnabled(root, o.Remove, settingsPath)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	entry := fromValue(orderedMap{{"type", "stdio"}, {"command", o.Self}, {"args", []string{"mcp"}}})
	mcp, err := edit(mcpPath, func(root *node) error { return mergeServer(root, mcpKeys, entry, o.Self, o.Remove, mcpPath) })
	if err != nil {
		return nil, err
	}
	if o.Remove {
		// The project's own files that configure nothing once ours are
		// out go (~/.claude.json and the user's settings stay: Claude
		// Code keeps more there).
		if o.Scope != User {
			settings = dropIfEmpty(settings)
		}
		if o.Scope == Project {
			mcp = dropIfEmpty(mcp)
		}
	}
	return []Change{settings, mcp}, nil
}

// dropIfEmpty turns a change that leaves {} — or {"mcpServers": {}}, or
// opencode's {"mcp": {}} — into
// the file's removal: an empty settings file or an .mcp.json without
// servers configures nothing, and is what install itself would have
// created.
func dropIfEmpty(c Change) Change {
	if c.After == nil {
		return c
	}
	root, err := parseJSON(c.After)
	if err != nil || root.kind != '{' {
		return c
	}
	for _, k := range []string{"mcpServers", "mcp"} {
		if s := root.get(k); s != nil && s.kind == '{' && len(s.members) == 0 {
			root.del(k)
		}
	}
	if len(root.members) == 0 {
		c.After, c.Delete = nil, true
	}
	return c
}

// edit reads a JSON settings file (a missing or empty one is {}), applies f
// and renders the result. A file that is not a JSON object is an error, and
// nothing is written.
func edit(path string, f func(*node) error) (Change, error) {
	c, err := current(path)
	if err != nil {
		return c, err
	}
	root := &node{kind: '{'}
	if data := c.Before; len(bytes.TrimSpace(data)) > 0 {
		if root, err = parseJSON(data); err != nil {
			return c, fmt.Errorf("%s is not valid JSON (fix it by hand; nothing was changed): %w", path, err)
		}
		if root.kind != '{' {
			return c, fmt.Errorf("%s does not hold a JSON object (nothing was changed)", path)
		}
	}
	if err := f(root); err != nil {
		return c, err
	}
	if c.Before == nil && len(root.members) == 0 {
		return c, nil // removing from a file that does not exist: nothing to write
	}
	c.After = render(root)
	if c.Before != nil && bytes.Equal(bytes.TrimSpace(c.After), bytes.TrimSpace(c.Before)) {
		c.After = c.Before // same content: not a byte changes, not even a trailing newline
	}
	return c, nil
}

// current is the change to path before anything is changed: the file's
// bytes (nil when there is none) and its mode (0644 for a new file).
func current(path string) (Change, error) {
	c := Change{Path: path, Mode: 0o644}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return c, err
	default:
		c.Before = data
		if fi, err := os.Stat(path); err == nil {
			c.Mode = fi.Mode().Perm()
		}
	}
	return c, nil
}

// mergeServer sets (or removes) mcpServers.laserbrain at keys.
func mergeServer(root *node, keys []string, entry *node, self string, remove bool, path string) error {
	chain, err := root.objectsAt(keys, path, remove)
	if chain == nil {
		return err
	}
	cur := chain[len(chain)-1]
	if remove {
		if s := cur.get(client.ServerName); s != nil && serverIsOurs(s, self) {
			cur.del(client.ServerName)
			dropEmptied(chain, keys)
		}
		return nil
	}
	cur.set(client.ServerName, entry)
	return nil
}

// serverIsOurs: an MCP server entry runs a program named laserbrain (or
// self), as a command string or an argv's first word.
func serverIsOurs(s *node, self string) bool {
	cmd, _ := s.get("command").str()
	if c := s.get("command"); c != nil && c.kind == '[' && len(c.items) > 0 {
		cmd, _ = c.items[0].str()
	}
	return filepath.Base(cmd) == "laserbrain" || cmd == self
}

// ClaudeDenyFor are the permissions.deny rules install writes for o's
// scope: ClaudeDeny of o.Protect, at the user scope without the paths in
// o.Dir, and ClaudeReadDeny of o.Credentials.
func ClaudeDenyFor(o Options) []string {
	protect := o.Protect
	if o.Scope == User {
		protect = outside(protect, o.Dir)
	}
	return append(ClaudeDeny(protect), ClaudeReadDeny(o.Credentials)...)
}

// outside are the paths not at or below dir.
func outside(paths []string, dir string) []string {
	var out []string
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); dir == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	return out
}

// mergeList adds (or removes) ours in the list of strings at keys, then
// key (permissions.deny, sandbox.network.allowedDomains): the user's
// entries stay where they are, ours already there stay in place, the
// missing ones go at the end. Removing takes out exactly ours, and the
// list and the objects above it when that leaves them empty (a user's own
// empty list stays).
func mergeList(root *node, keys []string, key string, ours []string, remove bool, path string) error {
	if len(ours) == 0 {
		return nil
	}
	chain, err := root.objectsAt(keys, path, remove)
	if chain == nil {
		return err
	}
	parent := chain[len(keys)]
	dropped, empty, err := mergeStrings(parent, key, ours, remove, strings.Join(keys, ".")+"."+key, path)
	if err != nil {
		return err
	}
	if remove && dropped > 0 && empty {
		parent.del(key)
		dropEmptied(chain, keys)
	}
	return nil
}

// mergeEnabled approves (or un-approves) our .mcp.json server in the
// project's settings.
func mergeEnabled(root *node, remove bool, path string) error {
	_, empty, err := mergeStrings(root, "enabledMcpjsonServers", []string{"laserbrain"}, remove, "enabledMcpjsonServers", path)
	if err != nil {
		return err
	}
	if remove && empty {
		root.del("enabledMcpjsonServers")
	}
	return nil
}

// mergeStrings puts each of ours once into the list of strings at
// parent[key] — the user's entries stay where they are, ours already there
// stay in place (a second copy goes), the missing ones go at the end — or,
// with remove, takes every copy of ours out. It reports how many of ours
// it took out and whether the list is left empty; a list that is missing
// is made (not when removing), one that is not a list is an error naming
// what and path, and nothing is changed.
func mergeStrings(parent *node, key string, ours []string, remove bool, what, path string) (dropped int, empty bool, err error) {
	list := parent.get(key)
	if list == nil {
		if remove {
			return 0, false, nil
		}
		list = &node{kind: '['}
		parent.set(key, list)
	}
	if list.kind != '[' {
		return 0, false, fmt.Errorf("%s: %s is not a list; fix it by hand (nothing was changed)", path, what)
	}
	mine := map[string]bool{}
	for _, r := range ours {
		mine[r] = true
	}
	have := map[string]bool{}
	kept := list.items[:0:0]
	for _, it := range list.items {
		s, _ := it.str()
		if mine[s] && (remove || have[s]) {
			dropped++
			continue
		}
		have[s] = true
		kept = append(kept, it)
	}
	if !remove {
		for _, r := range ours {
			if !have[r] {
				kept = append(kept, &node{kind: 's', scalar: r})
				have[r] = true
			}
		}
	}
	list.items = kept
	return dropped, len(kept) == 0, nil
}

// Apply writes the changes that change something, each file replaced whole
// (temp file, fsync, rename) with its mode kept. A file that changed on disk
// since Claude read it is not overwritten.
func Apply(changes []Change) error {
	for _, c := range changes {
		if !c.Changed() || c.After == nil && !c.Delete {
			continue
		}
		now, err := os.ReadFile(c.Path)
		if errors.Is(err, fs.ErrNotExist) {
			now = nil
		} else if err != nil {
			return err
		}
		if !bytes.Equal(now, c.Before) {
			return fmt.Errorf("%s changed while it was being edited; run the command again", c.Path)
		}
		if c.Delete {
			if err := os.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := fsx.WriteFile(c.Path, c.After, c.Mode); err != nil {
			return err
		}
	}
	return nil
}
