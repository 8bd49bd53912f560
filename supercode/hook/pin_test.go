package hook

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/client"
)

// A call reported as the hook rewrote it is recorded as the agent's own
// command: unpinned gives back exactly the line pinnedCommand wrapped,
// whatever the line holds (a heredoc, the wrapper's own words, a trailing
// comment), and leaves every other line alone.
func TestPinnedCommandUnwraps(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum: no call is pinned here")
	}
	reads := []shell.FileRead{{Path: "/w/a.sh", SHA256: "00"}, {Path: "/w/it's; then\tx", SHA256: "11"}}
	for _, line := range []string{
		"sh a.sh",
		"cat <<EOF\nelse\necho x\nEOF\nsh a.sh # done",
		"if true; then\nsh a.sh\nfi\n(exit 86)\nfi",
		"make -C sub clean && echo '\nelse\necho '",
	} {
		pinned, ok := pinnedCommand(reads, line)
		if !ok {
			t.Fatalf("%q: not pinned", line)
		}
		got, ok := unpinned(pinned)
		if !ok || got != line {
			t.Errorf("unpinned(pinnedCommand(%q)) = %q, %v", line, got, ok)
		}
		tool := &client.Tool{Commands: []client.Command{{Line: pinned}}, Input: json.RawMessage(`{"command":` + quoteJSON(pinned) + `,"description":"d"}`)}
		restoreCall(tool)
		var in map[string]string
		if err := json.Unmarshal(tool.Input, &in); err != nil || in["command"] != line || in["description"] != "d" || tool.Commands[0].Line != line {
			t.Errorf("restoreCall(%q): line %q, input %s (%v)", line, tool.Commands[0].Line, tool.Input, err)
		}
	}
	for _, line := range []string{"if printf '%s\\n' x | sha256sum -c -; then\nrm -rf x\nfi", "ls", ""} {
		if got, ok := unpinned(line); ok {
			t.Errorf("unpinned(%q) = %q: not a pinned call", line, got)
		}
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
