package install

import (
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

//go:embed plugin/laserbrain.js
var pluginSource string

// pluginMarker marks the opencode plugin as laserbrain's.
const pluginMarker = "laserbrain opencode plugin"

// renderPlugin is the opencode plugin for the laserbrain binary self: the
// shipped source with the programs that answer each event (the same argv
// the other clients' hook commands run), their deadline, and the denial a
// missing binary gets.
func renderPlugin(self string) []byte {
	argv := map[string][]string{
		"pre":   client.Argv(self, client.OpenCode, client.PreToolUse),
		"post":  client.Argv(self, client.OpenCode, client.PostToolUse),
		"start": client.Argv(self, client.OpenCode, client.SessionStart),
		"stop":  client.Argv(self, client.OpenCode, client.Stop),
	}
	a, _ := json.Marshal(argv)
	m, _ := json.Marshal(client.MissingReason(argv["pre"][0]))
	r := strings.NewReplacer(
		"/*ARGV*/ {}", string(a),
		"/*DEADLINE_MS*/ 30000", strconv.Itoa(client.HookTimeout*1000),
		`/*MISSING*/ ""`, string(m),
	)
	return []byte(r.Replace(pluginSource))
}
