package loop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "agents.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStarterServices(t *testing.T) {
	c := Starter()
	for _, name := range []string{"fix", "task", "judge"} {
		s, err := c.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != KindClaude || s.Enabled != "YES" {
			t.Errorf("%s: %+v", name, s)
		}
		p, err := s.systemPrompt()
		if err != nil || len(p) < 100 {
			t.Errorf("%s: starter prompt %q %v", name, p, err)
		}
	}
	judge, _ := c.Lookup("judge")
	if err := judge.CheckRole(roleJudge); err != nil {
		t.Errorf("the starter judge cannot judge: %v", err)
	}
	fix, _ := c.Lookup("fix")
	if err := fix.CheckRole(roleJudge); err == nil || !strings.Contains(err.Error(), "fix_TOOLS has no verdict") {
		t.Errorf("fix as a judge: %v", err)
	}
}

// An rc.conf-style file: values expand as in the shell (the environment,
// earlier lines), quoting works, services inherit, aliases resolve.
func TestLoadConfig(t *testing.T) {
	t.Setenv("LOOP_TEST_BIN", "/opt/bots")
	p := writeConf(t, `# review bots
TOOLS_RO="read search git_diff"
review_ENABLED="YES"
review_KIND=command
review_COMMAND="$LOOP_TEST_BIN/review 'two words' --strict"
review_TOOLS="$TOOLS_RO verdict escalate"
review_ALIASES="rv critic"
strict_INHERIT=review
strict_SYSTEM='Be strict: "no" means no.'
judge_MODEL=opus
fix_ENABLED=NO
DEFAULT_AGENT=task
`)
	c, err := LoadConfig(p, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Lookup("critic")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "review" || r.Kind != KindCommand || !slices.Equal(r.Command, []string{"/opt/bots/review", "two words", "--strict"}) ||
		!slices.Equal(r.Tools, []string{"read", "search", "git_diff", "verdict", "escalate"}) {
		t.Errorf("review: %+v", r)
	}
	s, _ := c.Lookup("strict")
	if s.Kind != KindCommand || s.Enabled != "YES" || !slices.Equal(s.Command, r.Command) || s.System != `Be strict: "no" means no.` {
		t.Errorf("strict did not inherit review: %+v", s)
	}
	if j, _ := c.Lookup("judge"); j.Model != "opus" || j.Kind != KindClaude || !j.HasTool("verdict") {
		t.Errorf("judge kept its starter fields: %+v", j)
	}
	if f, _ := c.Lookup("fix"); f.CheckRole(roleAgent) == nil {
		t.Error("a disabled fix may run")
	}
	if c.DefaultAgent != "task" {
		t.Errorf("DEFAULT_AGENT %q", c.DefaultAgent)
	}
}

// Bad files are refused with the line and what is wrong.
func TestLoadConfigRefuses(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{
		"a command":            {"fix_ENABLED=YES\nrm -rf /\n", "agents.conf:2: only NAME=\"value\" assignments"},
		"command substitution": {`fix_MODEL="$(cat model)"`, "command substitution is not allowed"},
		"unknown field":        {`fix_TOOL="bash"`, "fix_TOOL: unknown field TOOL"},
		"bad kind":             {`fix_KIND=docker`, `fix_KIND="docker": want claude, command or messages`},
		"bad enabled":          {`fix_ENABLED=maybe`, `want YES, MANUAL or NO`},
		"command w/o COMMAND":  {"x_ENABLED=YES\nx_KIND=command\n", "has no x_COMMAND"},
		"messages w/o MODEL":   {"j_ENABLED=YES\nj_KIND=messages\nj_TOOLS=verdict\n", "j is j_KIND=messages but has no j_MODEL"},
		"messages with bash":   {"j_ENABLED=YES\nj_KIND=messages\nj_MODEL=m\nj_TOOLS=\"bash verdict\"\n", "j_TOOLS names bash (a messages judge has read, search, git_diff, verdict, escalate)"},
		"inherit unknown":      {`x_INHERIT=nobody`, `no such service`},
		"inherit cycle":        {"a_INHERIT=b\nb_INHERIT=a\n", "inheritance cycle"},
		"missing prompt file":  {`fix_PROMPT="nope.md"`, "fix_PROMPT"},
		"does not parse":       {`fix_MODEL="unclosed`, "agents config"},
		"alias clash":          {"a_ALIASES=z\nb_ALIASES=z\na_ENABLED=YES\nb_ENABLED=YES\n", "alias z names both"},
		"default agent":        {`DEFAULT_AGENT=nobody`, `DEFAULT_AGENT: no service "nobody"`},
	} {
		_, err := LoadConfig(writeConf(t, c.text), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// Without --agents, ./agents.conf is read when there is one.
func TestLoadConfigDefaultPath(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadConfig("", dir)
	if err != nil || c.Path != "" {
		t.Fatalf("no agents.conf: %v %q", err, c.Path)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents.conf"), []byte("judge_MODEL=haiku\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = LoadConfig("", dir)
	if err != nil || c.Services["judge"].Model != "haiku" {
		t.Fatalf("./agents.conf not read: %v", err)
	}
}

func TestClaudeTools(t *testing.T) {
	builtin, allowed := claudeTools([]string{"read", "search", "git_diff", "verdict", "escalate"})
	if !slices.Equal(builtin, []string{"Read", "Grep", "Glob", "Bash"}) {
		t.Errorf("judge built-ins: %v", builtin)
	}
	if !slices.Equal(allowed, []string{"Read", "Grep", "Glob", "Bash(git diff:*)", "Bash(git log:*)", "Bash(git show:*)",
		"mcp__laserbrain__verdict", "mcp__laserbrain__escalate"}) {
		t.Errorf("judge allowed: %v", allowed)
	}
	builtin, allowed = claudeTools([]string{"bash", "edit", "WebFetch", "Bash(npm test:*)", "mcp__other__x"})
	if !slices.Equal(builtin, []string{"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "WebFetch"}) ||
		!slices.Contains(allowed, "Bash(npm test:*)") || !slices.Contains(allowed, "mcp__other__x") {
		t.Errorf("agent: %v %v", builtin, allowed)
	}
}

func TestParseJudge(t *testing.T) {
	l := &Loop{o: Options{Settings: Settings{Soak: 2, Pedantic: true}}}
	a, err := l.parseJudge([]string{"judge", "--jury", "3", "Is", "it", "done?"})
	if err != nil || a.name != "judge" || a.jury != 3 || a.soak != 0 || !a.pedantic || a.instr != "Is it done?" {
		t.Fatalf("%+v %v", a, err)
	}
	a, err = l.parseJudge([]string{"judge", "--goldfish", "--soak=4", "--", "--not-a-flag"})
	if err != nil || a.soak != 4 || !a.goldfish || a.instr != "--not-a-flag" {
		t.Fatalf("%+v %v", a, err)
	}
	a, err = l.parseJudge([]string{"judge"})
	if err != nil || a.soak != 2 {
		t.Fatalf("loop default: %+v %v", a, err)
	}
	for _, bad := range [][]string{{"judge", "--soak", "2", "--jury", "2"}, {"judge", "--soak", "zero"}, {"judge", "--soak"}, {"judge", "--quick"}} {
		if _, err := l.parseJudge(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

// A messages service judges and never serves as an agent.
func TestMessagesServiceOnlyJudges(t *testing.T) {
	c, err := LoadConfig(writeConf(t, "j_ENABLED=YES\nj_KIND=messages\nj_MODEL=m\nj_TOOLS=\"read verdict\"\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Lookup("j")
	if err := s.CheckRole(roleJudge); err != nil {
		t.Fatalf("judge: %v", err)
	}
	if err := s.CheckRole(roleAgent); err == nil || !strings.Contains(err.Error(), "it can only judge") {
		t.Fatalf("agent: %v", err)
	}
	if err := s.checkExecutable(t.TempDir(), nil); err != nil {
		t.Fatalf("a messages service has no program to find: %v", err)
	}
}
