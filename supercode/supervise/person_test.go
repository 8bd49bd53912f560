package supervise

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// TestAnswerEscalation: a collision question nobody was asked (no
// --on-escalate) is answered by a person outside the supervisor: the
// answer is journaled as theirs, the agent they named is halted (by them,
// for yielding to the other), both are told the answer at their next
// event, the supervisor's next round does not ask again, and a second
// answer is refused.
func TestAnswerEscalation(t *testing.T) {
	r := newRepo(t, "a.go", "b.go")
	a := r.session("the parser architecture", []string{"a.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	b := r.session("architecture of the parser", []string{"b.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	A, B := fleet.PonderAgent(a), fleet.PonderAgent(b)
	rd := r.round()
	if len(rd.Escalations) != 1 || rd.Escalations[0].Asked {
		t.Fatalf("escalations %+v, want one asked of nobody", rd.Escalations)
	}
	id := rd.Escalations[0].ID
	ctx := context.Background()

	qs, err := Questions(ctx, r.st, r.fid)
	r.must(err)
	if len(qs) != 1 || qs[0].ID != id || qs[0].Answered || len(qs[0].Agents) != 2 {
		t.Fatalf("questions %+v", qs)
	}
	if _, err := AnswerEscalation(ctx, r.st, r.fid, "collision:nobody", "ana", B, time.Now()); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("an unknown question: %v", err)
	}
	q, err := AnswerEscalation(ctx, r.st, r.fid, id, "ana", B+"\nand more lines are not read", time.Now())
	r.must(err)
	if !q.Answered || q.Decision != B || q.By != "ana" {
		t.Fatalf("answered %+v", q)
	}
	h, halted, err := r.st.ActiveHalt(ctx, r.fid, B)
	r.must(err)
	if !halted || h.By != "ana" || h.Reason != "human decision: yield to "+A || h.Cause != CollisionCause(A, nil) {
		t.Fatalf("halt on %s: %v %+v", B, halted, h)
	}
	if _, halted, _ := r.st.ActiveHalt(ctx, r.fid, A); halted {
		t.Fatalf("%s was halted too", A)
	}
	for _, who := range []string{A, B} {
		got := r.deliver(who)
		var answer *fleet.Message
		for i := range got {
			if got[i].Kind == fleet.MessageAnswer {
				answer = &got[i]
			}
		}
		if answer == nil || !strings.HasSuffix(answer.Text, ": "+B) {
			t.Errorf("%s was told %q, not the answer", who, kinds(got))
		}
	}
	if _, err := AnswerEscalation(ctx, r.st, r.fid, id, "bo", A, time.Now()); !errors.Is(err, ErrAnswered) {
		t.Fatalf("a second answer: %v", err)
	}
	recs, err := r.st.JournalRecords(ctx, r.fid, 0)
	r.must(err)
	var answer, halt bool
	for _, rec := range recs {
		answer = answer || rec.Kind == fleet.JournalAnswer && strings.Contains(rec.Text, "answered by ana: "+B)
		halt = halt || rec.Kind == fleet.JournalHalt && rec.Agent == B
	}
	if !answer || !halt {
		t.Fatalf("journal: answer %v, halt %v", answer, halt)
	}
	c, err := fleet.CheckJournal(ctx, r.st, r.fid)
	r.must(err)
	if c.Problem != nil {
		t.Fatalf("the journal does not verify: %+v", c.Problem)
	}
	// A supervisor opened afresh does not ask again, nor halt A.
	r.sup = nil
	rd = r.round()
	if len(rd.Escalations) != 0 || len(rd.Halts) != 0 || agentRow(t, rd, B).Status != StatusHalted || agentRow(t, rd, A).Status != StatusActive {
		t.Fatalf("after the answer: escalations %+v, halts %+v, agents %+v", rd.Escalations, rd.Halts, rd.Agents)
	}
}

// TestAuthorizeJournaled: a person's authorization is journaled as
// theirs, then stored where the gate finds it; on a journal whose chain
// does not hold, nothing is stored.
func TestAuthorizeJournaled(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	now := time.Now().UTC()
	a := fleet.Authorization{ID: "au1", Fleet: r.fid, Run: "r1", Action: "git push origin main", By: "ana (laserbrain ui)", Created: now,
		Expires: now.Add(15 * time.Minute), Uses: 1}
	r.must(Authorize(ctx, r.st, a))
	got, ok, err := fleet.Authorize(ctx, r.st, r.fid, "r1", "claude", "git  push origin main", now)
	r.must(err)
	if !ok || got.ID != "au1" {
		t.Fatalf("the gate does not find it: %v %+v", ok, got)
	}
	recs, err := r.st.JournalRecords(ctx, r.fid, 0)
	r.must(err)
	if len(recs) != 1 || recs[0].Kind != fleet.JournalAuthorize ||
		recs[0].Text != `ana (laserbrain ui) authorized "git push origin main" for run r1: 1 use(s) until `+a.Expires.Format(time.RFC3339) {
		t.Fatalf("journal %+v", recs)
	}

	// Break the chain (a record edited by hand): the next one is refused.
	forgeJournal(t, r)
	b := a
	b.ID = "au2"
	err = Authorize(ctx, r.st, b)
	var broken *fleet.JournalBrokenError
	if !errors.As(err, &broken) {
		t.Fatalf("on a broken journal: %v", err)
	}
	all, err := r.st.ListAuthorizations(ctx, r.fid)
	r.must(err)
	if len(all) != 1 {
		t.Fatalf("stored on a broken journal: %+v", all)
	}
}

// TestWaitingEscalation: with EscalateWaiting an agent that starts
// waiting for a person goes to --on-escalate once per wait, and the
// person's line is told to the agent; once something happened on the run
// (the person answered at the terminal), it is not asked about again; a
// new wait is a new question.
func TestWaitingEscalation(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.must(r.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: r.fid, Dir: r.dir, Created: time.Now()}))
	var asked []Escalation
	r.opts.EscalateWaiting = true
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		asked = append(asked, e)
		zero := 0
		return Resolution{Exit: &zero, Decision: "allow it"}
	}
	wait := func(id string) {
		if _, err := r.st.AppendEvent(ctx, "r1", fleet.RunEvent{ID: id, At: time.Now(), Kind: fleet.KindWaiting, Name: "permission_prompt",
			Text: "Claude needs your permission"}); err != nil {
			t.Fatal(err)
		}
	}
	wait("w1")
	rd := r.round()
	row := agentRow(t, rd, "claude:r1")
	if row.Status != StatusWaiting || row.Waiting == nil || row.Waiting.Kind != "permission_prompt" {
		t.Fatalf("row %+v", row)
	}
	if len(asked) != 1 || asked[0].Kind != EscalateWaiting || asked[0].Who != "claude:r1" ||
		!strings.Contains(asked[0].Question, "is waiting for a person: Claude needs your permission") {
		t.Fatalf("asked %+v", asked)
	}
	if got := r.deliver("claude:r1"); len(got) != 1 || got[0].Kind != fleet.MessageAnswer || !strings.HasSuffix(got[0].Text, ": allow it") {
		t.Fatalf("told %+v", got)
	}
	r.round()
	if len(asked) != 1 {
		t.Fatalf("asked again about one wait: %d", len(asked))
	}
	if _, err := r.st.AppendEvent(ctx, "r1", fleet.RunEvent{ID: "t1", At: time.Now(), Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "ls"}); err != nil {
		t.Fatal(err)
	}
	rd = r.round()
	if row := agentRow(t, rd, "claude:r1"); row.Status != StatusActive || row.Waiting != nil {
		t.Fatalf("after the call: %+v", row)
	}
	wait("w2")
	r.round()
	if len(asked) != 2 {
		t.Fatalf("a second wait: asked %d times", len(asked))
	}
}

// forgeJournal edits the fleet's journal file in place, as a person with
// an editor would: its chain no longer holds.
func forgeJournal(t *testing.T, r *repo) {
	t.Helper()
	path := r.st.JournalLocation(r.fid)
	b, err := os.ReadFile(path)
	r.must(err)
	forged := strings.Replace(string(b), "git push origin main", "git push origin prod", 1)
	if forged == string(b) {
		t.Fatal("nothing to forge")
	}
	r.must(os.WriteFile(path, []byte(forged), 0o644))
}

// TestDriftAnsweredElsewhere: a drift question nobody was asked is
// answered by a person (laserbrain ui) while the supervisor runs: its next
// round takes the answer in — the agent's advice is the person's words —
// and does not ask again.
func TestDriftAnsweredElsewhere(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	runs := laserbrain.NewMemStore()
	r.opts.Runs = runs
	step := r.checkingRun(runs)
	step("write the parser")
	for range 3 {
		step("paint the kitchen walls")
	}
	rd := r.round()
	if len(rd.Escalations) != 1 || rd.Escalations[0].Kind != EscalateDrift {
		t.Fatalf("escalations %+v", rd.Escalations)
	}
	if _, err := AnswerEscalation(ctx, r.st, r.fid, rd.Escalations[0].ID, "ana", "go back to the parser", time.Now()); err != nil {
		t.Fatal(err)
	}
	step("paint the kitchen walls")
	rd = r.round()
	if row := agentRow(t, rd, "claude:r1"); row.Advice != "go back to the parser" || len(rd.Escalations) != 0 {
		t.Fatalf("after the person's answer: advice %q, escalations %+v", row.Advice, rd.Escalations)
	}
}
