package operator

import (
	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/operator/shell"

	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// Every example written beside a pack rule (operator/pack.json) classifies
// as the rule says when it goes through the whole classifier: code examples
// are fed to the rule's first command as a heredoc.
func TestPackExamplesThroughClassify(t *testing.T) {
	data, err := os.ReadFile("shell/pack.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Rules []struct {
			Label, Scope string
			Commands     []string
			Examples     struct {
				Match   []string
				NoMatch []string `json:"no_match"`
			}
		}
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Rules {
		wrap := func(s string) string { return s }
		if r.Scope == "code" {
			wrap = func(s string) string { return r.Commands[0] + " <<'EOF'\n" + s + "\nEOF" }
		}
		label := "parsed: " + r.Label
		for _, ex := range r.Examples.Match {
			c := classify(wrap(ex))
			if !slices.Contains(c.Labels, label) || c.Reversible || c.Decision == Allow {
				t.Errorf("%q: labels %q, decision %s; want %q", wrap(ex), c.Labels, c.Decision, label)
			}
		}
		for _, ex := range r.Examples.NoMatch {
			if c := classify(wrap(ex)); slices.Contains(c.Labels, label) {
				t.Errorf("%q: has %q", wrap(ex), label)
			}
		}
	}
}

func TestLabelsGrammarFirstThenParsed(t *testing.T) {
	// Hand-derived: the raw text matches grammar #7 (npm publish) only; the
	// parsed view adds rm's split flags and the + refspec, in command order.
	r := classify("rm -r -f dist && git push origin +main && npm publish")
	want := []string{
		"npm publish (public package publish)",
		"parsed: rm -rf (recursive force delete)",
		"parsed: git push +refspec (force-push to remote)",
	}
	if !slices.Equal(r.Labels, want) {
		t.Fatalf("labels %q\nwant   %q", r.Labels, want)
	}
	if r.Reversible || !r.Outward || r.Decision != Deny {
		t.Fatalf("got %+v", r)
	}
	if !strings.HasPrefix(r.Why, "npm publish (public package publish); parsed: rm -rf") {
		t.Fatalf("why = %q", r.Why)
	}
}

func TestEscalateOnly(t *testing.T) {
	// No match keeps any declaration; a match can only escalate.
	for _, decl := range [][2]bool{{true, false}, {false, false}, {true, true}, {false, true}} {
		r := shell.Classify("ls -la", decl[0], decl[1])
		if r.Reversible != decl[0] || r.Outward != decl[1] || len(r.Labels) != 0 {
			t.Errorf("ls with %v: %+v", decl, r)
		}
		r = shell.Classify("git reset --hard", decl[0], decl[1])
		if r.Reversible || r.Outward != decl[1] {
			t.Errorf("reset --hard with %v: %+v (reset is inward: outward must stay as declared)", decl, r)
		}
	}
}

func TestRoles(t *testing.T) {
	cases := []struct {
		cmd  string
		want shell.Where
	}{
		{"git reset --hard", shell.Executed},
		{"echo 'git reset --hard'", shell.Data},
		{"git commit -m 'git reset --hard'", shell.Data},
		{"python3 -c 'import os; os.system(\"git reset --hard\")'", shell.InlineCode},
		{"echo \"git reset --hard", shell.Unknown},
	}
	for _, c := range cases {
		r := classify(c.cmd)
		if len(r.Findings) == 0 || r.Findings[0].Label != "git reset --hard (discards uncommitted work)" || r.Findings[0].Where != c.want {
			t.Errorf("%q: findings %+v, want the grammar label %s", c.cmd, r.Findings, c.want)
		}
	}
}

func TestCarveOutIsNarrow(t *testing.T) {
	r := classify("wrangler deploy --name laserbrain-mcp-remote")
	if r.Decision != Allow || r.Reversible || len(r.Carveouts) != 1 || !strings.HasPrefix(r.Why, "carve-out: laserbrain MCP Worker deploy") {
		t.Fatalf("own deploy: %+v", r)
	}
	// The carve-out annotates the raw text but covers no other command.
	if r := classify("wrangler deploy --name other; echo laserbrain-mcp-remote"); r.Decision != Deny {
		t.Fatalf("other deploy passed: %+v", r)
	}
	if r := classify("wrangler deploy --name laserbrain-mcp-remote && rm -rf /"); r.Decision != Deny {
		t.Fatalf("carve-out carried rm -rf: %+v", r)
	}
}

func TestDepthLimitFailsClosed(t *testing.T) {
	cmd := "ls"
	for i := 0; i <= shell.MaxDepth; i++ {
		cmd = "eval " + shellquote.Word(cmd)
	}
	r := classify(cmd)
	if r.Reversible || r.Decision != Ask || !strings.Contains(r.Why, "nesting deeper than 5") {
		t.Fatalf("%q: %+v", cmd, r)
	}
	// One level less is followed and harmless.
	if r := classify(strings.TrimPrefix(cmd, "eval ")); r.Decision != Allow {
		t.Fatalf("depth 5: %+v", r)
	}
}
