package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/laserkit/laserkit/supercode/client"
)

// claudeSandboxMark is the key our sandbox settings carry in Claude Code's
// "sandbox" object (which keeps keys it does not know), so that uninstall
// takes out exactly what install put there, and a person can make the
// values their own by deleting it.
const (
	claudeSandboxMark = "laserbrain"
	claudeSandboxNote = "enabled and allowUnsandboxedCommands were set by laserbrain install claude; laserbrain uninstall claude takes them out (delete this key to make them your own)"
)

// The sandbox keys install sets, and the values it sets them to: Bash
// runs under Claude Code's sandbox, and the model cannot ask for a command
// to run outside it (dangerouslyDisableSandbox is then ignored).
var claudeSandboxOurs = []struct {
	key string
	val bool
}{{"enabled", true}, {"allowUnsandboxedCommands", false}}

// ClaudeSandbox is what Claude Code's settings say of its Bash sandbox.
type ClaudeSandbox struct {
	// Path is the settings file that names it ("" when none does).
	Path string
	// Enabled and AllowUnsandboxed are sandbox.enabled and
	// sandbox.allowUnsandboxedCommands as named there (nil: not named).
	Enabled, AllowUnsandboxed *bool
	// Ours: laserbrain's marker stands beside them.
	Ours bool
}

// Named reports whether the settings name a sandbox choice.
func (s ClaudeSandbox) Named() bool { return s.Enabled != nil || s.AllowUnsandboxed != nil }

// On reports whether the settings turn the sandbox on.
func (s ClaudeSandbox) On() bool { return s.Enabled != nil && *s.Enabled }

// Closed reports whether the model cannot ask for a command outside it.
func (s ClaudeSandbox) Closed() bool { return s.AllowUnsandboxed != nil && !*s.AllowUnsandboxed }

// ClaudeSandboxOf reads what one Claude Code settings file says of the
// sandbox (a missing file names none).
func ClaudeSandboxOf(path string) (ClaudeSandbox, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0 {
		return ClaudeSandbox{}, nil
	}
	if err != nil {
		return ClaudeSandbox{}, err
	}
	var v struct {
		Sandbox *struct {
			Enabled          *bool           `json:"enabled"`
			AllowUnsandboxed *bool           `json:"allowUnsandboxedCommands"`
			Mark             json.RawMessage `json:"laserbrain"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return ClaudeSandbox{}, fmt.Errorf("%s: %w", path, err)
	}
	sb := ClaudeSandbox{}
	if v.Sandbox != nil {
		sb.Enabled, sb.AllowUnsandboxed, sb.Ours = v.Sandbox.Enabled, v.Sandbox.AllowUnsandboxed, v.Sandbox.Mark != nil
	}
	if sb.Named() || sb.Ours {
		sb.Path = path
	}
	return sb, nil
}

// claudeLayers are Claude Code's settings files for the project in dir and
// the user's home, the one that wins first (local, project, user).
func claudeLayers(dir, home string) []string {
	var out []string
	for _, sc := range []Scope{Local, Project, User} {
		if f, err := Locate(Options{Client: client.Claude, Scope: sc, Dir: dir, Home: home}); err == nil {
			out = append(out, f.Hooks)
		}
	}
	return out
}

// ClaudeSandboxFor is the sandbox Claude Code runs with in the project dir
// by the settings files of the three layers: enabled as the layer that
// wins names it (Path is that file), and allowUnsandboxedCommands false
// when any layer says so (a false holds whatever another layer says).
func ClaudeSandboxFor(dir, home string) (ClaudeSandbox, error) {
	var out ClaudeSandbox
	first := ""
	for _, p := range claudeLayers(dir, home) {
		sb, err := ClaudeSandboxOf(p)
		if err != nil {
			return out, err
		}
		if first == "" && sb.Named() {
			first = sb.Path
		}
		if out.Enabled == nil && sb.Enabled != nil {
			out.Enabled, out.Path, out.Ours = sb.Enabled, sb.Path, sb.Ours
		}
		if sb.AllowUnsandboxed != nil && (out.AllowUnsandboxed == nil || *out.AllowUnsandboxed) {
			out.AllowUnsandboxed = sb.AllowUnsandboxed
		}
	}
	if out.Path == "" {
		out.Path = first
	}
	return out, nil
}

// below are the settings files a layer of scope overrides: a sandbox
// choice named there is the person's, and install writes none above it.
func below(o Options) []string {
	layers := claudeLayers(o.Dir, o.Home) // local, project, user
	switch o.Scope {
	case Local:
		return layers[1:]
	case Project:
		return layers[2:]
	}
	return nil
}

// mergeClaudeSandbox turns Claude Code's sandbox on in a settings file
// (or, with remove, takes ours out). Nothing is set where the file, or a
// layer it would override (lower), names a sandbox choice of the person's
// own: laserbrain never replaces it, stricter or not. Ours, recognised by
// our marker, is set again as it should be on a reinstall. Where the
// sandbox cannot start (unavailable) none is added; ours, if there, stays.
func mergeClaudeSandbox(root *node, lower []string, remove, unavailable bool, path string) error {
	sb := root.get("sandbox")
	if sb != nil && sb.kind != '{' {
		return fmt.Errorf("%s: sandbox is not an object; fix it by hand (nothing was changed)", path)
	}
	ours := sb != nil && sb.get(claudeSandboxMark) != nil
	if remove {
		if !ours {
			return nil
		}
		for _, k := range claudeSandboxOurs {
			if v := sb.get(k.key); v != nil && v.kind == 's' && v.scalar == k.val {
				sb.del(k.key)
			}
		}
		sb.del(claudeSandboxMark)
		if len(sb.members) == 0 {
			root.del("sandbox")
		}
		return nil
	}
	if !ours {
		if unavailable {
			return nil
		}
		if sb != nil && (sb.get("enabled") != nil || sb.get("allowUnsandboxedCommands") != nil) {
			return nil // the person's own, in this file
		}
		for _, p := range lower {
			if l, err := ClaudeSandboxOf(p); err != nil {
				return fmt.Errorf("the settings below %s: %w", path, err)
			} else if l.Named() && !l.Ours {
				return nil // the person's own, in a layer this one would override
			}
		}
	}
	sb, err := root.objectAt("sandbox", path)
	if err != nil {
		return err
	}
	for _, k := range claudeSandboxOurs {
		sb.set(k.key, &node{kind: 's', scalar: k.val})
	}
	sb.set(claudeSandboxMark, &node{kind: 's', scalar: claudeSandboxNote})
	return nil
}

// claudeRunSandboxOff is the settings layer's sandbox for a claude that
// laserbrain run puts behind the kernel's boundary: Claude Code's own
// bubblewrap cannot start inside it (our Landlock forbids its mounts; as
// root without CAP_SETFCAP it cannot map uid 0 either), so it would warn
// and run Bash unsandboxed anyway — or, with failIfUnavailable, refuse to
// start. The kernel's boundary is the sandbox there.
func claudeRunSandboxOff() map[string]any {
	return map[string]any{"enabled": false}
}
