package agenttest

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
)

// The model name every OpenAI-shaped client is configured with.
const scriptedModel = "scripted"

// Codex is OpenAI's Codex CLI: the Responses API, a provider in
// $CODEX_HOME/config.toml, `codex exec --json`.
var Codex = &Client{
	Name: "codex", Package: "@openai/codex", Version: "0.171.0",
	CacheDir: "codex", Bin: "codex", EnvVar: "LASERKIT_CODEX",
	API: ResponsesAPI, ShellTool: "exec_command",
	mcp: func(server, tool string) (string, string) { return "mcp__" + server, tool },
	shell: func(id, command string) Turn {
		return CallID(id, "exec_command", map[string]any{"cmd": command})
	},
	env: func(s *Session) []string {
		return []string{"CODEX_HOME=" + filepath.Join(s.Home, ".codex"), "AGENTTEST_API_KEY=sk-test"}
	},
	setup: func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.Home, ".codex", "config.toml")
		// A person's CODEX_HOME (~/.codex) is not under their temporary
		// directory; a session's HOME is under the test's. Codex makes
		// the helper aliases its sandbox starts by (codex-linux-sandbox)
		// in CODEX_HOME, never under the temporary directory, and a bwrap
		// on PATH without --argv0 (Debian 12's bubblewrap 0.8.0) finds
		// its helper only there: so the session gets a TMPDIR of its own,
		// beside its HOME rather than above it, as on a person's machine.
		s.tmp = t.TempDir()
		cfg := fmt.Sprintf(`model = %q
model_provider = "agenttest"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.agenttest]
name = "agenttest"
base_url = "%s/v1"
wire_api = "responses"
env_key = "AGENTTEST_API_KEY"

[projects.%q]
trust_level = "trusted"
`, scriptedModel, s.Model.URL, s.Dir)
		writeFile(t, s.UserConfig, []byte(cfg))
	},
	args: func(s *Session, prompt string) []string {
		return []string{"exec", "--json", prompt}
	},
}

// GeminiCLI is Google's Gemini CLI: the Gemini API under
// $GOOGLE_GEMINI_BASE_URL, ~/.gemini/settings.json, yolo approval.
var GeminiCLI = &Client{
	Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0",
	CacheDir: "gemini-cli", Bin: "gemini", EnvVar: "LASERKIT_GEMINI",
	API: GeminiAPI, ShellTool: "run_shell_command",
	mcp:   func(server, tool string) (string, string) { return "", "mcp_" + server + "_" + tool },
	shell: commandCall("run_shell_command"),
	env: func(s *Session) []string {
		return []string{"GEMINI_API_KEY=sk-test", "GOOGLE_GEMINI_BASE_URL=" + s.Model.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"}
	},
	setup: authSettings(".gemini", "gemini-api-key"),
	args: func(s *Session, prompt string) []string {
		return []string{"-m", "gemini-2.5-flash", "-p", prompt, "--approval-mode", "yolo", "--output-format", "json"}
	},
}

// QwenCode is Qwen Code: Chat Completions at $OPENAI_BASE_URL,
// ~/.qwen/settings.json, yolo approval.
var QwenCode = &Client{
	Name: "qwen", Package: "@qwen-code/qwen-code", Version: "0.24.4",
	CacheDir: "qwen-code", Bin: "qwen", EnvVar: "LASERKIT_QWEN",
	API: ChatAPI, ShellTool: "run_shell_command",
	mcp:   func(server, tool string) (string, string) { return "", "mcp__" + server + "__" + tool },
	shell: commandCall("run_shell_command"),
	env: func(s *Session) []string {
		return []string{"OPENAI_BASE_URL=" + s.Model.URL + "/v1", "OPENAI_API_KEY=sk-test", "OPENAI_MODEL=" + scriptedModel}
	},
	setup: authSettings(".qwen", "openai"),
	args: func(s *Session, prompt string) []string {
		return []string{"-p", prompt, "--approval-mode", "yolo", "--output-format", "json"}
	},
}

// OpenCode is opencode: Chat Completions through its openai-compatible
// provider, configured in $XDG_CONFIG_HOME/opencode/opencode.json.
var OpenCode = &Client{
	Name: "opencode", Package: "opencode-ai", Version: "1.18.33",
	CacheDir: "opencode", Bin: "opencode", EnvVar: "LASERKIT_OPENCODE",
	API: ChatAPI, ShellTool: "bash",
	mcp:   func(server, tool string) (string, string) { return "", server + "_" + tool },
	shell: commandCall("bash"),
	// Offline: no models.dev catalogue, no update check, no LSP download;
	// npm offline, so the plugin SDK it installs into its config
	// directories in the background comes from the cache or not at all.
	env: func(s *Session) []string {
		return []string{"OPENCODE_DISABLE_MODELS_FETCH=true", "OPENCODE_DISABLE_AUTOUPDATE=true",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=true", "OPENCODE_DISABLE_SHARE=true", "npm_config_offline=true"}
	},
	setup: func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.xdg("config"), "opencode", "opencode.json")
		writeFile(t, s.UserConfig, mustJSON(t, map[string]any{
			"$schema": "https://opencode.ai/config.json",
			"provider": map[string]any{"agenttest": map[string]any{
				"npm": "@ai-sdk/openai-compatible", "name": "agenttest",
				"options": map[string]any{"baseURL": s.Model.URL + "/v1", "apiKey": "sk-test"},
				"models":  map[string]any{scriptedModel: map[string]any{"name": scriptedModel}},
			}},
			"model":      "agenttest/" + scriptedModel,
			"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow"},
			"autoupdate": false,
			"share":      "disabled",
		}))
	},
	args: func(s *Session, prompt string) []string {
		return []string{"run", "--format", "json", prompt}
	},
}

// Cline is the Cline CLI: Chat Completions through its openai provider
// (cline auth), `cline --json`; it leaves a hub daemon that Run stops.
var Cline = &Client{
	Name: "cline", Package: "cline", Version: "3.0.65",
	CacheDir: "cline", Bin: "cline", EnvVar: "LASERKIT_CLINE",
	API: ChatAPI, ShellTool: "run_commands",
	mcp: func(server, tool string) (string, string) { return "", server + "__" + tool },
	shell: func(id, command string) Turn {
		return CallID(id, "run_commands", map[string]any{"commands": []string{command}})
	},
	// Its hub daemon listens on 127.0.0.1:25463 unless CLINE_HUB_PORT says
	// otherwise: each session gets a free port of its own, so parallel tests
	// never meet one another's hub.
	setup: func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.Home, ".cline")
		s.extra = append(s.extra, "CLINE_HUB_PORT="+freePort(t), "CLINE_NO_AUTO_UPDATE=1")
		if r := s.Run(t, s.Bin, "auth", "-p", "openai", "-k", "sk-test", "-m", scriptedModel, "-b", s.Model.URL+"/v1"); r.ExitCode != 0 {
			t.Fatalf("cline auth: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	},
	args: func(s *Session, prompt string) []string {
		return []string{"--json", prompt}
	},
}

// Copilot is GitHub's Copilot CLI, offline with a bring-your-own-key
// provider speaking Chat Completions.
var Copilot = &Client{
	Name: "copilot", Package: "@github/copilot", Version: "1.0.102",
	CacheDir: "copilot", Bin: "copilot", EnvVar: "LASERKIT_COPILOT",
	API: ChatAPI, ShellTool: "bash",
	mcp:   func(server, tool string) (string, string) { return "", server + "-" + tool },
	shell: commandCall("bash"),
	env: func(s *Session) []string {
		return []string{"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + s.Model.URL + "/v1",
			"COPILOT_PROVIDER_API_KEY=sk-test", "COPILOT_MODEL=" + scriptedModel}
	},
	setup: func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.Home, ".copilot")
	},
	args: func(s *Session, prompt string) []string {
		return []string{"-p", prompt, "--allow-all-tools", "--trust-folder", "--disable-client-telemetry"}
	},
}

// freePort is a TCP port on 127.0.0.1 nobody listens on right now.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agenttest: finding a free port: %v", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// commandCall is a client's shell tool called as {"command", "description"}.
func commandCall(tool string) func(id, command string) Turn {
	return func(id, command string) Turn {
		return CallID(id, tool, map[string]any{"command": command, "description": "scripted"})
	}
}

// authSettings writes ~/DIR/settings.json choosing the auth type, as Gemini
// CLI and Qwen Code (its fork) read it.
func authSettings(dir, auth string) func(t testing.TB, s *Session) {
	return func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.Home, dir, "settings.json")
		writeFile(t, s.UserConfig, mustJSON(t, map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": auth}},
		}))
	}
}
