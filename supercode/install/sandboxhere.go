package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// SandboxHere is whether Claude Code's Bash sandbox can start on this
// machine. It needs bubblewrap (bwrap) and socat on PATH, and bwrap able to
// make its namespaces; without them Claude Code warns and runs Bash
// unsandboxed. So install turns the sandbox on only where it can start,
// and says what to install where it cannot.
type SandboxHere struct {
	// Missing are the programs not on PATH (bwrap, socat).
	Missing []string
	// Broken is what bwrap said when it could not make a sandbox ("" when
	// it could, or is missing).
	Broken string
	// Fix is the one command that lets the sandbox start ("" when it
	// can, or when no command is known: a kernel that refuses bwrap its
	// namespaces).
	Fix string
	// Bundled is a bwrap that works, found where Codex keeps its own ("" when
	// there is none): Codex's bundled bubblewrap serves Claude Code's
	// sandbox too, and a link to it on PATH is how CI provides one.
	Bundled string
}

// OK reports whether the sandbox can start here.
func (h SandboxHere) OK() bool { return len(h.Missing) == 0 && h.Broken == "" }

// Why says why it cannot ("" when it can).
func (h SandboxHere) Why() string {
	switch {
	case len(h.Missing) > 0:
		return strings.Join(h.Missing, " and ") + " not on PATH"
	case h.Broken != "":
		return "bwrap cannot make a sandbox here: " + h.Broken
	}
	return ""
}

// ClaudeSandboxHere looks for what Claude Code's sandbox needs (lookPath:
// nil is exec.LookPath) and runs bwrap once with the namespaces that
// sandbox makes. euid decides whether the fix starts with sudo.
func ClaudeSandboxHere(ctx context.Context, lookPath func(string) (string, error), euid int) SandboxHere {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var h SandboxHere
	bwrap, err := lookPath("bwrap")
	if err != nil {
		h.Missing = append(h.Missing, "bwrap")
	}
	if _, err := lookPath("socat"); err != nil {
		h.Missing = append(h.Missing, "socat")
	}
	if bwrap != "" {
		h.Broken = bwrapBroken(ctx, bwrap)
	}
	if bwrap == "" || h.Broken != "" {
		if b := CodexBundledBwrap(lookPath); b != "" && bwrapBroken(ctx, b) == "" {
			h.Bundled = b
		}
	}
	h.Fix = h.fix(bwrap != "", euid)
	return h
}

// fix is the one command that puts what is missing on PATH: Codex's own
// bwrap linked there when Codex is installed (Debian 12's bubblewrap 0.8.0
// runs Claude Code's sandbox, but on PATH it would break Codex's, which
// prefers it to its own), else the distribution's packages.
func (h SandboxHere) fix(haveBwrap bool, euid int) string {
	if h.OK() || (haveBwrap && h.Broken != "" && h.Bundled == "") {
		return ""
	}
	sudo := ""
	if euid != 0 {
		sudo = "sudo "
	}
	var cmds, pkgs []string
	needBwrap := !haveBwrap || h.Broken != ""
	if needBwrap && h.Bundled == "" {
		pkgs = append(pkgs, "bubblewrap")
	}
	for _, m := range h.Missing {
		if m == "socat" {
			pkgs = append(pkgs, "socat")
		}
	}
	if len(pkgs) > 0 {
		cmds = append(cmds, sudo+"apt-get install "+strings.Join(pkgs, " "))
	}
	if needBwrap && h.Bundled != "" {
		cmds = append(cmds, sudo+"ln -sf "+shellArg(h.Bundled)+" /usr/local/bin/bwrap")
	}
	return strings.Join(cmds, " && ")
}

func shellArg(s string) string {
	if strings.ContainsAny(s, " '\"\\$`!*?[]{}()<>|&;#~") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// bwrapBroken runs bwrap with the namespaces Claude Code's sandbox asks
// for (its own session, process and network namespaces, / read-only) and
// returns what it said when that failed ("" when it ran).
func bwrapBroken(ctx context.Context, bwrap string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, "--new-session", "--die-with-parent", "--unshare-pid", "--unshare-net",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/sh", "-c", ":")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		return msg
	}
	return ""
}

// CodexBundledBwrap is the bwrap Codex's npm package carries, found from a
// codex on PATH ("" when there is none): its platform package sits beside
// it or in its own node_modules.
func CodexBundledBwrap(lookPath func(string) (string, error)) string {
	codex, err := lookPath("codex")
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(codex); err == nil {
		codex = r
	}
	pkg := filepath.Dir(filepath.Dir(codex)) // …/@openai/codex (bin/codex.js)
	for _, pattern := range []string{
		filepath.Join(filepath.Dir(pkg), "codex-linux-*", "vendor", "*", "codex-resources", "bwrap"),
		filepath.Join(pkg, "node_modules", "@openai", "codex-linux-*", "vendor", "*", "codex-resources", "bwrap"),
	} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return m
			}
		}
	}
	return ""
}
