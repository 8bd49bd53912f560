package client

import (
	"path/filepath"
	"slices"
	"strings"
)

// Binary is client n's program, by the name it installs as ("" for no
// client): each installs under its Name. A switch, not a map: a map is
// built at package init, in every hook process.
func Binary(n Name) string {
	switch n {
	case Claude, Codex, Gemini, Qwen, OpenCode, Cline, Copilot:
		return string(n)
	}
	return ""
}

// Detect is the client a command runs, by its program's base name.
func Detect(program string) (Name, bool) {
	base := filepath.Base(program)
	for _, n := range Names {
		if base == Binary(n) {
			return n, true
		}
	}
	return "", false
}

// Headless says why a client's command line asks nobody — its own
// non-interactive mode, in which a question to a person is a refusal —
// or "" when it does not say: claude -p/--print, codex exec, gemini and
// qwen -p/--prompt, opencode run, cline --json or a task given on the
// command line, copilot -p/--prompt.
func Headless(n Name, args []string) string {
	has := func(flags ...string) bool {
		return slices.ContainsFunc(args, func(a string) bool {
			for _, f := range flags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return true
				}
			}
			return false
		})
	}
	first := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			first = a
			break
		}
	}
	switch n {
	case Claude:
		if has("-p", "--print") {
			return "claude -p (print mode) asks nobody"
		}
	case Codex:
		if first == "exec" || first == "e" {
			return "codex exec asks nobody"
		}
	case Gemini, Qwen:
		if has("-p", "--prompt") {
			return string(n) + " -p (headless mode) asks nobody"
		}
	case OpenCode:
		if first == "run" {
			return "opencode run asks nobody"
		}
	case Cline:
		if has("--json") {
			return "cline --json asks nobody"
		}
	case Copilot:
		if has("-p", "--prompt") {
			return "copilot -p asks nobody"
		}
	}
	return ""
}
