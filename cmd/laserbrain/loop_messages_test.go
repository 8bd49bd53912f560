package main

// A judge the loop reaches through the Messages API directly
// (judge_KIND=messages), against the scripted Messages API: a turn that
// ends without the verdict tool is sent again exactly once with the tool
// mandated, and missing and malformed verdicts each get their own strike.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// messagesJudge is a repository whose judge is a messages service on m,
// running SCRIPT; it returns the loop's exit code, stderr and the judge's
// journal records.
func messagesJudge(t *testing.T, m *agenttest.Model, script string) (int, string, string, []map[string]any) {
	t.Helper()
	conf := "judge_KIND=messages\njudge_MODEL=claude-scripted\njudge_API_KEY=scripted-key\njudge_BASE_URL=" + m.URL + "\n"
	dir := loopRepo(t, map[string]string{"agents.conf": conf, "loop.sh": script, "PLAN.md": "1. Add the parser.\n", ".gitignore": ".lbhome/\n"})
	home := filepath.Join(dir, ".lbhome")
	p := startLoop(t, laserbrainBinary(t), dir, home, "loop.sh")
	code := p.wait(t)
	entries, err := os.ReadDir(filepath.Join(home, "loop"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one loop run in %s: %v %v\nstderr: %s", home, entries, err, p.stderr)
	}
	return code, p.stdout.String(), p.stderr.String(), done(journal(t, filepath.Join(home, "loop", entries[0].Name())), "judge")
}

func verdictTurn(v map[string]any) agenttest.Turn { return agenttest.Call("verdict", v) }

// forcedRequests are the main-loop requests that mandate the verdict tool.
func forcedRequests(t *testing.T, m *agenttest.Model) (forced []int, mains int) {
	t.Helper()
	for i, r := range m.MainRequests() {
		var body struct {
			ToolChoice map[string]any `json:"tool_choice"`
			Tools      []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.ToolChoice != nil {
			if len(body.ToolChoice) != 2 || body.ToolChoice["type"] != "tool" || body.ToolChoice["name"] != "verdict" {
				t.Fatalf("request %d carries tool_choice %v, want {\"type\":\"tool\",\"name\":\"verdict\"}", i, body.ToolChoice)
			}
			forced = append(forced, i)
		}
		mains++
	}
	return forced, mains
}

// A turn without a verdict: the conversation goes again once, with the
// verdict tool mandated; the verdict that answers it is the judge's.
func TestLoopMessagesJudgeForcedVerdict(t *testing.T) {
	m := agenttest.NewModel(t,
		agenttest.Call("read", map[string]any{"path": "PLAN.md"}),
		agenttest.Say("The plan looks complete to me."),
		verdictTurn(map[string]any{"sufficient": false, "summary": "The parser is missing.",
			"findings": []any{map[string]any{"severity": "blocker", "where": "parse.go", "what": "Add the parser", "why": "PLAN.md step 1"}}}))
	code, stdout, stderr, judges := messagesJudge(t, m, "judge judge 'Is PLAN.md done?'\necho \"judge=$?\"\n")
	if code != 0 || !strings.Contains(stdout, "judge=1") || !strings.Contains(stdout, "Add the parser") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s\n%s", code, stdout, stderr, m.Trace())
	}
	forced, mains := forcedRequests(t, m)
	if len(forced) != 1 || mains != 3 || forced[0] != 2 {
		t.Fatalf("want 3 requests, the third (only) with tool_choice; got forced=%v of %d\n%s", forced, mains, m.Trace())
	}
	// The read tool answered from the tree.
	var readID string
	for _, r := range m.MainRequests() {
		if strings.Contains(string(r.Body), "1. Add the parser.") {
			readID = "found"
		}
	}
	if readID == "" {
		t.Fatal("the read tool's result (PLAN.md) never reached the model")
	}
	if len(judges) != 1 {
		t.Fatalf("judge records: %v", judges)
	}
	s := judges[0]["samples"].([]any)[0].(map[string]any)
	if s["reask"] != "tool_choice" || s["no_verdict"] != 1.0 {
		t.Fatalf("the journal does not say the judge was re-sent with tool_choice: %v", s)
	}
	if !strings.Contains(stderr, "sending the conversation again with the verdict tool mandated (tool_choice)") {
		t.Fatalf("stderr does not say what was done:\n%s", stderr)
	}
}

// Missing, then malformed: two strikes of different kinds, so the judge
// goes on — the malformed verdict bounces and the corrected one stands.
// Only a second malformed verdict after that is a malfunction (6).
func TestLoopMessagesJudgeSeparateStrikes(t *testing.T) {
	bad := map[string]any{"sufficient": false, "summary": "Not done.", "findings": []any{}}
	good := map[string]any{"sufficient": true, "summary": "Complete.", "findings": []any{}}
	t.Run("missing then malformed then valid", func(t *testing.T) {
		m := agenttest.NewModel(t, agenttest.Say("Looks fine."), verdictTurn(bad), verdictTurn(good))
		code, stdout, stderr, _ := messagesJudge(t, m, "judge judge 'look'\necho \"judge=$?\"\n")
		if code != 0 || !strings.Contains(stdout, "judge=0") {
			t.Fatalf("missing then malformed ended the judgment: exit %d\nstdout: %s\nstderr: %s\n%s", code, stdout, stderr, m.Trace())
		}
		if forced, mains := forcedRequests(t, m); len(forced) != 1 || mains != 3 {
			t.Fatalf("forced=%v of %d requests\n%s", forced, mains, m.Trace())
		}
		bounce := m.MainRequests()[2]
		if !strings.Contains(string(bounce.Body), "needs at least one blocker or required finding") || !strings.Contains(string(bounce.Body), `"is_error":true`) {
			t.Fatalf("the malformed verdict was not bounced with its reason:\n%s", bounce.Body)
		}
	})
	t.Run("missing then malformed twice", func(t *testing.T) {
		m := agenttest.NewModel(t, agenttest.Say("Looks fine."), verdictTurn(bad), verdictTurn(bad))
		code, stdout, stderr, judges := messagesJudge(t, m, "judge judge 'look'\necho \"judge=$?\"\n")
		if code != 0 || !strings.Contains(stdout, "judge=6") {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s\n%s", code, stdout, stderr, m.Trace())
		}
		s := judges[0]["samples"].([]any)[0].(map[string]any)
		if s["no_verdict"] != 1.0 || len(s["malformed"].([]any)) != 2 {
			t.Fatalf("strikes journaled: %v", s)
		}
	})
	t.Run("missing twice", func(t *testing.T) {
		m := agenttest.NewModel(t, agenttest.Say("Looks fine."), agenttest.Say("Still fine."))
		code, stdout, stderr, _ := messagesJudge(t, m, "judge judge 'look'\necho \"judge=$?\"\n")
		if code != 0 || !strings.Contains(stdout, "judge=6") {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s\n%s", code, stdout, stderr, m.Trace())
		}
		if forced, mains := forcedRequests(t, m); len(forced) != 1 || mains != 2 {
			t.Fatalf("forced=%v of %d requests\n%s", forced, mains, m.Trace())
		}
	})
}

// The pinned judge goes on with its conversation: the second call's
// request carries the first call's prompt and verdict.
func TestLoopMessagesJudgePinned(t *testing.T) {
	m := agenttest.NewModel(t,
		verdictTurn(map[string]any{"sufficient": false, "summary": "First look: the parser is missing.",
			"findings": []any{map[string]any{"severity": "required", "where": "parse.go", "what": "Add the parser", "why": "plan"}}}),
		verdictTurn(map[string]any{"sufficient": true, "summary": "Second look: done.", "findings": []any{}}))
	code, stdout, stderr, _ := messagesJudge(t, m, "judge judge 'first look'\njudge judge 'second look'\necho \"judge=$?\"\n")
	if code != 0 || !strings.Contains(stdout, "judge=0") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	mains := m.MainRequests()
	second := string(mains[len(mains)-1].Body)
	if !strings.Contains(second, "first look") || !strings.Contains(second, "First look: the parser is missing.") {
		t.Fatalf("the second call did not go on with the pinned conversation:\n%s", second)
	}
	if forced, _ := forcedRequests(t, m); len(forced) != 0 {
		t.Fatalf("a judge that answered was forced: %v", forced)
	}
}
