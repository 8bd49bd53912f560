package supervise

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// deliver takes what waits for agent, as a hook of its would.
func (r *repo) deliver(agent string) []fleet.Message {
	r.t.Helper()
	got, err := r.st.Deliver(context.Background(), r.fid, agent, fleet.Delivery{At: time.Now(), Via: "test"})
	r.must(err)
	return got
}

func kinds(ms []fleet.Message) string {
	var k []string
	for _, m := range ms {
		k = append(k, m.Kind)
	}
	return strings.Join(k, " ")
}

// TestVoiceCollision: the agent the route makes yield is told so and told
// it is halted (who did it, how a person releases it), once; after a
// person's release it is told that too, with the round the halt came from;
// each delivery is journaled with that round.
func TestVoiceCollision(t *testing.T) {
	r := newRepo(t, "parser/lexer.go", "parser/parse.go", "parser/ast.go")
	parser := []string{"parser/lexer.go", "parser/parse.go", "parser/ast.go"}
	a := r.session("the parser architecture", parser, []func(*ponder.Engine, string){grade(t, "u0001", "u0002", "u0003"), nil}, false)
	b := r.session("architecture of the parser", parser[:2], []func(*ponder.Engine, string){grade(t, "u0001", "u0002")}, false)
	A, B := fleet.PonderAgent(a), fleet.PonderAgent(b)
	rd := r.round()
	if len(rd.Halts) != 1 || rd.Halts[0].Agent != B {
		t.Fatalf("halts = %+v", rd.Halts)
	}
	got := r.deliver(B)
	if kinds(got) != "halt yield" && kinds(got) != "yield halt" {
		t.Fatalf("told %q, want the halt and the yield", kinds(got))
	}
	for _, m := range got {
		if m.Round != rd.Round {
			t.Errorf("%s from round %d, want %d", m.Kind, m.Round, rd.Round)
		}
		switch m.Kind {
		case fleet.MessageHalt:
			if !strings.Contains(m.Text, "halted by supervisor") || !strings.Contains(m.Text, "laserbrain supervise release "+B) {
				t.Errorf("halt message %q does not say who and how to release", m.Text)
			}
		case fleet.MessageYield:
			if !strings.Contains(m.Text, "yield to "+A) {
				t.Errorf("yield message %q", m.Text)
			}
		}
	}
	if got := r.deliver(A); len(got) != 0 {
		t.Errorf("the agent that keeps the ground was told %q", kinds(got))
	}
	// Later rounds say nothing new; nothing is handed out twice.
	r.round()
	if got := r.deliver(B); len(got) != 0 {
		t.Fatalf("told again: %q", kinds(got))
	}
	if _, err := Release(context.Background(), r.st, r.fid, b, "ana", "they split the work", time.Now()); err != nil {
		t.Fatal(err)
	}
	got = r.deliver(B)
	if len(got) != 1 || got[0].Kind != fleet.MessageRelease || got[0].Round != rd.Round ||
		!strings.Contains(got[0].Text, "released by ana: they split the work. You may go on.") {
		t.Fatalf("after the release: %+v", got)
	}
	recs, err := r.st.JournalRecords(context.Background(), r.fid, 0)
	r.must(err)
	var delivered []string
	for _, rec := range recs {
		if rec.Kind == fleet.JournalDelivery {
			delivered = append(delivered, rec.Agent)
			if rec.Round != rd.Round {
				t.Errorf("a delivery journaled with round %d, want %d", rec.Round, rd.Round)
			}
		}
	}
	if len(delivered) != 3 {
		t.Fatalf("%d deliveries journaled, want 3", len(delivered))
	}
	head, _ := r.st.JournalHead(context.Background(), r.fid)
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		t.Fatal(p)
	}
}

// TestVoiceDrift: a drifting run is told its verdict's advice, once per
// drifting check; after an escalation a person answers, and the answer is
// what it is told (not the advice again).
func TestVoiceDrift(t *testing.T) {
	r := newRepo(t)
	runs := laserbrain.NewMemStore()
	r.opts.Runs = runs
	r.opts.EscalateAfter = 3
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		zero := 0
		return Resolution{Exit: &zero, Decision: "PERSON-SAYS: go back to the parser"}
	}
	step := r.checkingRun(runs)
	const who = "claude:r1"
	step("write the parser")
	r.round()
	if got := r.deliver(who); len(got) != 0 {
		t.Fatalf("a grounded run was told %q", kinds(got))
	}
	step("paint the kitchen walls")
	r.round()
	got := r.deliver(who)
	if len(got) != 1 || got[0].Kind != fleet.MessageAdvice || !strings.HasPrefix(got[0].Text, "Your goal no longer matches") {
		t.Fatalf("after a drift: %+v", got)
	}
	r.round() // nothing new: said once
	if got := r.deliver(who); len(got) != 0 {
		t.Fatalf("the same advice again: %+v", got)
	}
	step("paint the kitchen walls")
	step("paint the kitchen walls")
	r.round()
	got = r.deliver(who)
	if len(got) != 1 || got[0].Kind != fleet.MessageAnswer || !strings.Contains(got[0].Text, "PERSON-SAYS: go back to the parser") {
		t.Fatalf("after the escalation: %+v", got)
	}
	if !strings.HasPrefix(got[0].Told(), "laserbrain supervisor (round ") {
		t.Errorf("Told() = %q", got[0].Told())
	}
}
