package client

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/operator"
)

// The name each client's hook saw when its scripted model called
// check_state (branch agents recorded it with every real client:
// internal/agenttest/testdata/mcp-names.json) is the name CheckTool tells
// the model to call.
func TestCheckToolAsTheClientsSawIt(t *testing.T) {
	data, err := os.ReadFile("../../internal/agenttest/testdata/mcp-names.json")
	if err != nil {
		t.Fatal(err)
	}
	var seen map[string]struct {
		HookSaw string `json:"hook_saw"`
	}
	if err := json.Unmarshal(data, &seen); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names {
		s, ok := seen[string(n)]
		if !ok {
			t.Errorf("%s: nothing recorded", n)
			continue
		}
		if got := CheckTool(n); got != s.HookSaw {
			t.Errorf("CheckTool(%s) = %q; the client's hook saw %q", n, got, s.HookSaw)
		}
		if base, ok := OwnTool(CheckTool(n)); !ok || base != "check_state" {
			t.Errorf("CheckTool(%s) = %q is not read back as check_state (%q, %v)", n, CheckTool(n), base, ok)
		}
	}
	if CheckTool("") != CheckTool(Claude) {
		t.Error("an unknown client is not told Claude Code's name")
	}
}

// Every channel Tells claims is one the client's adapter writes: the text
// put in the answer comes out in what the hook prints. A channel it does
// not claim may still be written (an adapter writes what it is given), but
// the voice never relies on it.
func TestTellsOnlyWhereTheAdapterWrites(t *testing.T) {
	const marker = "MARKER-TEXT-7"
	for _, n := range Names {
		ad, err := For(n, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []EventName{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, SessionEnd} {
			for _, a := range []Reply{{}, Decide(operator.Deny, "")} {
				if a.Denies() && ev != PreToolUse {
					continue
				}
				ok, reason, block := Tells(n, ev, a)
				if !ok {
					continue
				}
				if block {
					a.Block = true
				}
				if reason {
					a.Reason = marker
				} else {
					a.Context = marker
				}
				r := ad.Encode(ev, a)
				if !strings.Contains(r.Stdout+r.Stderr, marker) {
					t.Errorf("%s %s (denies %v): Tells says it carries text, the adapter writes %+v", n, ev, a.Denies(), r)
				}
			}
		}
	}
}

// Claude Code, whose channels the end-to-end tests watch reach the model,
// carries text on every event the voice uses.
func TestTellsClaude(t *testing.T) {
	for _, c := range []struct {
		ev                  EventName
		a                   Reply
		ok, reason, blocked bool
	}{
		{PreToolUse, Reply{}, true, false, false},
		{PreToolUse, Decide(operator.Deny, ""), true, true, false},
		{PostToolUse, Reply{}, true, false, false},
		{UserPromptSubmit, Reply{}, true, false, false},
		{SessionStart, Reply{}, true, false, false},
		{Stop, Reply{}, true, true, true},
		{SessionEnd, Reply{}, false, false, false},
	} {
		ok, reason, block := Tells(Claude, c.ev, c.a)
		if ok != c.ok || reason != c.reason || block != c.blocked {
			t.Errorf("Tells(claude, %s, %+v) = %v %v %v; want %v %v %v", c.ev, c.a, ok, reason, block, c.ok, c.reason, c.blocked)
		}
	}
	// opencode's plugin passes only a denial on.
	if ok, _, _ := Tells(OpenCode, PostToolUse, Reply{}); ok {
		t.Error("opencode's post-tool-use context is not passed on by its plugin")
	}
	if ok, _, _ := Tells(OpenCode, PreToolUse, Decide(operator.Deny, "")); !ok {
		t.Error("opencode's denial reaches the model")
	}
}

func TestIsCheckCommand(t *testing.T) {
	for line, want := range map[string]bool{
		`laserbrain check --goal 'add a CSV importer' --distance 4`:          true,
		`laserbrain check --goal "add a CSV importer" --progress stuck`:      true,
		`/usr/local/bin/laserbrain check --goal x`:                           true,
		`  laserbrain   check --goal=x  `:                                    true,
		`laserbrain check --goal x; touch y`:                                 false,
		`laserbrain check --goal x && rm -rf build`:                          false,
		`laserbrain check --goal x | tee log`:                                false,
		`laserbrain check --goal x > log`:                                    false,
		`printf '{"goal":"x"}' | laserbrain check --stream`:                  false,
		`laserbrain check --goal "$(rm -rf build)"`:                          false,
		"laserbrain check --goal `touch y`":                                  false,
		`laserbrain check --goal "$HOME"`:                                    false,
		`laserbrain check --goal *`:                                          false,
		`X=1 laserbrain check --goal x`:                                      false,
		`laserbrain check --goal x &`:                                        false,
		`laserbrain checks --goal x`:                                         false,
		`laserbrain run -- check`:                                            false,
		`sh -c 'laserbrain check --goal x'`:                                  false,
		`(laserbrain check --goal x)`:                                        false,
		`laserbrain check --goal x` + "\n" + `touch y`:                       false,
		`laserbrain check --goal 'unclosed`:                                  false,
		`mylaserbrain check --goal x`:                                        false,
		`laserbrain`:                                                         false,
		`laserbrain check --goal $'x'`:                                       false,
		`laserbrain check --goal ~/x`:                                        false,
		`laserbrain check --goal "a\"b"`:                                     false,
		`laserbrain check --goal x 2>&1`:                                     false,
		`if laserbrain check --goal x; then rm -rf build; fi`:                false,
		`laserbrain check --goal x # a comment is not run`:                   true,
		`laserbrain check --goal "x; rm -rf build"`:                          true,
		`laserbrain check --goal 'it''s'`:                                    true,
		`LASERBRAIN_RUN=other laserbrain check --goal x`:                     false,
		`exec laserbrain check --goal x`:                                     false,
		`laserbrain "check" --goal x`:                                        true,
		`laserbrain check --goal "{a,b}"`:                                    true,
		`laserbrain check --goal {a,b}`:                                      false,
		`laserbrain check --goal x\ y`:                                       false,
		`laserbrain check --goal "x" --distance 4 --run 9d14c2e07a11 --json`: true,
	} {
		if got := IsCheckCommand(line); got != want {
			t.Errorf("IsCheckCommand(%q) = %v, want %v", line, got, want)
		}
	}
}
