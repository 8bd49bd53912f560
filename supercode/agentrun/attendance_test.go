package agentrun

import (
	"strings"
	"testing"

	"github.com/laserkit/laserkit/operator"
)

// Every source of presence, alone and against each other: Claude Code's
// CLAUDE_CODE_SESSION_ATTENDED (which it sets for its hooks), laserbrain
// run's LASERBRAIN_ATTENDED, a CI job and a loop's session.
func TestAttendance(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want operator.Presence
		why  string
	}{
		{nil, operator.PresenceUnknown, "nothing in the environment says"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0"}, operator.Unattended, "CLAUDE_CODE_SESSION_ATTENDED=0"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "1"}, operator.Attended, "CLAUDE_CODE_SESSION_ATTENDED=1"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "maybe"}, operator.PresenceUnknown, "nothing in the environment says whether a person is there; ignored CLAUDE_CODE_SESSION_ATTENDED=maybe (not 1/0, true/false or yes/no)"},
		// Every spelling of yes and no, in any case.
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "false"}, operator.Unattended, "CLAUDE_CODE_SESSION_ATTENDED=false"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "No"}, operator.Unattended, "CLAUDE_CODE_SESSION_ATTENDED=No"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "TRUE"}, operator.Attended, "CLAUDE_CODE_SESSION_ATTENDED=TRUE"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "yes"}, operator.Attended, "CLAUDE_CODE_SESSION_ATTENDED=yes"},
		{map[string]string{EnvAttended: "false"}, operator.Unattended, "LASERBRAIN_ATTENDED=false"},
		{map[string]string{EnvAttended: " no "}, operator.Unattended, "LASERBRAIN_ATTENDED= no "},
		{map[string]string{EnvAttended: "Yes"}, operator.Attended, "LASERBRAIN_ATTENDED=Yes"},
		{map[string]string{EnvAttended: "banana"}, operator.PresenceUnknown, "ignored LASERBRAIN_ATTENDED=banana"},
		// An ignored value does not hide another source's word.
		{map[string]string{EnvAttended: "banana", "CI": "true"}, operator.Unattended, "a CI job (CI=true); ignored LASERBRAIN_ATTENDED=banana"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "2", EnvAttended: "0"}, operator.Unattended, "LASERBRAIN_ATTENDED=0); ignored CLAUDE_CODE_SESSION_ATTENDED=2"},
		{map[string]string{EnvAttended: "y es"}, operator.PresenceUnknown, `ignored LASERBRAIN_ATTENDED="y es"`},
		{map[string]string{"CI": "no"}, operator.PresenceUnknown, "nothing"},
		{map[string]string{"LASERBRAIN_LOOP_RUN": "0123abcd"}, operator.Unattended, "laserbrain loop (LASERBRAIN_LOOP_RUN=0123abcd)"},
		{map[string]string{EnvAttended: "0"}, operator.Unattended, "LASERBRAIN_ATTENDED=0"},
		{map[string]string{EnvAttended: "1"}, operator.Attended, "LASERBRAIN_ATTENDED=1"},
		{map[string]string{"CI": "true"}, operator.Unattended, "CI=true"},
		{map[string]string{"CI": "1"}, operator.Unattended, "CI=1"},
		{map[string]string{"CI": "false"}, operator.PresenceUnknown, "nothing"},
		{map[string]string{"CI": "0"}, operator.PresenceUnknown, "nothing"},
		{map[string]string{"CI": " "}, operator.PresenceUnknown, "nothing"},
		// Without Claude Code's word, any sign of nobody wins.
		{map[string]string{EnvAttended: "1", "CI": "true"}, operator.Unattended, "CI=true"},
		{map[string]string{EnvAttended: "1", "LASERBRAIN_LOOP_RUN": "l"}, operator.Unattended, "laserbrain loop"},
		// Claude Code decides for its own session.
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "1", "CI": "true", "LASERBRAIN_LOOP_RUN": "l"}, operator.Attended, "CLAUDE_CODE_SESSION_ATTENDED=1"},
		{map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0", EnvAttended: "1"}, operator.Unattended, "CLAUDE_CODE_SESSION_ATTENDED=0"},
	} {
		p, why := Attendance(func(k string) string { return c.env[k] })
		if p != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%v: %s (%s), want %s (%s)", c.env, p, why, c.want, c.why)
		}
	}
}

// laserbrain run: nobody answers an agent without a terminal on its
// standard input, a command in its client's headless mode (the seam reads
// that, supercode/client's Headless), or when told so.
func TestSpawnPresence(t *testing.T) {
	for _, c := range []struct {
		headless   string
		terminal   bool
		unattended bool
		want       operator.Presence
	}{
		{"", true, false, operator.Attended},
		{"claude -p (print mode) asks nobody", true, false, operator.Unattended},
		{"", false, false, operator.Unattended},
		{"", true, true, operator.Unattended},
	} {
		if p, why := SpawnPresence(c.headless, c.terminal, c.unattended); p != c.want || why == "" {
			t.Errorf("%q terminal=%v unattended=%v: %s (%q), want %s", c.headless, c.terminal, c.unattended, p, why, c.want)
		}
	}
}

// The MCP server finds the session from the client's variable: Claude
// Code's, or Qwen Code's (seen: QWEN_CODE_SESSION_ID is the payloads'
// session_id and reaches the MCP server); a payload's own id wins.
func TestCallerSessionFromTheClientsVariable(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		payload string
		want    string
	}{
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "c-1"}, "", "c-1"},
		{map[string]string{"QWEN_CODE_SESSION_ID": "q-1"}, "", "q-1"},
		{map[string]string{"QWEN_CODE_SESSION_ID": "q-1"}, "p-1", "p-1"},
		{nil, "", ""},
	} {
		s := &Tracker{Getenv: func(k string) string { return c.env[k] }}
		if got := s.Caller(c.payload, "/r").Session; got != c.want {
			t.Errorf("%v %q: session %q, want %q", c.env, c.payload, got, c.want)
		}
	}
}
