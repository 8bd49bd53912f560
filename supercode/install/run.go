package install

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
}

// Prepare writes one client invocation's per-run configuration into tmp (a
// private directory removed when the run ends) and returns the arguments
// to put before the user's and the variables to add:
//
//   - claude: a settings layer with our hooks (--settings) and an MCP
//     config with our server (--mcp-config, its tools allowed).
func Prepare(o RunOptions, tmp string) (args, env []string, err error) {
	if !filepath.IsAbs(o.Self) {
		return nil, nil, fmt.Errorf("the laserbrain path %q is not absolute (hooks must not depend on PATH)", o.Self)
	}
	switch o.Client {
	case client.Claude:
		args, err := ClaudeFlags(tmp, o.Self)
		return args, nil, err
	}
	return nil, nil, nil
}

// ClaudeFlags writes a settings layer with our hooks and an MCP config with
// our server into dir, and returns the flags that add them to one claude
// invocation. The variadic flags come first and --settings last, so
// claude's option parser cannot take the user's first argument as one more
// MCP config or allowed tool.
func ClaudeFlags(dir, self string) ([]string, error) {
	settings := filepath.Join(dir, "settings.json")
	mcpConfig := filepath.Join(dir, "mcp.json")
	for path, v := range map[string]any{
		settings:  map[string]any{"hooks": client.ClaudeHooks(self, client.Claude)},
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
