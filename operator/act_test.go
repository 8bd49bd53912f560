package operator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// run is a Harness as plain data: the run's last verdict and judgment.
type run struct {
	checked  bool
	drifting bool
	reason   string
	judgment string
}

func (r run) LastVerdict() (bool, string, bool) { return r.drifting, r.reason, r.checked }
func (r run) Judgment() string                  { return r.judgment }

// person answers yes or no and counts how often it was asked.
type person struct {
	yes   bool
	err   error
	asked int
}

func (p *person) Authorize(ctx context.Context, a Action) (bool, error) {
	p.asked++
	return p.yes, p.err
}

func readLog(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

var irreversible = Action{Kind: "shell", Target: "git push --force", Reversible: false, Outward: true}

func TestActRefusals(t *testing.T) {
	cases := []struct {
		name    string
		harness Harness
		auth    *person
		want    string // refusal code, "" for taken
		asked   int
	}{
		{"no authorizer", nil, nil, RefusedNoAuthorizer, 0},
		{"authorizer says no", nil, &person{}, RefusedNotAuthorized, 1},
		{"authorizer fails", nil, &person{yes: true, err: errors.New("tty gone")}, RefusedAuthorizerErr, 1},
		{"authorizer says yes", nil, &person{yes: true}, "", 1},
		{"harness never checked", run{}, &person{yes: true}, RefusedNoReading, 0},
		{"drifting", run{checked: true, drifting: true, reason: "goal-drift"}, &person{yes: true}, RefusedDrift, 0},
		{"judgment abandon", run{checked: true, judgment: "abandon"}, &person{yes: true}, RefusedJudgment, 0},
		{"judgment wrong-problem", run{checked: true, judgment: "wrong-problem"}, &person{yes: true}, RefusedJudgment, 0},
		{"judgment repeating", run{checked: true, judgment: "repeating"}, &person{yes: true}, RefusedJudgment, 0},
		// §12: narrow, verify, unbacked, over-budget do not block.
		{"judgment narrow", run{checked: true, judgment: "narrow"}, &person{yes: true}, "", 1},
		{"judgment verify", run{checked: true, judgment: "verify"}, &person{yes: true}, "", 1},
		{"judgment unbacked", run{checked: true, judgment: "unbacked"}, &person{yes: true}, "", 1},
		{"judgment over-budget", run{checked: true, judgment: "over-budget"}, &person{yes: true}, "", 1},
		{"grounded, person says no", run{checked: true}, &person{}, RefusedNotAuthorized, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "operator.jsonl")
			o := &Operator{Harness: c.harness, Log: FileLog{logPath}}
			if c.auth != nil {
				o.Authorizer = c.auth
			}
			ran := false
			err := o.Act(context.Background(), irreversible, func(context.Context) error { ran = true; return nil })
			var r *Refused
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (!errors.As(err, &r) || r.Code != c.want):
				t.Fatalf("err = %v, want refusal %s", err, c.want)
			}
			if ran != (c.want == "") {
				t.Fatalf("ran = %v", ran)
			}
			if c.auth != nil && c.auth.asked != c.asked {
				t.Fatalf("authorizer asked %d times, want %d", c.auth.asked, c.asked)
			}
			events := readLog(t, logPath)
			if c.want != "" {
				if len(events) != 1 || events[0].OK || events[0].Kind != "operator" {
					t.Fatalf("log = %+v, want one refusal", events)
				}
			} else if len(events) != 2 || events[0].Note != "authorized" || events[1].Note != "taken" {
				t.Fatalf("log = %+v, want authorized then taken", events)
			}
		})
	}
}

func TestActAsksEveryTime(t *testing.T) {
	p := &person{yes: true}
	o := &Operator{Authorizer: p}
	for i := 0; i < 3; i++ {
		if err := o.Act(context.Background(), irreversible, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if p.asked != 3 {
		t.Fatalf("asked %d times for 3 identical actions, want 3 (no caching)", p.asked)
	}
	if s := o.Stats(); s.Asked != 3 || s.Taken != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestReversibleInwardActionNeedsNobody(t *testing.T) {
	p := &person{}
	// Even a drifting agent may read a file.
	o := &Operator{Harness: run{checked: true, drifting: true}, Authorizer: p}
	ran := false
	err := o.Act(context.Background(), Action{Kind: "file", Target: "README", Reversible: true}, func(context.Context) error { ran = true; return nil })
	if err != nil || !ran || p.asked != 0 {
		t.Fatalf("err=%v ran=%v asked=%d", err, ran, p.asked)
	}
	// Outward but reversible still needs authorization.
	if err := o.Act(context.Background(), Action{Kind: "http", Target: "POST /x", Reversible: true, Outward: true}, func(context.Context) error { return nil }); err == nil {
		t.Fatal("outward action taken while drifting")
	}
}

func TestActFailureIsLoggedAndReturned(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "op.jsonl")
	o := &Operator{Authorizer: &person{yes: true}, Log: FileLog{logPath}}
	boom := errors.New("exit status 1")
	if err := o.Act(context.Background(), irreversible, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	ev := readLog(t, logPath)
	if len(ev) != 2 || ev[1].OK || ev[1].Note != "failed: exit status 1" {
		t.Fatalf("log = %+v", ev)
	}
}

func TestUnloggableAuthorizationIsRefused(t *testing.T) {
	o := &Operator{Authorizer: &person{yes: true}, Log: FileLog{filepath.Join(t.TempDir(), "missing-dir", "op.jsonl")}}
	ran := false
	err := o.Act(context.Background(), irreversible, func(context.Context) error { ran = true; return nil })
	var r *Refused
	if !errors.As(err, &r) || r.Code != RefusedUnlogged || ran {
		t.Fatalf("err=%v ran=%v", err, ran)
	}
}

func TestShellEscalatesDeclaration(t *testing.T) {
	p := &person{}
	o := &Operator{Authorizer: p}
	err := o.Shell(context.Background(), "git -C repo push --force", true, false, func(context.Context) error { return nil })
	var r *Refused
	if !errors.As(err, &r) || r.Action.Reversible || !r.Action.Outward || p.asked != 1 {
		t.Fatalf("err=%v asked=%d", err, p.asked)
	}
	if err := o.Shell(context.Background(), "ls -la", true, false, func(context.Context) error { return nil }); err != nil || p.asked != 1 {
		t.Fatalf("ls: err=%v asked=%d", err, p.asked)
	}
}
