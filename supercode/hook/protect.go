package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// What supervision relies on, as protectedPath names it. Writes into the
// first two are refused outright — no authorization lets an agent write
// them — and into the rest need a person's authorization.
const (
	// ponderFiles: a ledger line forged by an agent would buy coverage
	// the audit never did; only ponder writes .ponder/.
	ponderFiles = "ponder's session files"
	// fleetRecords: the supervisor's halts, the people's authorizations
	// and the journal, in the laserbrain home. An agent that could delete
	// a halt would release itself; one that could write an authorization
	// would grant itself one.
	fleetRecords = "the supervisor's records (halts, authorizations, journal)"
	gitFiles     = "inside a repository's .git"
	// clientFiles: an agent client's settings holding its hooks or MCP
	// servers (client.HoldsHooks): an agent that rewrote them could take
	// its own hooks out.
	clientFiles = "an agent client's settings, which hold the hooks"
	homeFiles   = "laserbrain's own state"
)

// outright reports whether a write into what is never authorizable.
func outright(what string) bool { return what == ponderFiles || what == fleetRecords }

// protectedPath reports whether writing path (relative to cwd) would touch
// what supervision relies on: a repository's .git, ponder's .ponder session
// files, an agent client's settings that hold the hooks or the MCP servers
// (client.HoldsHooks: .claude/settings*.json, .mcp.json, .gemini/ and
// .qwen/settings.json, .codex/, opencode's plugins, Cline's hooks,
// .github/hooks, …), or laserbrain's own home — whose fleet records
// (halts, authorizations, journal) are a class of their own. Symbolic links
// are followed as far as the path exists.
func protectedPath(path, cwd string) (what, abs string, protected bool) {
	if path == "" {
		return "", "", false
	}
	abs = path
	if !filepath.IsAbs(abs) {
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		abs = filepath.Join(cwd, abs)
	}
	abs = resolve(filepath.Clean(abs))
	if home := laserbrainHome(); home != "" {
		home = resolve(filepath.Clean(home))
		if rel, err := filepath.Rel(home, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if isFleetRecord(filepath.ToSlash(rel)) {
				return fleetRecords, abs, true
			}
			return homeFiles, abs, true
		}
	}
	for _, part := range strings.Split(filepath.ToSlash(abs), "/") {
		switch part {
		case ".git":
			return gitFiles, abs, true
		case ".ponder":
			return ponderFiles, abs, true
		}
	}
	if _, ok := client.HoldsHooks(abs); ok {
		return clientFiles, abs, true
	}
	return "", abs, false
}

// isFleetRecord: rel (inside the laserbrain home) is the home itself, its
// fleet directory, or inside the fleet's halts, authorizations or journal
// — removing or moving any of them removes the records.
func isFleetRecord(rel string) bool {
	switch rel {
	case ".", "fleet":
		return true
	}
	for _, d := range []string{"fleet/halts", "fleet/authorizations", "fleet/journal"} {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// resolve follows symbolic links in the longest existing prefix of p.
func resolve(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// expandPath resolves what a written path's text leaves to the running
// shell, where the hook can know it: a leading ~ (the home directory) and
// $NAME or ${NAME} of a variable set in the hook's environment, which is
// the session's. ok is false when something stays unknown (a variable not
// set here, a command substitution).
func expandPath(p string) (string, bool) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return p, false
		}
		p = home + p[1:]
	}
	if !strings.ContainsAny(p, "$`") {
		return p, true
	}
	if strings.Contains(p, "$(") || strings.Contains(p, "`") || strings.Contains(p, "${") && strings.ContainsAny(p, ":#%/") {
		return p, false
	}
	ok := true
	out := os.Expand(p, func(name string) string {
		v, set := os.LookupEnv(name)
		if !set || v == "" {
			ok = false
			return "$" + name
		}
		return v
	})
	return out, ok
}

// protectedMarkers are the names of protected files a command may write
// without its text showing where (an interpreter's code, find -exec, a
// path only the shell expands): the command is then not cleared.
var protectedMarkers = append([]string{".git/hooks", ".git/config", ".git/refs", "LASERBRAIN_HOME"}, client.HookMarkers...)

// shellWrites reads where a shell command would write (operator.WrittenPaths)
// against what is protected: the first path into what is never
// authorizable (ponder's files, the fleet's records), the protected paths
// it writes, and what the gate could not place — a marker of a protected
// file in a command whose written paths are not all known.
func shellWrites(command, cwd string) (never, neverAbs string, protected []string, unsure string) {
	paths, complete := operator.WrittenPaths(command)
	seen := map[string]bool{}
	for _, path := range paths {
		expanded, known := expandPath(path)
		if !known {
			complete = false
		}
		what, abs, ok := protectedPath(expanded, cwd)
		if !ok && strings.Contains("/"+filepath.ToSlash(path)+"/", "/.ponder/") {
			// The path as written names .ponder even when it does not
			// resolve there yet (a directory made by the same command).
			what, ok = ponderFiles, true
		}
		if !ok {
			continue
		}
		if outright(what) {
			return what, abs, nil, ""
		}
		if key := what + "\x00" + abs; !seen[key] {
			seen[key] = true
			protected = append(protected, abs+" ("+what+")")
		}
	}
	if !complete {
		if strings.Contains(command, ".ponder") {
			return ponderFiles, "", nil, ""
		}
		for _, m := range []string{"fleet/halts", "fleet/authorizations", "fleet/journal"} {
			if strings.Contains(command, m) {
				return fleetRecords, "", nil, ""
			}
		}
		for _, m := range protectedMarkers {
			if strings.Contains(command, m) {
				return "", "", protected, m
			}
		}
		if home := laserbrainHome(); home != "" && strings.Contains(command, home) {
			return "", "", protected, home
		}
	}
	return "", "", protected, ""
}

// refuseOutright denies what no authorization lets an agent do — a person's
// command, a write into ponder's files or the fleet's records — recorded on
// the caller's run like every refusal.
func (h *Handler) refuseOutright(ctx context.Context, e client.Event, reason, label string) client.Answer {
	c := h.caller(e)
	h.recordDecision(ctx, c, e, false, reason, gateFacts{labels: []string{label}}.result(fleet.GateDeny, c, nil))
	return deny(reason)
}

// refuseWrite is the refusal of a write into what is never authorizable.
func (h *Handler) refuseWrite(ctx context.Context, e client.Event, what, why string) client.Answer {
	var reason string
	switch what {
	case ponderFiles:
		reason = "laserbrain: refused: this file is protected (" + ponderFiles + "): " + why + ". Only ponder writes .ponder/ (ponder delta, grade, judge, …): the supervisor judges a session on its ledger, so the ledger must be ponder's own. This is not something a person authorizes for an agent; run the ponder command instead."
	default:
		reason = "laserbrain: refused: this file is protected (" + fleetRecords + "): " + why + ". The supervisor's halts, the people's authorizations and the journal are written by laserbrain alone; an agent that could change them would supervise itself. This is not something a person authorizes for an agent; do not retry it in another form, and tell the user if you think a record is wrong."
	}
	return h.refuseOutright(ctx, e, reason, "protected file: "+what)
}

// writeWhy says what a tool would write (abs "": a command that names the
// place and may write where the gate cannot tell).
func writeWhy(tool, abs string) string {
	if abs == "" {
		return fmt.Sprintf("the %s names it and may write where the gate cannot tell", tool)
	}
	return fmt.Sprintf("the %s would write %s", tool, abs)
}

// Authorizable reports whether a person's authorization of command (run
// in dir) could ever be used by the gate: it is a shell command the gate
// refuses or asks about, or one writing a protected file. A person's
// command, or a write into what is never authorizable, is refused whatever
// is authorized, and a command the gate lets through needs nothing; why
// says which.
func Authorizable(command, dir string) (ok bool, why string) {
	r := operator.ClassifyIn(dir, command, true, false)
	if f, person := r.PersonOnly(); person {
		what := strings.TrimPrefix(f.Label, "parsed: ")
		if i := strings.Index(what, " ("); i >= 0 {
			what = what[:i]
		}
		return false, what + " is a person's command: the gate refuses it to agents whatever is authorized; run it yourself"
	}
	never, abs, writes, unsure := shellWrites(command, dir)
	if never != "" {
		where := never
		if abs != "" {
			where = abs + " (" + never + ")"
		}
		return false, "it writes " + where + ", which no authorization opens to an agent"
	}
	if len(writes) > 0 || unsure != "" || r.Decision != operator.Allow {
		return true, ""
	}
	return false, "the gate does not refuse it (nothing irreversible or outward, no protected file), so there is nothing to authorize"
}
