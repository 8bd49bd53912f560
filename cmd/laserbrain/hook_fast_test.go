package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/client"
)

// TestFastHookAnswersAsTheCommandTree: every hook call run without the
// command tree gets the answer the tree's hook command gives — exit status,
// stdout and stderr byte for byte, each in a laserbrain home of its own —
// and whatever the fast path does not take (help, unknown or repeated
// flags, invalid values) the tree answers, as before.
func TestFastHookAnswersAsTheCommandTree(t *testing.T) {
	events := map[string]string{
		"deny":    `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git push --force origin main"}}`,
		"pass":    `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"go test ./... && git status"}}`,
		"ask":     `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git commit -m 'why rm -rf is refused'"}}`,
		"post":    `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls"},"tool_response":{"stdout":""}}`,
		"garbage": `{"session_id":`,
		"gemini":  `{"session_id":"s1","hook_event_name":"BeforeTool","tool_name":"run_shell_command","cwd":"/tmp","tool_input":{"command":"git push --force origin main"}}`,
	}
	cases := []struct {
		args  []string
		event string
		fast  bool
	}{
		{[]string{"hook", "pre-tool-use"}, "deny", true},
		{[]string{"hook", "pre-tool-use"}, "pass", true},
		{[]string{"hook", "pre-tool-use"}, "ask", true},
		{[]string{"hook", "pre-tool-use"}, "garbage", true},
		{[]string{"hook", "pre-tool-use", "--format", "json"}, "deny", true},
		{[]string{"hook", "pre-tool-use", "--format=json", "--client=codex"}, "deny", true},
		{[]string{"hook", "pre-tool-use", "--client", "gemini"}, "gemini", true},
		{[]string{"hook", "pre-tool-use", "--client", "gemini"}, "deny", true}, // Claude's payload to Gemini's hook
		{[]string{"hook", "post-tool-use"}, "post", true},
		{[]string{"hook", "post-tool-use", "--client", "qwen"}, "post", true},
		{[]string{"hook", "stop"}, "garbage", true},
		// The tree's to answer:
		{[]string{"hook", "pre-tool-use", "--format", "yaml"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "--client", "nobody"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "--client", "codex", "--client", "claude"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "--format"}, "deny", false},
		{[]string{"hook", "post-tool-use", "--format", "json"}, "post", false},
		{[]string{"hook", "pre-tool-use", "extra"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "--help"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "-h"}, "deny", false},
		{[]string{"hook", "pre-tool-use", "--"}, "deny", false},
		{[]string{"hook", "no-such-event"}, "deny", false},
		{[]string{"hook"}, "deny", false},
	}
	answer := func(args []string, event string, viaTree bool) (int, string, string) {
		t.Setenv("LASERBRAIN_HOME", t.TempDir())
		t.Setenv("LASERBRAIN_RUN", "")
		var out, errOut bytes.Buffer
		streams := &cli.IOStreams{In: strings.NewReader(event), Out: &out, ErrOut: &errOut}
		var code int
		if viaTree {
			code, _ = runCmd(newFactory(streams), args)
		} else {
			code = run(args, streams)
		}
		return code, out.String(), errOut.String()
	}
	for _, c := range cases {
		if _, fast := fastHook(c.args); fast != c.fast {
			t.Errorf("%q: taken without the tree %v, want %v", c.args, fast, c.fast)
		}
		code, out, errOut := answer(c.args, events[c.event], false)
		treeCode, treeOut, treeErr := answer(c.args, events[c.event], true)
		if code != treeCode || out != treeOut || errOut != treeErr {
			t.Errorf("%q on %s:\nfast: exit %d stdout %q stderr %q\ntree: exit %d stdout %q stderr %q", c.args, c.event, code, out, errOut, treeCode, treeOut, treeErr)
		}
	}
}

// TestInstalledHooksTakeTheFastPath: every command line install writes that
// runs laserbrain itself is one the fast path takes.
func TestInstalledHooksTakeTheFastPath(t *testing.T) {
	self := "/opt/laserkit/bin/laserbrain" // no laserbrain-gate beside it
	n := 0
	for _, name := range client.Names {
		for _, ev := range client.Events {
			argv := client.Argv(self, name, ev.Event)
			if argv[0] != self {
				t.Fatalf("%s %s runs %s, not %s", name, ev.Event, argv[0], self)
			}
			if _, ok := fastHook(argv[1:]); !ok {
				t.Errorf("%s %s: %q goes through the command tree", name, ev.Event, argv[1:])
			}
			n++
		}
	}
	if n < 7*len(client.Events) {
		t.Fatalf("only %d command lines checked", n)
	}
}

// The status the installed command takes for an answer is the one the
// exit-code table documents for the hook.
func TestAnsweredStatusDocumented(t *testing.T) {
	if int(cli.ExitAnswered) != client.AnsweredStatus {
		t.Errorf("the table's answered is %d, the installed command's %d", cli.ExitAnswered, client.AnsweredStatus)
	}
}
