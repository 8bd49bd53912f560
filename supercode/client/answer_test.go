package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/operator"
)

// The gate's three answers, as the clients' hook protocols spell them
// (Claude Code's and Copilot CLI's permissionDecision, Gemini CLI's and
// opencode's decision).
var answerWords = []string{"allow", "ask", "deny"}

// Every operator.Answer is written as exactly its word, and read back
// from it; nothing else reads as an answer (coverage's warning is an
// allow, not a fourth word).
func TestAnswerWords(t *testing.T) {
	for i, a := range []operator.Answer{operator.Allow, operator.Ask, operator.Deny} {
		b, err := a.MarshalText()
		if err != nil || string(b) != answerWords[i] {
			t.Errorf("answer %d is written %q (%v), want %q", i, b, err, answerWords[i])
		}
		var back operator.Answer
		if err := back.UnmarshalText([]byte(answerWords[i])); err != nil || back != a {
			t.Errorf("%q reads as %v (%v), want %v", answerWords[i], back, err, a)
		}
	}
	for _, w := range []string{"", "warn", "Allow", "none", "block"} {
		var a operator.Answer
		if err := a.UnmarshalText([]byte(w)); err == nil {
			t.Errorf("%q reads as the answer %v, want an error", w, a)
		}
	}
}

// Every answer crosses each client's seam: the adapter writes the
// answer's own word where the client has that answer, and its refusal
// where the client has no ask, each with the reason; an allow is written
// only to a client that takes one. What comes out is read back as the
// client acts on it, from the output alone.
func TestEveryAnswerCrossesEachClientsWire(t *testing.T) {
	// What a client without an answer is given instead ("": nothing).
	instead := map[Name]map[string]string{
		Codex:    {"ask": "deny", "allow": ""}, // takes only deny from a PreToolUse hook
		Gemini:   {"ask": "deny"},              // headless, it never returns from an ask
		OpenCode: {"ask": "deny"},              // a plugin cannot ask a person
		Cline:    {"ask": "deny", "allow": ""}, // cancels a call or lets it be
	}
	for _, n := range Names {
		formats := []string{""}
		if n == Claude || n == Qwen || n == Codex {
			formats = append(formats, "json")
		}
		for _, format := range formats {
			ad, err := For(n, format)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range []operator.Answer{operator.Allow, operator.Ask, operator.Deny} {
				word := answerWords[i]
				want, ok := instead[n][word]
				if !ok {
					want = word
				}
				reason := "reason-" + word
				r := Decide(a, reason)
				r.Call = &Tool{Name: "Bash", Kind: KindShell, Commands: []Command{{Line: "git push --force"}}}
				out := ad.Encode(PreToolUse, r)
				got, err := obeyed(n, out)
				if err != nil || got != want {
					t.Errorf("%s (format %q) given %s: the client reads %q (%v), want %q; output %+v", n, format, word, got, err, want, out)
					continue
				}
				if want != "" && !strings.Contains(out.Stdout+out.Stderr, reason) {
					t.Errorf("%s (format %q) given %s: the reason is not in %+v", n, format, word, out)
				}
			}
			// No decision is no word, whatever the client.
			if got, err := obeyed(n, ad.Encode(PreToolUse, Reply{})); err != nil || got != "" {
				t.Errorf("%s (format %q) given no decision: the client reads %q (%v)", n, format, got, err)
			}
		}
	}
}

// obeyed is the permission word a client takes from a PreToolUse hook's
// output: "" when it is given none.
func obeyed(n Name, out Output) (string, error) {
	if out.Exit == 2 {
		// Claude Code, Codex and Qwen Code block on status 2.
		return "deny", nil
	}
	v := map[string]any{}
	if strings.TrimSpace(out.Stdout) != "" {
		if err := json.Unmarshal([]byte(out.Stdout), &v); err != nil {
			return "", err
		}
	}
	word := func(m any, key string) string {
		o, _ := m.(map[string]any)
		s, _ := o[key].(string)
		return s
	}
	switch n {
	case Claude, Qwen, Codex:
		return word(v["hookSpecificOutput"], "permissionDecision"), nil
	case Copilot:
		return word(v, "permissionDecision"), nil
	case Gemini, OpenCode:
		return word(v, "decision"), nil
	case Cline:
		if v["cancel"] == true || v["overrideInput"] != nil {
			return "deny", nil
		}
		return "", nil
	}
	return "", nil
}
