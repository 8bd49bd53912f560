package install

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/laserkit/laserkit/supercode/client"
)

//go:embed plugin/laserbrain.js
var pluginSource string

// pluginMarker marks the opencode plugin as laserbrain's.
const pluginMarker = "laserbrain opencode plugin"

// IsPlugin reports whether data is laserbrain's opencode plugin.
func IsPlugin(data []byte) bool { return bytes.Contains(firstLines(data, 3), []byte(pluginMarker)) }

var pluginArgv = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^const ARGV = (\{.*\});$`) })

// PluginArgv reads the programs an installed plugin runs, by our event
// name (PreToolUse, PostToolUse, SessionStart, Stop, Notification).
func PluginArgv(data []byte) (map[client.EventName][]string, bool) {
	m := pluginArgv().FindSubmatch(data)
	if m == nil {
		return nil, false
	}
	var raw map[string][]string
	if json.Unmarshal(m[1], &raw) != nil {
		return nil, false
	}
	out := map[client.EventName][]string{}
	for k, v := range raw {
		ev := map[string]client.EventName{"pre": client.PreToolUse, "post": client.PostToolUse, "start": client.SessionStart, "stop": client.Stop, "notify": client.Notification}[k]
		if ev != "" && len(v) > 0 {
			out[ev] = v
		}
	}
	return out, true
}

// renderPlugin is the opencode plugin for the laserbrain binary self: the
// shipped source with the programs that answer each event (the same argv
// the other clients' hook commands run), their deadline, and the denial a
// missing binary gets.
func renderPlugin(self string) []byte {
	argv := map[string][]string{
		"pre":    client.Argv(self, client.OpenCode, client.PreToolUse),
		"post":   client.Argv(self, client.OpenCode, client.PostToolUse),
		"start":  client.Argv(self, client.OpenCode, client.SessionStart),
		"stop":   client.Argv(self, client.OpenCode, client.Stop),
		"notify": client.Argv(self, client.OpenCode, client.Notification),
	}
	a, _ := json.Marshal(argv)
	m, _ := json.Marshal(client.MissingReason(argv["pre"][0]))
	r := strings.NewReplacer(
		"/*ARGV*/ {};", string(a)+";",
		"/*DEADLINE_MS*/ 30000", strconv.Itoa(client.HookTimeout*1000),
		`/*MISSING*/ ""`, string(m),
	)
	return []byte(r.Replace(pluginSource))
}
