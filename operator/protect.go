package operator

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/operator/shell"
)

// What supervision relies on. Writes into the first three are refused
// outright — no authorization lets an agent write them — and into the
// rest need a person's authorization. Names are matched in any case
// (.GIT is .git on a case-insensitive file system), and a pattern the
// shell expands (.g*) matches what it may expand to.
const (
	// ProtectedPonder: a ledger line forged by an agent would buy
	// coverage the audit never did; only ponder writes .ponder/.
	ProtectedPonder = "ponder's session files"
	// ProtectedFleet: the supervisor's halts, the people's
	// authorizations and the journal, in the laserbrain home. An agent
	// that could delete a halt would release itself; one that could
	// write an authorization would grant itself one.
	ProtectedFleet = "the supervisor's records (halts, authorizations, journal)"
	// ProtectedPolicy: the project policy a person commits; an agent that
	// wrote it would set its own rules.
	ProtectedPolicy = "the project's laserbrain policy (.laserbrain/)"
	ProtectedGit    = "inside a repository's .git"
	ProtectedClaude = "Claude Code settings, which hold the hooks"
	ProtectedClient = "an agent client's settings, which hold the hooks"
	ProtectedMCP    = "the project's MCP servers (.mcp.json)"
	ProtectedHome   = "laserbrain's own state"
	ProtectedExtra  = "a path the project policy protects"
)

// Outright reports whether a write into what is never authorizable.
func Outright(what string) bool {
	return what == ProtectedPonder || what == ProtectedFleet || what == ProtectedPolicy
}

// holdsHooks reports whether a path's last components name one of the
// agent clients' files that hold their hooks or MCP servers (what an agent
// that rewrote it could switch its own supervision off with), as the
// clients keep them: Claude Code's .claude/settings*.json,
// .mcp.json and ~/.claude.json; Gemini CLI's and Qwen Code's
// settings.json; Codex's config.toml and hooks.json; opencode's plugins
// and opencode.json; Cline's hooks and cline_mcp_settings.json; Copilot
// CLI's .github/hooks, .github/copilot settings and ~/.copilot files.
func holdsHooks(parts []string, nameIs func(part, name string) bool) bool {
	n := len(parts)
	if n < 1 {
		return false
	}
	base, dir, up := parts[n-1], "", ""
	if n >= 2 {
		dir = parts[n-2]
	}
	if n >= 3 {
		up = parts[n-3]
	}
	is := nameIs
	switch {
	case is(base, ".mcp.json"), is(base, ".claude.json"), is(base, "cline_mcp_settings.json"):
		return true
	case is(dir, ".gemini") && is(base, "settings.json"), is(dir, ".qwen") && is(base, "settings.json"):
		return true
	case is(dir, ".codex") && (is(base, "config.toml") || is(base, "hooks.json")):
		return true
	case (is(dir, "plugin") || is(dir, "plugins")) && (is(up, ".opencode") || is(up, "opencode")),
		strings.HasPrefix(strings.ToLower(base), "opencode.json"):
		return true
	case is(dir, "hooks") && (is(up, ".clinerules") || is(up, ".cline")):
		return true
	case is(dir, "hooks") && is(up, ".github") && strings.HasSuffix(strings.ToLower(base), ".json"),
		is(dir, "copilot") && is(up, ".github") && strings.HasPrefix(strings.ToLower(base), "settings"),
		is(dir, ".copilot") && (is(base, "settings.json") || is(base, "mcp-config.json") || is(base, "config.json")):
		return true
	}
	return false
}

// ProtectedPlace reports whether writing p (absolute, or relative to
// where the command runs) touches what supervision relies on, and what. A
// pattern in p matches what it may expand to.
func (pol Policy) ProtectedPlace(p string) (what string, ok bool) {
	return pol.protectedPlace(p, false)
}

// protectedPlace is ProtectedPlace; literal: p's pattern characters are
// its own (a pattern that matched no file is the word itself).
func (pol Policy) protectedPlace(p string, literal bool) (what string, ok bool) {
	if p == "" {
		return "", false
	}
	nameIs := globNameIs
	if literal {
		nameIs = strings.EqualFold
	}
	clean := filepath.ToSlash(filepath.Clean(p))
	parts := strings.Split(clean, "/")
	if n := len(parts); n >= 2 && nameIs(parts[n-2], ".laserbrain") && nameIs(parts[n-1], "policy.json") {
		// The policy file, even where the laserbrain home is the
		// project's .laserbrain.
		return ProtectedPolicy, true
	}
	if pol.Home != "" && filepath.IsAbs(p) {
		home := filepath.ToSlash(filepath.Clean(pol.Home))
		if rel, in := inside(clean, home); in {
			if isFleetRecord(rel) {
				return ProtectedFleet, true
			}
			for _, own := range pol.Own {
				if _, mine := inside(clean, filepath.ToSlash(filepath.Clean(own))); mine {
					return "", false
				}
			}
			return ProtectedHome, true
		}
	}
	for _, part := range parts {
		switch {
		case nameIs(part, ".git"):
			return ProtectedGit, true
		case nameIs(part, ".ponder"):
			return ProtectedPonder, true
		case nameIs(part, ".laserbrain"):
			return ProtectedPolicy, true
		case nameIs(part, ".claude"):
			// All of it (and the directory itself: a rename takes the
			// settings away).
			return ProtectedClaude, true
		}
	}
	if nameIs(parts[len(parts)-1], ".mcp.json") {
		return ProtectedMCP, true
	}
	// A directory that holds one of those files goes with it.
	if holdsHooks(parts, nameIs) || holdsHooksDir(parts, nameIs) || systemPolicy(parts, nameIs) {
		return ProtectedClient, true
	}
	for _, x := range pol.Protected {
		scope := pol.resolveScope(x)
		if scope == "" {
			continue
		}
		if _, in := inside(clean, filepath.ToSlash(scope)); in || globWithin(clean, filepath.ToSlash(scope)) {
			return ProtectedExtra + " (" + x + ")", true
		}
	}
	return "", false
}

// globNameIs: a path component is name, in any case, or a pattern that may
// expand to it.
func globNameIs(part, name string) bool {
	if strings.EqualFold(part, name) {
		return true
	}
	if strings.ContainsAny(part, "*?[") {
		// As the shell expands it: a pattern matches a leading dot only
		// when it spells one.
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(part, ".") {
			return false
		}
		ok, _ := path.Match(strings.ToLower(part), name)
		return ok
	}
	return false
}

// globWithin: a pattern path whose expansion may lie inside base.
func globWithin(p, base string) bool {
	if !strings.ContainsAny(p, "*?[") {
		return false
	}
	pp, bp := strings.Split(p, "/"), strings.Split(base, "/")
	for i := 0; i < len(pp) && i < len(bp); i++ {
		if ok, _ := path.Match(pp[i], bp[i]); !ok {
			return false
		}
	}
	return len(pp) >= len(bp) || strings.Contains(pp[len(pp)-1], "*")
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

// holdsHooksDir: the path is a directory that holds the clients' hook
// files (a rename or delete of .codex, .clinerules/hooks, .github/hooks,
// .opencode/plugin takes them away).
func holdsHooksDir(parts []string, nameIs func(part, name string) bool) bool {
	n := len(parts)
	last := parts[n-1]
	up := ""
	if n >= 2 {
		up = parts[n-2]
	}
	switch {
	case nameIs(last, ".codex"), nameIs(last, ".copilot"), nameIs(last, ".clinerules"), nameIs(last, ".cline"),
		nameIs(last, ".gemini"), nameIs(last, ".qwen"), nameIs(last, ".github"):
		return true
	case nameIs(last, "hooks") && (nameIs(up, ".clinerules") || nameIs(up, ".cline") || nameIs(up, ".github")):
		return true
	case (nameIs(last, "plugin") || nameIs(last, "plugins")) && (nameIs(up, ".opencode") || nameIs(up, "opencode")):
		return true
	case nameIs(last, ".opencode"), nameIs(last, "copilot") && nameIs(up, ".github"):
		return true
	}
	return false
}

// systemPolicyDirs are where the agent clients read their system-wide
// settings — an administrator's policy, read before the user's and the
// project's, which can switch every user's hooks off (Claude Code's
// managed-settings.json, managed-mcp.json and managed-settings.d; Gemini
// CLI's and Qwen Code's settings.json and system-defaults.json; Codex's
// config.toml, managed_config.toml and requirements.toml; opencode's
// managed configuration), on Linux, macOS and Windows, as each client's
// own code names them.
var systemPolicyDirs = [][]string{
	{"etc", "claude-code"}, {"Library", "Application Support", "ClaudeCode"}, {"Program Files", "ClaudeCode"}, {"ProgramData", "ClaudeCode"},
	{"etc", "gemini-cli"}, {"Library", "Application Support", "GeminiCli"}, {"ProgramData", "gemini-cli"},
	{"etc", "qwen-code"}, {"Library", "Application Support", "QwenCode"}, {"ProgramData", "qwen-code"},
	{"etc", "codex"},
	{"etc", "opencode"}, {"Library", "Application Support", "opencode"}, {"ProgramData", "opencode"},
}

// systemPolicy: an absolute path (parts from the root, or from a drive on
// Windows) is one of the system-wide settings directories or inside one.
func systemPolicy(parts []string, nameIs func(part, name string) bool) bool {
	if len(parts) < 2 || parts[0] != "" && !strings.HasSuffix(parts[0], ":") {
		return false
	}
	for _, dir := range systemPolicyDirs {
		if len(parts)-1 < len(dir) {
			continue
		}
		match := true
		for i, name := range dir {
			match = match && nameIs(parts[1+i], name)
		}
		if match {
			return true
		}
	}
	return false
}

// protectedMarkers are the names of protected places a command may write
// without its text showing where (an interpreter's code, a path only the
// shell expands, a program the gate does not know): such a command is not
// cleared.
var protectedMarkers = []string{".git/hooks", ".git/config", ".git/refs", ".git/info", ".claude", ".mcp.json", "LASERBRAIN_HOME",
	".gemini/settings", ".qwen/settings", ".codex/config.toml", ".codex/hooks.json", ".opencode/plugin", "opencode/plugin",
	".clinerules/hooks", ".cline/hooks", ".github/hooks", ".copilot/settings", ".copilot/mcp-config", "cline_mcp_settings", "opencode.json",
	"managed-settings", "managed-mcp", "/etc/claude-code", "/etc/gemini-cli", "/etc/qwen-code", "/etc/codex", "/etc/opencode"}

// protection is what a call writes that is protected.
type protection struct {
	outright, outrightWhy string   // the first write into what is never authorizable
	writes                []string // "PATH (what)" of the other protected writes
	whats                 []string // what each of them is
	writeWhat             string   // what the first protected write is
	unsure                string   // a protected place named where the writes are not all known
}

// protectedWrites reads an analysis's writes against what is protected.
// A command whose writes are not all known and that names a protected
// place is not cleared: .ponder, .laserbrain or a fleet record is refused
// outright, any other place is unknown.
func (pol Policy) protectedWrites(an shell.Analysis) protection {
	var pr protection
	complete := true
	seen := map[string]bool{}
	for _, w := range an.Writes {
		if !w.Known {
			complete = false
		}
		if w.Expanded() {
			continue // its matches are writes of their own
		}
		literal := w.Glob && w.Known && filepath.IsAbs(w.Path)
		for _, p := range []string{w.Path, w.Real} {
			what, ok := pol.protectedPlace(p, literal)
			if !ok {
				continue
			}
			if Outright(what) {
				pr.outright = what
				pr.outrightWhy = writeWhy(an, w.Path)
				return pr
			}
			if pr.writeWhat == "" {
				pr.writeWhat = what
			}
			if key := what + "\x00" + w.Path; !seen[key] {
				seen[key] = true
				pr.writes = append(pr.writes, w.Path+" ("+what+")")
				pr.whats = append(pr.whats, what)
			}
			break
		}
	}
	if complete || an.Tool() != "" {
		return pr
	}
	text := strings.ToLower(an.Command)
	for _, m := range []string{".ponder", ".laserbrain/", ".laserbrain\\", "fleet/halts", "fleet/authorizations", "fleet/journal"} {
		if strings.Contains(text, m) {
			what := ProtectedPonder
			switch {
			case strings.HasPrefix(m, ".laserbrain"):
				what = ProtectedPolicy
			case strings.HasPrefix(m, "fleet/"):
				what = ProtectedFleet
			}
			pr.outright, pr.outrightWhy = what, "the command names it and may write where the gate cannot tell"
			return pr
		}
	}
	markers := protectedMarkers
	if pol.Home != "" {
		markers = append(markers, strings.ToLower(pol.Home))
	}
	for _, x := range pol.Protected {
		markers = append(markers, strings.ToLower(strings.TrimPrefix(x, "./")))
	}
	for _, m := range markers {
		if strings.Contains(text, strings.ToLower(m)) {
			pr.unsure = m
			return pr
		}
	}
	return pr
}

// writeWhy says what would write a protected place.
func writeWhy(an shell.Analysis, p string) string {
	if an.Tool() != "" {
		return an.Tool() + " would write " + p
	}
	return "the command would write " + p
}

// outrightReason is the refusal of a write into what is never
// authorizable.
func outrightReason(what, why string) string {
	switch what {
	case ProtectedPonder:
		return "laserbrain: refused: this file is protected (" + ProtectedPonder + "): " + why + ". Only ponder writes .ponder/ (ponder delta, grade, judge, …): the supervisor judges a session on its ledger, so the ledger must be ponder's own. This is not something a person authorizes for an agent; run the ponder command instead."
	case ProtectedPolicy:
		return "laserbrain: refused: this file is protected (" + ProtectedPolicy + "): " + why + ". The project policy is a person's: it says what the gate lets through, so an agent that wrote it would set its own rules. This is not something a person authorizes for an agent; if the policy should change, tell the user what and why."
	}
	return "laserbrain: refused: this file is protected (" + ProtectedFleet + "): " + why + ". The supervisor's halts, the people's authorizations and the journal are written by laserbrain alone; an agent that could change them would supervise itself. This is not something a person authorizes for an agent; do not retry it in another form, and tell the user if you think a record is wrong."
}
