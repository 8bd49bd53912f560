package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// undoForms are ways an agent destroys local work that no reading of the
// command line catches whole: a recipe the agent wrote, code built from
// strings, xargs on input nobody saw, SQL decoded from base64 — and git's
// own destroyers. setup prepares the fixture before the run (the recipe
// the agent wrote earlier).
var undoForms = []struct{ name, setup, form string }{
	{"make-recipe", "Makefile\x00clean:\n\trm -rf src\n", "make -s clean"},
	{"npm-script", "package.json\x00{\"name\":\"shop\",\"version\":\"1.0.0\",\"scripts\":{\"clean\":\"rm -rf src\"}}\n", "npm run -s clean"},
	{"python-rmtree", "", `python3 -c "import shutil; shutil.rmtree('s' + 'rc')"`},
	{"node-rmsync", "", `node -e "require('fs').rmSync(['s', 'rc'].join(''), {recursive: true})"`},
	{"xargs-checkout", "", "git ls-files -m | xargs git checkout --"},
	{"reset-hard", "", "git reset -q --hard HEAD~1"},
	{"clean-fdx", "", "git clean -q -fdx"},
	{"checkout-dot", "", "git checkout -- ."},
	{"truncate-modified", "", "truncate -s 0 src/main.go"},
	{"base64-drop-table", "", "echo " + base64.StdEncoding.EncodeToString([]byte("DROP TABLE users;")) + " | base64 -d | sqlite3 " + undotest.DB},
	{"branch-delete-gc", "", "git branch -q -D feature && git reflog expire --expire=now --all && git gc -q --prune=now"},
	{"stash-drop", "", "git stash drop -q"},
	{"mv-src-up", "", "mv src .."},
	// The checkpoints themselves, the refs and their logs, then every
	// object nothing references: the kernel keeps the home read-only to
	// the agent, and the store holds its own objects.
	{"home-refs-gc", "", `rm -rf "$LASERBRAIN_HOME/undo" .git/refs/heads .git/packed-refs .git/logs; git gc -q --prune=now; rm -rf src`},
}

// undoAgent is the agent: the call announced through the installed hook
// as Claude Code runs it (its answer kept, not obeyed), then carried out
// anyway.
const undoAgent = `echo "$LASERBRAIN_RUN" > "$OUT/run"
sh -c "$HOOK" < "$OUT/call.json" > "$OUT/gate.out" 2> "$OUT/gate.err"; echo $? > "$OUT/gate.code"
sh -c "$FORM" > "$OUT/form.out" 2>&1; echo $? > "$OUT/form.code"
`

// TestUndoAfterEachDestructiveForm is the acceptance of laserbrain undo:
// for each form, announced as a client would (a PreToolUse payload through
// the installed gate, inside laserbrain run with its confinement) and then
// run anyway, laserbrain undo --run R --last brings back the tree, the
// ignored database the policy names, the branches, the stash and the
// index, byte for byte (real files, git for-each-ref, git stash list, the
// reflog's bytes, git ls-files -s, the table's rows), and undo --list names
// the call and what it changed. Each form is first shown to have destroyed
// something, so the test can fail.
func TestUndoAfterEachDestructiveForm(t *testing.T) {
	for _, tool := range []string{"git", "sqlite3", "make", "npm", "node", "python3"} {
		testenv.LookPath(t, tool)
	}
	lb, gate := confinedBinaries(t)
	for _, f := range undoForms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			home, repo, out := filepath.Join(root, "home"), filepath.Join(root, "repo"), filepath.Join(root, "out")
			for _, d := range []string{home, repo, out} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			lbHome := filepath.Join(home, ".config", "laserbrain")
			env := append(os.Environ(), "HOME="+home, "LASERBRAIN_HOME="+lbHome, "LASERBRAIN_STORE=", "XDG_CONFIG_HOME=",
				"LASERBRAIN_RUN=", "LASERBRAIN_CONFINE=", "CLAUDE_CODE_SESSION_ID=", "CLAUDE_PROJECT_DIR=", "CI=",
				"GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"), "GIT_CONFIG_NOSYSTEM=1", "npm_config_update_notifier=false")
			if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = t\n\temail = t@example.com\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			undotest.Repo(t, repo)
			if name, data, ok := strings.Cut(f.setup, "\x00"); ok {
				undotest.Write(t, repo, name, data)
			}
			run := func(name string, args ...string) (string, int) {
				t.Helper()
				cmd := exec.Command(name, args...)
				cmd.Dir, cmd.Env = repo, env
				var b bytes.Buffer
				cmd.Stdout, cmd.Stderr = &b, &b
				err := cmd.Run()
				if _, ok := err.(*exec.ExitError); err != nil && !ok {
					t.Fatalf("%s %v: %v", name, args, err)
				}
				return b.String(), cmd.ProcessState.ExitCode()
			}
			if o, code := run(lb, "install", "claude", "--scope", "project"); code != 0 {
				t.Fatalf("install: %s", o)
			}
			hookCmd := installedPreToolUse(t, repo, gate)
			call, _ := json.Marshal(map[string]any{"session_id": "s-" + f.name, "tool_use_id": "toolu_" + f.name, "cwd": repo,
				"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": f.form}})
			if err := os.WriteFile(filepath.Join(out, "call.json"), call, 0o644); err != nil {
				t.Fatal(err)
			}
			before, rows := undotest.Take(t, repo), undotest.Rows(t, repo)

			env = append(env, "HOOK="+hookCmd, "FORM="+f.form, "OUT="+out, "CLAUDE_CODE_SESSION_ATTENDED=0")
			o, code := run(lb, "run", "--agent", "undo-test", "--unattended", "--", "sh", "-c", undoAgent)
			formOut, _ := os.ReadFile(filepath.Join(out, "form.out"))
			gateOut, _ := os.ReadFile(filepath.Join(out, "gate.out"))
			gateErr, _ := os.ReadFile(filepath.Join(out, "gate.err"))
			t.Logf("the gate answered %s%s; the form printed %s", gateOut, gateErr, formOut)
			if code != 0 {
				t.Fatalf("laserbrain run exited %d:\n%s", code, o)
			}
			if f.name == "home-refs-gc" && strings.Contains(o, "not confined by the kernel") {
				testenv.SkipOrFail(t, "the agent is not confined here, so nothing keeps it from the checkpoints: %s", o)
			}
			runID, err := os.ReadFile(filepath.Join(out, "run"))
			if err != nil {
				t.Fatal(err)
			}
			r := strings.TrimSpace(string(runID))
			if undotest.Diff(before, undotest.Take(t, repo)) == "" && undotest.Rows(t, repo) == rows {
				t.Fatalf("%s destroyed nothing in the fixture (it printed %s): the test would prove nothing", f.form, formOut)
			}

			list, code := run(lb, "undo", "--run", r, "--list")
			if code != 0 || !strings.Contains(list, "toolu_"+f.name) {
				t.Fatalf("undo --list (exit %d) does not name the call toolu_%s:\n%s", code, f.name, list)
			}
			for _, line := range strings.Split(list, "\n") {
				if strings.Contains(line, "toolu_"+f.name+" (") && (strings.Contains(line, " nothing ") || !strings.Contains(line, "laserbrain undo --run "+r+" --to toolu_"+f.name)) {
					t.Errorf("undo --list says the call changed nothing, or gives no undo for it:\n%s", list)
				}
			}
			if o, code := run(lb, "undo", "--run", r, "--last"); code != 0 {
				t.Fatalf("undo --last exited %d:\n%s\n(the list was:\n%s)", code, o, list)
			}
			if d := undotest.Diff(before, undotest.Take(t, repo)); d != "" {
				t.Errorf("after laserbrain undo --last the work tree differs from before %q:\n%s", f.form, d)
			}
			if got := undotest.Rows(t, repo); got != rows {
				t.Errorf("after laserbrain undo --last the table reads %q, want %q", got, rows)
			}
		})
	}
}

// installedPreToolUse is the pre-tool-use command laserbrain install wrote
// into the project's Claude Code settings, which must run the gate.
func installedPreToolUse(t *testing.T, repo, gate string) string {
	t.Helper()
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	data, err := os.ReadFile(filepath.Join(repo, ".claude", "settings.json"))
	if err != nil || json.Unmarshal(data, &settings) != nil || len(settings.Hooks["PreToolUse"]) == 0 {
		t.Fatalf("the installed settings: %v %s", err, data)
	}
	cmd := settings.Hooks["PreToolUse"][0].Hooks[0].Command
	if !strings.Contains(cmd, gate) {
		t.Fatalf("the installed pre-tool-use hook does not run the gate %s: %s", gate, cmd)
	}
	return cmd
}

// The real Claude Code CLI under laserbrain run, installed as a person
// installs it, its Bash destroying work in two calls that go through (a
// day's uncommitted change truncated, src moved out of the work tree; a
// person authorized each where the gate would refuse it): its own hooks
// take the checkpoints, under the
// model's own tool_use ids. undo --list names both calls with what each
// changed; undo --last takes back the second alone; undo --to the first
// brings back the tree, the stash, the branches, the index and the named
// database byte for byte.
func TestUndoAfterClaudeCode(t *testing.T) {
	for _, tool := range []string{"git", "sqlite3"} {
		testenv.LookPath(t, tool)
	}
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cc,
		cc.Shell("toolu_truncate", "truncate -s 0 src/main.go"),
		cc.Shell("toolu_move", "mv src .."),
		agenttest.Say("Done."))
	s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"), "CLAUDE_CODE_SESSION_ATTENDED=0")
	undotest.Repo(t, s.Dir)
	s.Install(t, lb)
	// A person lets the agent run each form once where the gate would
	// refuse it (the gate's reading is not what is tested here); a form
	// the gate never refuses needs no authorization, and says so.
	for _, form := range [][]string{{"truncate", "-s", "0", "src/main.go"}, {"mv", "src", ".."}} {
		a := s.Run(t, lb, append([]string{"authorize", "--agent", "undo-claude", "--reason", "the undo test's agent", "--"}, form...)...)
		if a.ExitCode != 0 && !strings.Contains(a.Stderr, "no authorization would ever be used") {
			t.Fatalf("laserbrain authorize %v: exit %d\n%s%s", form, a.ExitCode, a.Stdout, a.Stderr)
		}
	}
	before, rows := undotest.Take(t, s.Dir), undotest.Rows(t, s.Dir)

	r := s.PromptVia(t, lb, []string{"run", "--agent", "undo-claude", "--"}, "clean up")
	if r.JSON == nil {
		t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, clipOut(r.Stderr))
	}
	for _, id := range []string{"toolu_truncate", "toolu_move"} {
		if tr := s.Model.ResultAfter(t, id); tr.IsError || strings.Contains(tr.Text, "operator gate") {
			t.Fatalf("%s did not run (the gate or the client refused it): %q", id, tr.Text)
		}
	}
	if undotest.Diff(before, undotest.Take(t, s.Dir)) == "" {
		t.Fatal("the agent's calls destroyed nothing in the fixture: the test would prove nothing")
	}

	list := s.Run(t, lb, "undo", "--list")
	t.Logf("laserbrain undo --list:\n%s", list.Stdout)
	for _, want := range []string{
		"call toolu_truncate (Bash: truncate -s 0 src/main.go)",
		"call toolu_move (Bash: mv src ..)",
		"laserbrain undo --run ",
	} {
		if list.ExitCode != 0 || !strings.Contains(list.Stdout, want) {
			t.Fatalf("undo --list (exit %d) does not say %q:\n%s%s", list.ExitCode, want, list.Stdout, list.Stderr)
		}
	}
	last := s.Run(t, lb, "undo", "--last")
	if last.ExitCode != 0 || !strings.Contains(last.Stdout, "back to before call toolu_move") {
		t.Fatalf("undo --last (exit %d):\n%s%s", last.ExitCode, last.Stdout, last.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "src", "main.go")); err != nil || len(b) != 0 {
		t.Fatalf("after undo --last, src/main.go should be back as the first call left it (empty): %v %q", err, b)
	}
	to := s.Run(t, lb, "undo", "--to", "toolu_truncate")
	if to.ExitCode != 0 || !strings.Contains(to.Stdout, "back to before call toolu_truncate") {
		t.Fatalf("undo --to toolu_truncate (exit %d):\n%s%s\n(the list was:\n%s)", to.ExitCode, to.Stdout, to.Stderr, list.Stdout)
	}
	if d := undotest.Diff(before, undotest.Take(t, s.Dir)); d != "" {
		t.Errorf("after laserbrain undo --to toolu_truncate the work tree differs from before the session:\n%s", d)
	}
	if got := undotest.Rows(t, s.Dir); got != rows {
		t.Errorf("after the undo the table reads %q, want %q", got, rows)
	}
}
