package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// Client is one real agent CLI the end-to-end tests drive: where the pinned
// version is installed, which API its scripted model speaks, how it is
// configured against that model in a fresh HOME, how it runs one prompt
// headless, and how a scripted turn runs a shell command through its tool.
type Client struct {
	// Name is laserbrain's name for the client (laserbrain install NAME).
	Name string
	// Package and Version are the npm package and the pinned version
	// (scripts/install-agents.sh installs the same).
	Package, Version string
	// CacheDir is the directory under the cache: <cache>/<CacheDir>/<Version>.
	CacheDir string
	// Bin is the executable's name in node_modules/.bin.
	Bin string
	// EnvVar names an explicit binary, overriding the cache (LASERKIT_CODEX…).
	EnvVar string
	// API is what the scripted model must speak.
	API API
	// ShellTool is the name of the client's shell tool as the model calls it.
	ShellTool string

	shell func(id, command string) Turn
	mcp   func(server, tool string) (namespace, name string)
	env   func(s *Session) []string
	setup func(t testing.TB, s *Session)
	args  func(s *Session, prompt string) []string
}

// Shell is a turn that runs command through the client's shell tool, with
// call id id (so a test can find its result).
func (c *Client) Shell(id, command string) Turn { return c.shell(id, command) }

// MCP is a turn that calls tool of the MCP server registered as server,
// spelled the way this client offers it to the model (mcp__S__T, mcp_S_T,
// S_T, S__T, S-T, or Codex's namespace mcp__S holding T), with call id id.
func (c *Client) MCP(id, server, tool string, input any) Turn {
	ns, name := c.mcp(server, tool)
	return Turn{Tools: []ToolUse{{ID: id, Name: name, Input: input, Namespace: ns}}}
}

// MCPToolName is the name this client's hooks see for tool of server.
func (c *Client) MCPToolName(server, tool string) string {
	ns, name := c.mcp(server, tool)
	if ns != "" {
		return ns + "__" + name
	}
	return name
}

// CacheRoot is ${LASERKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/laserkit}:
// where scripts/install-agents.sh installs the clients.
func CacheRoot() string {
	if c := os.Getenv("LASERKIT_CACHE"); c != "" {
		return c
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "laserkit")
}

// CachePath is where scripts/install-agents.sh puts the pinned binary.
func (c *Client) CachePath() string {
	return filepath.Join(CacheRoot(), c.CacheDir, c.Version, "node_modules", ".bin", c.Bin)
}

// Locate finds the client: $EnvVar, else the cache, else Bin on PATH when
// it reports the pinned version. It returns "" and why when there is none.
func (c *Client) Locate() (path, why string) {
	if p := os.Getenv(c.EnvVar); p != "" {
		if !isExecutable(p) {
			return "", fmt.Sprintf("%s=%s is not an executable file", c.EnvVar, p)
		}
		return p, ""
	}
	if p := c.CachePath(); isExecutable(p) {
		return p, ""
	}
	p, err := exec.LookPath(c.Bin)
	if err != nil {
		return "", "not in " + c.CachePath() + " nor on PATH (" + c.EnvVar + " names one)"
	}
	// In a throwaway HOME: some clients write their config on any start.
	home, err := os.MkdirTemp("", "agenttest-version-")
	if err != nil {
		return "", err.Error()
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(p, "--version")
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, _ := cmd.Output()
	if !strings.Contains(string(out), c.Version) {
		return "", fmt.Sprintf("%s reports %q, not %s", p, strings.TrimSpace(string(out)), c.Version)
	}
	return p, ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Require returns the client's binary. Without one the test is skipped
// with a loud banner, or fails when CI=true: CI installs every client
// (scripts/install-agents.sh).
func (c *Client) Require(t testing.TB) string {
	t.Helper()
	p, why := c.Locate()
	if p != "" {
		return p
	}
	outcome := "SKIPPED"
	if testenv.CI() {
		outcome = "FAILING (CI=true)"
	}
	banner := strings.Join([]string{
		"######################################################################",
		"## NO " + strings.ToUpper(c.Name) + " CLI: " + why,
		"## The end-to-end tests with " + c.Package + " are " + outcome + ". Install it with",
		"##   scripts/install-agents.sh " + c.Name + "   (npm, " + c.Package + "@" + c.Version + ")",
		"######################################################################",
	}, "\n")
	fmt.Fprintln(os.Stderr, banner)
	testenv.SkipOrFail(t, "no %s CLI (scripts/install-agents.sh %s): %s", c.Name, c.Name, why)
	return ""
}

// Clients are the seven clients, in the order of the README's table.
var Clients = []*Client{ClaudeCode, Codex, GeminiCLI, QwenCode, OpenCode, Cline, Copilot}

// ClientNamed returns the client laserbrain calls name, or nil.
func ClientNamed(name string) *Client {
	for _, c := range Clients {
		if c.Name == name {
			return c
		}
	}
	return nil
}
