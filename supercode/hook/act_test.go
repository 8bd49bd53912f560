package hook

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/client"
)

// Which gate answers go through the supervisor as an ask with the call
// rewritten: outward commands a person could let through, a person there,
// a client that shows the rewritten call, literal words.
func TestViaActOnlyForOutwardCallsAPersonCanApprove(t *testing.T) {
	push := shell.Analyze("git push --force origin main", t.TempDir())
	refused := operator.Decision{Action: operator.Deny, Authorizable: true, Rule: operator.RuleExecuted, Outward: true, Presence: operator.Attended}
	for _, tc := range []struct {
		name    string
		d       func(operator.Decision) operator.Decision
		an      shell.Analysis
		rewrite bool
		want    bool
	}{
		{"refused for want of an authorization", func(d operator.Decision) operator.Decision { return d }, push, true, true},
		{"asked about", func(d operator.Decision) operator.Decision { d.Action = operator.Ask; return d }, push, true, true},
		{"no person there", func(d operator.Decision) operator.Decision { d.Presence = operator.Unattended; return d }, push, true, false},
		{"presence unknown", func(d operator.Decision) operator.Decision { d.Presence = operator.PresenceUnknown; return d }, push, true, false},
		{"inward", func(d operator.Decision) operator.Decision { d.Outward = false; return d }, push, true, false},
		{"refused outright (a protected place, a halt)", func(d operator.Decision) operator.Decision { d.Authorizable = false; return d }, push, true, false},
		{"a client that runs a rewrite unasked", func(d operator.Decision) operator.Decision { return d }, push, false, false},
		{"not literal words", func(d operator.Decision) operator.Decision { return d }, shell.Analyze("git push --force origin $BRANCH", t.TempDir()), true, false},
	} {
		words, ok := viaAct(tc.d(refused), tc.an, tc.rewrite)
		if ok != tc.want {
			t.Errorf("%s: through act = %v, want %v", tc.name, ok, tc.want)
		}
		if ok && len(words) != 5 {
			t.Errorf("%s: words %q", tc.name, words)
		}
	}
}

// Claude Code gets the ask with the call rewritten as updatedInput, its
// other fields kept; Codex (which takes no ask) and Qwen Code get no
// rewrite.
func TestAskRewrittenOnlyWhereTheClientShowsIt(t *testing.T) {
	call := &client.Tool{Name: "Bash", Kind: client.KindShell, Input: json.RawMessage(`{"command":"git push -f origin main","description":"push","timeout":60000}`)}
	a := client.Decide(operator.Ask, "approve?")
	a.Call, a.Rewrite = call, "/x/laserbrain act --pass p -- git push -f origin main"
	for _, n := range client.Names {
		ad, err := client.For(n, "exit")
		if err != nil {
			t.Fatal(err)
		}
		out := ad.Encode(client.PreToolUse, a)
		var v struct {
			Specific struct {
				Decision string         `json:"permissionDecision"`
				Input    map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		_ = json.Unmarshal([]byte(out.Stdout), &v)
		in := v.Specific.Input
		if n != client.Claude {
			if in != nil {
				t.Errorf("%s: rewritten input %v, for a client that does not show it with an ask", n, in)
			}
			continue
		}
		if v.Specific.Decision != "ask" || in["command"] != a.Rewrite || in["description"] != "push" || in["timeout"] != float64(60000) {
			t.Errorf("claude: %s", out.Stdout)
		}
	}
}
