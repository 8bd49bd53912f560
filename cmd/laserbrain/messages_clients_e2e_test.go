package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// What the hooks hand the model must reach it, for every client: each real
// client, under laserbrain run, against its scripted model. A message the
// supervisor queued while the agent works is delivered on an event whose
// answer that client carries (client.Tells) — and then its text is in the
// conversation the model is sent, once — or, where none of the events the
// client fired can carry it, it is still waiting, never lost. The
// session's brief reaches the model wherever the client carries
// SessionStart's context.
func TestMessagesReachEveryClient(t *testing.T) {
	lb := laserbrainBinary(t)
	for _, c := range agenttest.Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			const probe = "PROBE-SAYS-7: keep to the parser"
			fleetID := "voice-" + c.Name
			var s *agenttest.Session
			var said error
			var agent string
			first := c.Shell("call_v1", "echo one")
			first.Before = func() { agent, said = sayTo(filepath.Join(s.Home, "laserbrain", "fleet"), fleetID, probe) }
			s = agenttest.NewAgent(t, c, first, c.Shell("call_v2", "echo two"), c.Shell("call_v3", "echo three"), agenttest.Say("Done."))
			s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"), "LASERBRAIN_FLEET="+fleetID)
			switch c {
			case agenttest.Copilot:
				s.Install(t, lb) // Copilot CLI takes no hooks for one invocation
			case agenttest.GeminiCLI, agenttest.Cline, agenttest.QwenCode:
				// laserbrain run's own layer for them (a system settings
				// file; --hooks-dir) was seen not to get our hooks run at
				// all by Gemini CLI 0.61.0 and Cline 3.0.65, and by Qwen
				// Code 0.24.4 in some runs only; the user-scope install
				// does, every time.
				s.Install(t, lb)
			}
			r := s.PromptVia(t, lb, []string{"run", "--agent", "voice", "--"}, "work on the task")
			if r.ExitCode != 0 {
				t.Fatalf("laserbrain run -- %s: exit %d\n%s", c.Name, r.ExitCode, r.Stderr)
			}
			if said != nil {
				t.Fatalf("queueing the message: %v", said)
			}
			mains := s.Model.MainRequests()
			if len(mains) == 0 {
				t.Fatal("the model was never asked")
			}
			conv := string(mains[len(mains)-1].Body)
			name := client.Name(c.Name)
			if ok, _, _ := client.Tells(name, client.SessionStart, client.Reply{}); ok &&
				!strings.Contains(string(mains[0].Body), "Spell your state with "+client.CheckTool(name)) {
				t.Errorf("%s carries SessionStart's context, but the brief is not in the first request", c.Name)
			}

			st, err := fleet.OpenLocal(filepath.Join(s.Home, "laserbrain", "fleet"))
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := st.Messages(context.Background(), fleetID, agent)
			if err != nil || len(msgs) != 1 {
				t.Fatalf("messages: %v, %v", msgs, err)
			}
			m := msgs[0]
			if m.Delivered == nil {
				for _, ev := range []client.EventName{client.PreToolUse, client.PostToolUse, client.Stop} {
					if ok, _, _ := client.Tells(name, ev, client.Reply{}); ok {
						t.Errorf("%s carries text on %s, and the message was never handed out", c.Name, ev)
					}
				}
				if strings.Contains(conv, "PROBE-SAYS-7") {
					t.Error("the message reached the model but is not marked delivered")
				}
				t.Logf("%s: no event it fired carries text: the message waits", c.Name)
				return
			}
			if n := strings.Count(conv, "PROBE-SAYS-7"); n != 1 {
				t.Errorf("%s: the message was handed out on %s, and is %d times in the conversation the model was sent; want once",
					c.Name, m.Delivered.Via, n)
			}
			t.Logf("%s: delivered on %s", c.Name, m.Delivered.Via)
		})
	}
}

// sayTo queues text for the one agent run of fleet fleetID in the store at
// dir, as a supervisor round would; it returns the agent's name.
func sayTo(dir, fleetID, text string) (string, error) {
	st, err := fleet.OpenLocal(dir)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, fleet.RunFilter{Fleet: fleetID})
	if err != nil {
		return "", err
	}
	if len(runs) != 1 {
		return "", errors.New("not one run in the fleet")
	}
	agent := fleet.RunAgent(runs[0])
	_, err = st.Say(ctx, fleet.Message{ID: "probe", Fleet: fleetID, Agent: agent, Kind: fleet.MessageAnswer, Round: 1, Text: text, At: time.Now().UTC()})
	return agent, err
}
