package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

// RunOptions describe one client invocation `laserbrain run` starts.
type RunOptions struct {
	Client client.Name
	// Program is the client's program, as found on PATH.
	Program string
	// Args are the user's own arguments (left as they are).
	Args []string
	// Self is the absolute path of the laserbrain binary the hooks and the
	// MCP server run as.
	Self string
	// Dir is the project directory; Home the user's home.
	Dir, Home string
	// Getenv reads the environment the client will run in; Environ is it
	// whole (for codex app-server).
	Getenv  func(string) string
	Environ []string
	// Ctx bounds what Prepare asks other programs (codex app-server).
	Ctx context.Context
	// Protect are the paths supervision stands on (the laserbrain home,
	// the binaries, the clients' settings and hook files, the repository's
	// .git/hooks and .git/config): for a client whose own rules can keep
	// its file tools off them (Claude Code's permissions.deny), they are
	// denied there too — beside the gate and the kernel, never instead.
	Protect []string
	// Confined is set when laserbrain run puts the client behind the
	// kernel's boundary (supercode/confine). A client sandbox of its own
	// that needs namespaces (Codex's bubblewrap) cannot start inside it,
	// so the kernel's boundary is the sandbox there.
	Confined bool
}

func (o RunOptions) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// Prepare writes one client invocation's per-run configuration into tmp (a
// private directory removed when the run ends) and returns the arguments
// to put before the user's and the variables to add. Where the client has
// a layer for one invocation it is used; nothing persistent of the user's
// is changed, but for Codex's trust:
//
//   - claude: a settings layer with our hooks (--settings) and an MCP
//     config with our server (--mcp-config, its tools allowed).
//   - codex: a session layer (-c hooks.EVENT=…, -c mcp_servers.laserbrain=…
//     with env_vars), its hooks trusted through codex app-server — the
//     trust, a hash of our exact commands, is kept in the user's
//     config.toml as Codex keeps all trust.
//   - gemini, qwen: a system settings layer (GEMINI_CLI_SYSTEM_SETTINGS_PATH,
//     QWEN_CODE_SYSTEM_SETTINGS_PATH: the system file, if any, with ours
//     merged in; both clients add hooks of every layer together).
//   - opencode: a config directory of its own (OPENCODE_CONFIG_DIR) with
//     our plugin and server, written whole so that opencode has nothing to
//     write there (it is held read-only to a confined agent).
//   - cline: --hooks-dir with our hook scripts, and CLINE_MCP_SETTINGS_PATH
//     naming a copy of the user's MCP settings with ours added.
//   - copilot: --additional-mcp-config for the server; Copilot CLI has no
//     hook layer for one invocation, so the hooks must be installed
//     (laserbrain install copilot) — without them the run is refused
//     rather than started unsupervised.
func Prepare(o RunOptions, tmp string) (args, env []string, err error) {
	if !filepath.IsAbs(o.Self) {
		return nil, nil, fmt.Errorf("the laserbrain path %q is not absolute (hooks must not depend on PATH)", o.Self)
	}
	switch o.Client {
	case client.Claude:
		args, err := ClaudeFlags(tmp, o.Self, o.Confined, o.Protect...)
		return args, nil, err
	case client.Codex:
		return codexRun(o)
	case client.Gemini, client.Qwen:
		return settingsLayer(o, tmp)
	case client.OpenCode:
		if d := o.getenv("OPENCODE_CONFIG_DIR"); d != "" {
			return nil, nil, fmt.Errorf("OPENCODE_CONFIG_DIR is set (%s): laserbrain run puts its plugin in a config directory of its own; unset it, or laserbrain install opencode and run opencode without laserbrain run", d)
		}
		if err := openCodeConfigDir(tmp, o.Self); err != nil {
			return nil, nil, err
		}
		return nil, []string{"OPENCODE_CONFIG_DIR=" + tmp}, nil
	case client.Cline:
		hooks := filepath.Join(tmp, "hooks")
		var cs []Change
		for _, h := range client.Hooks(client.Cline) {
			c, err := ownFile(filepath.Join(hooks, h.ClientEvent), clineMarker, clineScript(o.Self, h), 0o755, false)
			if err != nil {
				return nil, nil, err
			}
			cs = append(cs, c)
		}
		// The user's servers, and ours.
		mcpPath := filepath.Join(tmp, "cline_mcp_settings.json")
		user := clineMCPSettings(Options{Home: o.Home, Getenv: o.Getenv})
		if data, err := os.ReadFile(user); err == nil {
			if err := os.WriteFile(mcpPath, data, 0o600); err != nil {
				return nil, nil, err
			}
		}
		mcp, err := edit(mcpPath, func(root *node) error {
			return mergeServer(root, []string{"mcpServers"}, fromValue(MCPEntry(client.Cline, o.Self)), o.Self, false, user)
		})
		if err != nil {
			return nil, nil, err
		}
		if err := Apply(append(cs, mcp)); err != nil {
			return nil, nil, err
		}
		return []string{"--hooks-dir", hooks}, []string{"CLINE_MCP_SETTINGS_PATH=" + mcpPath}, nil
	case client.Copilot:
		if !copilotHooksInstalled(o) {
			return nil, nil, fmt.Errorf("laserbrain's hooks are not installed for Copilot CLI here, and it takes none for one invocation: run laserbrain install copilot first (laserbrain run would otherwise start it unsupervised)")
		}
		mcpPath := filepath.Join(tmp, "mcp-config.json")
		b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{client.ServerName: mapOf(MCPEntry(client.Copilot, o.Self))}}, "", "  ")
		if err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(mcpPath, b, 0o644); err != nil {
			return nil, nil, err
		}
		return []string{"--additional-mcp-config", "@" + mcpPath}, nil, nil
	}
	return nil, nil, nil
}

// openCodeConfigDir writes the run's opencode config directory whole, so
// that opencode 1.18.33 finds nothing in it to write and it can be held
// read-only to the agent with the rest of the run's directory. At start
// opencode writes a .gitignore into each config directory that has none,
// rewrites a config file without "$schema" to add one, and (in the
// background, a failure only logged) installs its plugin SDK there as
// package.json and node_modules; our plugin imports nothing from it. It
// loads opencode.json, opencode.jsonc and the plugin, plugins, agent,
// agents, command, commands, mode, modes, tool, tools, skill and skills
// directories from there: held read-only, none can be added beside ours.
func openCodeConfigDir(dir, self string) error {
	plugin, err := ownFile(filepath.Join(dir, "plugin", "laserbrain.js"), pluginMarker, renderPlugin(self), 0o644, false)
	if err != nil {
		return err
	}
	if err := Apply([]Change{plugin}); err != nil {
		return err
	}
	cfg, err := json.MarshalIndent(map[string]any{
		"$schema": openCodeSchema,
		"mcp":     map[string]any{client.ServerName: mapOf(MCPEntry(client.OpenCode, self))},
	}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), append(cfg, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(openCodeIgnored, "\n")+"\n"), 0o644)
}

// openCodeSchema is the "$schema" opencode adds to a config file that has
// none (rewriting the file).
const openCodeSchema = "https://opencode.ai/config.json"

// openCodeIgnored is what opencode's own .gitignore in a config directory
// names: what it installs there.
var openCodeIgnored = []string{"node_modules", "package.json", "package-lock.json", "bun.lock", ".gitignore"}

func mapOf(m orderedMap) map[string]any {
	out := map[string]any{}
	for _, kv := range m {
		out[kv.key] = kv.val
	}
	return out
}

// copilotHooksInstalled: every one of our Copilot CLI hooks is in the
// project's or the user's settings (a fresh plan would change nothing).
func copilotHooksInstalled(o RunOptions) bool {
	for _, scope := range Scopes(client.Copilot) {
		io := Options{Client: client.Copilot, Scope: scope, Dir: o.Dir, Home: o.Home, Self: o.Self, Getenv: o.Getenv}
		f, err := Locate(io)
		if err != nil {
			continue
		}
		c, err := edit(f.Hooks, func(root *node) error { return mergeFlatHooks(root, o.Self, false, f.Hooks) })
		if err == nil && c.Before != nil && !c.Changed() {
			return true
		}
	}
	return false
}

// settingsLayer is Gemini CLI's or Qwen Code's system settings layer for
// one run: the system file the client would read (if there is one) with
// our hooks, server and variables merged in.
func settingsLayer(o RunOptions, tmp string) ([]string, []string, error) {
	envVar, def := "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/etc/gemini-cli/settings.json"
	if o.Client == client.Qwen {
		envVar, def = "QWEN_CODE_SYSTEM_SETTINGS_PATH", "/etc/qwen-code/settings.json"
	}
	system := o.getenv(envVar)
	if system == "" {
		system = def
	}
	layer := filepath.Join(tmp, "settings.json")
	if data, err := os.ReadFile(system); err == nil {
		if err := os.WriteFile(layer, data, 0o600); err != nil {
			return nil, nil, err
		}
	}
	c, err := edit(layer, func(root *node) error {
		if err := mergeGroupedHooks(root, o.Client, o.Self, false, system); err != nil {
			return err
		}
		if o.Client == client.Gemini {
			if err := mergeRedactionAllowed(root, false, system); err != nil {
				return err
			}
		}
		return mergeServer(root, []string{"mcpServers"}, fromValue(MCPEntry(o.Client, o.Self)), o.Self, false, system)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := Apply([]Change{c}); err != nil {
		return nil, nil, err
	}
	return nil, []string{envVar + "=" + layer}, nil
}

// CodexOverrides are the -c settings that add our hooks and server to one
// codex invocation (a session layer).
func CodexOverrides(self string) []string {
	var out []string
	for _, h := range client.Hooks(client.Codex) {
		out = append(out, "hooks."+h.ClientEvent+"=[{hooks=[{type=\"command\",command="+tomlString(client.HookCommand(self, client.Codex, h.Event))+
			",timeout="+strconv.Itoa(client.HookTimeout)+"}]}]")
	}
	vars := make([]string, len(client.MCPEnv))
	for i, v := range client.MCPEnv {
		vars[i] = tomlString(v)
	}
	out = append(out, "mcp_servers."+client.ServerName+"={command="+tomlString(self)+",args=[\"mcp\"],env_vars=["+strings.Join(vars, ",")+"]}")
	return out
}

func codexRun(o RunOptions) ([]string, []string, error) {
	overrides := CodexOverrides(o.Self)
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	env := o.Environ
	if env == nil {
		env = os.Environ()
	}
	// Codex refuses a CODEX_HOME that does not exist; the trust goes in
	// its config.toml.
	if err := os.MkdirAll(CodexHome(Options{Home: o.Home, Getenv: o.Getenv}), 0o755); err != nil {
		return nil, nil, err
	}
	if _, err := TrustCodex(ctx, CodexOptions{Bin: o.Program, Env: env, Dir: o.Dir, Overrides: overrides}); err != nil {
		return nil, nil, fmt.Errorf("codex would skip laserbrain's hooks for this run, untrusted: %w", err)
	}
	if o.Confined {
		// Codex's shell sandbox is bubblewrap, which cannot map its user
		// inside our confinement ("bwrap: setting up uid map: Permission
		// denied": every shell call would fail). The kernel's boundary
		// around the whole tree holds what supervision stands on instead.
		overrides = append(overrides, `sandbox_mode="danger-full-access"`)
	}
	var args []string
	for _, c := range overrides {
		args = append(args, "-c", c)
	}
	return args, nil, nil
}

// ClaudeFlags writes a settings layer with our hooks and an MCP config with
// our server into dir, and returns the flags that add them to one claude
// invocation. The variadic flags come first and --settings last, so
// claude's option parser cannot take the user's first argument as one more
// MCP config or allowed tool. Confined: the claude runs behind the
// kernel's boundary, where its own sandbox cannot start, and the layer
// (which wins over the project's and the user's settings) turns it off.
func ClaudeFlags(dir, self string, confined bool, protect ...string) ([]string, error) {
	settings := filepath.Join(dir, "settings.json")
	mcpConfig := filepath.Join(dir, "mcp.json")
	layer := map[string]any{"hooks": client.ClaudeHooks(self, client.Claude)}
	if deny := ClaudeDeny(protect); len(deny) > 0 {
		layer["permissions"] = map[string]any{"deny": deny}
	}
	if confined {
		layer["sandbox"] = claudeRunSandboxOff()
	}
	for path, v := range map[string]any{
		settings:  layer,
		mcpConfig: map[string]any{"mcpServers": map[string]any{client.ServerName: client.MCPServer(self)}},
	} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
	}
	return []string{"--mcp-config", mcpConfig, "--allowedTools", "mcp__" + client.ServerName, "--settings", settings}, nil
}

// ClaudeDeny are Claude Code permission rules keeping its own file tools
// (Edit, which covers Write and NotebookEdit) off each path and what is
// below it: "//" starts an absolute path in a rule. They bind the tools
// Claude Code runs itself; what its Bash runs is the gate's and the
// kernel's.
func ClaudeDeny(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		out = append(out, "Edit(/"+p+")", "Edit(/"+p+"/**)")
	}
	return out
}

// ClaudeReadDeny are the rules that keep Claude Code's Read tool off each
// path and below it: Read(//PATH) and Read(//PATH/**), which its sandbox
// also denies to Bash.
func ClaudeReadDeny(paths []string) []string {
	var out []string
	for _, p := range paths {
		if filepath.IsAbs(p) {
			p = filepath.Clean(p)
			out = append(out, "Read(/"+p+")", "Read(/"+p+"/**)")
		}
	}
	return out
}
