package main

// Seed 002's reference script, ralph.sid, run as the seed gives it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// seed002 is seed 002 (the ralph plan) in the reference material beside
// the project (testenv.SharedPath).
const seed002 = "seeds/002_7c1b37394ef316a8.txt"

// ralphCopy is ralph.sid as extracted from seed 002, for a clone without
// the seed; TestRalphSidShippedVerbatim holds it to the seed.
const ralphCopy = "testdata/ralph.sid"

// ralphFromSeed extracts ralph.sid from its source document: the bytes
// between the heading's opening ```sh fence and the closing fence,
// untouched.
func ralphFromSeed(seed []byte) ([]byte, error) {
	open := []byte("### 6.3 The reference script: `ralph.sid`\n```sh\n")
	i := bytes.Index(seed, open)
	if i < 0 {
		return nil, errors.New("seed 002 has no §6.3 ```sh block")
	}
	body := seed[i+len(open):]
	j := bytes.Index(body, []byte("\n```\n"))
	if j < 0 {
		return nil, errors.New("seed 002's §6.3 block does not close")
	}
	return body[:j+1], nil
}

// ralphScript is the script the testscripts run as ralph.sid: extracted
// from the seed when it is there, else the shipped copy; from says which.
func ralphScript() (script []byte, from string, err error) {
	if p, err := testenv.SharedPath(seed002); err == nil {
		seed, err := os.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		s, err := ralphFromSeed(seed)
		return s, p, err
	}
	s, err := os.ReadFile(ralphCopy)
	if err != nil {
		return nil, "", fmt.Errorf("ralph.sid: no seed 002 beside the project and no %s: %w", ralphCopy, err)
	}
	return s, ralphCopy, nil
}

// The shipped copy is the seed's script byte for byte, so a clone without
// the seed still runs the seed's script and not a retyped one.
func TestRalphSidShippedVerbatim(t *testing.T) {
	seed, err := os.ReadFile(testenv.Shared(t, seed002))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ralphFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(ralphCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from seed 002 §6.3 (re-extract it):\nshipped:\n%s\nseed:\n%s", ralphCopy, got, want)
	}
	for _, line := range []string{"judge judge --soak \"$SOAK\"", "*) echo \"ralph: judge malfunction\" >&2; exit 4 ;;", "exit 0\n"} {
		if !bytes.Contains(want, []byte(line)) {
			t.Fatalf("the extraction lost %q:\n%s", line, want)
		}
	}
}

// seed002Acceptance is the loop's acceptance criteria as tests, as its
// source document numbers them: each criterion, and the
// scripts (testdata/script) and Go tests of this package that check it.
// Criteria 3, 4 and 10 ask a model what it remembers or reads; here the
// judge and the parent are command services or the real CLI against the
// scripted model (internal/agenttest), which show what the session was
// given and where the answer was read, not that a model reasons with it.
var seed002Acceptance = []struct {
	criterion int
	what      string
	scripts   []string
	tests     []string
}{
	{1, "inline (-c) and file scripts run with agent and judge bound; $RUN_DIR and $PLAN pass through",
		[]string{"seed002_1_shell"}, nil},
	{2, "agent: a fresh session per call on stdin, journaled, streamed; §3's codes (an escalating stub, a forced API error)",
		[]string{"seed002_2_agent", "loop_exits"}, []string{"TestSeed002AgentClaudeAPIError"}},
	{3, "judge: one session pinned across iterations, its transcript kept; --goldfish; a fresh judge per run seeded from the thread, recalling its decision",
		[]string{"seed002_3_judge_session", "loop_seed"}, []string{"TestClaudeLoopVerdictBounceAndPinnedSession"}},
	{4, "a turn without a verdict is sent again exactly once with tool_choice verdict (a messages judge; others are asked in words); a malformed rejection bounces once, then ≥ 4; the two are separate strikes",
		[]string{"loop_judge", "loop_ralph"}, []string{"TestClaudeLoopVerdictBounceAndPinnedSession", "TestLoopMessagesJudgeForcedVerdict", "TestLoopMessagesJudgeSeparateStrikes"}},
	{5, "--jury 3: three goldfish samples, any failure 1; --soak 3: three in a row, a failure resets (steps.jsonl)",
		[]string{"loop_judge"}, nil},
	{6, "passing verdicts' suggestions in suggestions.md, in the judge's next pass, swept by agent task",
		[]string{"seed002_6_suggestions", "loop_soak"}, nil},
	{7, "a checkpoint ref before every agent call; the judge's prompt names the prior one and the current one; git diff A B shows what changed, new untracked files too",
		[]string{"seed002_7_checkpoints", "loop_reference"}, []string{"TestClaudeLoopJudgeDiffsTwoCheckpoints"}},
	{8, "SIGINT mid-agent: the child dies, steps.jsonl stays valid, --resume keeps soak and transcript",
		[]string{"loop_control", "loop_child_runs"}, []string{"TestLoopInterruptResume"}},
	{9, "a 10 MiB CI log is capped (64 KiB + 16 KiB, the marker), the full log readable",
		[]string{"loop_cap"}, nil},
	{10, "exactly one paste-style account in the parent's transcript; the journal answers why pass 2 was rejected",
		nil, []string{"TestSeed002ParentTurn"}},
}

// Every acceptance criterion of the loop names tests, and every test it
// names is there: the suite cannot lose a criterion without this failing.
func TestSeed002AcceptanceIndex(t *testing.T) {
	var src strings.Builder
	files, _ := filepath.Glob("*_test.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	seen := map[int]bool{}
	for _, c := range seed002Acceptance {
		seen[c.criterion] = true
		if len(c.scripts)+len(c.tests) == 0 {
			t.Errorf("criterion %d names no test", c.criterion)
		}
		for _, s := range c.scripts {
			if _, err := os.Stat(filepath.Join("testdata", "script", s+".txtar")); err != nil {
				t.Errorf("criterion %d: script %s: %v", c.criterion, s, err)
			}
		}
		for _, name := range c.tests {
			if !strings.Contains(src.String(), "\nfunc "+name+"(t *testing.T)") {
				t.Errorf("criterion %d: no test %s in this package", c.criterion, name)
			}
		}
	}
	for i := 1; i <= 10; i++ {
		if !seen[i] {
			t.Errorf("criterion %d of seed 002 §7 has no entry", i)
		}
	}
}
