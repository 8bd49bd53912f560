package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/pgfleet"
	"github.com/laserkit/laserkit/supercode/report"
	"github.com/laserkit/laserkit/supercode/supervise"
)

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:0": "127.0.0.1:0", "localhost:8377": "127.0.0.1:8377", "[::1]:9000": "[::1]:9000", "127.3.4.5:80": "127.3.4.5:80",
	} {
		if got, err := LoopbackAddr(addr); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", addr, got, err, want)
		}
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:80", "192.168.1.2:80", "10.0.0.1:1", "example.org:80", "127.0.0.1", "127.0.0.1:-1", "127.0.0.1:70000", ""} {
		if got, err := LoopbackAddr(addr); err == nil {
			t.Errorf("%q accepted as %q", addr, got)
		}
	}
}

// world is a fleet in a local store on a git repository, and a server on it.
type world struct {
	t    *testing.T
	repo string
	st   fleet.Store
	fid  string
	srv  *Server
	link string
	base string
	c    *http.Client // the person's browser: it opened the link
}

func newWorld(t *testing.T) *world {
	t.Helper()
	st, err := fleet.OpenLocal(filepath.Join(t.TempDir(), "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	return newWorldOn(t, st)
}

// newWorldOn is a world whose fleet store is st.
func newWorldOn(t *testing.T, st fleet.Store) *world {
	t.Helper()
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		repo = r
	}
	w := &world{t: t, repo: repo, st: st, fid: "fleet-ui-test"}
	srv, err := New(Options{Repo: repo, FleetID: w.fid, Fleet: st, Runs: laserbrain.NewMemStore(), Addr: "127.0.0.1:0", By: "ana", Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = srv
	if w.link, err = srv.Listen(); err != nil {
		t.Fatal(err)
	}
	w.base = w.link[:strings.Index(w.link, "/?")]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop within 10 s")
		}
	})
	jar, _ := cookiejar.New(nil)
	w.c = &http.Client{Jar: jar, Timeout: 10 * time.Second}
	return w
}

// open opens the one-time link in the person's browser.
func (w *world) open() {
	w.t.Helper()
	resp, err := w.c.Get(w.link)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != w.base+"/" {
		w.t.Fatalf("the link: %s at %s", resp.Status, resp.Request.URL)
	}
}

// act posts an act as the page does: the session, the server's Origin,
// and the page's token (each left out when asked).
func (w *world) act(path string, body map[string]string, c *http.Client, origin, token string) (int, map[string]string) {
	w.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", w.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set(csrfHeader, token)
	}
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// Who may read and act: nobody without the session the one-time link
// gives (and the link works once); nobody on another Host; no act without
// the server's Origin, a same-origin fetch and the page's token.
func TestGuardRefuses(t *testing.T) {
	w := newWorld(t)
	stranger := &http.Client{Timeout: 10 * time.Second}
	get := func(c *http.Client, u string) int {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/", "/events", "/agent?name=x", "/?launch=not-the-token"} {
		if code := get(stranger, w.base+p); code != http.StatusForbidden {
			t.Errorf("GET %s without the session: %d", p, code)
		}
	}
	w.open()
	if code := get(stranger, w.link); code != http.StatusForbidden {
		t.Errorf("the link opened a second time: %d", code)
	}
	if code := get(w.c, w.base+"/"); code != http.StatusOK {
		t.Fatalf("the person's page: %d", code)
	}
	// Another name for this server (a rebinding page): refused, session
	// or not.
	req, _ := http.NewRequest("GET", w.base+"/", nil)
	req.Host = "attacker.example:80"
	if resp, err := w.c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another Host: %v %v", resp.Status, err)
	}

	_, token := w.srv.g.secrets()
	body := map[string]string{"agent": "claude:r1"}
	for _, c := range []struct {
		what          string
		client        *http.Client
		origin, token string
	}{
		{"no session", stranger, w.base, token},
		{"no Origin", w.c, "", token},
		{"another Origin", w.c, "http://attacker.example", token},
		{"no token", w.c, w.base, ""},
		{"a wrong token", w.c, w.base, strings.Repeat("0", len(token))},
	} {
		if code, out := w.act("/act/release", body, c.client, c.origin, c.token); code != http.StatusForbidden {
			t.Errorf("%s: %d %v", c.what, code, out)
		}
	}
	req, _ = http.NewRequest("POST", w.base+"/act/release", strings.NewReader(`{"agent":"claude:r1"}`))
	req.Header.Set("Origin", w.base)
	req.Header.Set(csrfHeader, token)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := w.c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site fetch: %v %v", resp.Status, err)
	}
	// With all of it, the act is heard (and refused for what it asks:
	// nobody is halted).
	if code, out := w.act("/act/release", body, w.c, w.base, token); code != http.StatusNotFound || !strings.Contains(out["error"], "not halted") {
		t.Fatalf("a well-formed act: %d %v", code, out)
	}
}

// The acts, each journaled as the person's: a release lifts the halt; an
// answer answers the question and is told to the agent; an authorization
// lets the run's one action through once; a command no gate refuses, or a
// run of another fleet, authorizes nothing.
func TestActs(t *testing.T) {
	// A release and an answer note what this machine verified in the
	// laserbrain home: this test's own.
	t.Setenv("LASERBRAIN_HOME", t.TempDir())
	w := newWorld(t)
	w.open()
	ctx := context.Background()
	now := time.Now().UTC()
	w.must(w.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: now}))
	w.must(w.st.CreateRun(ctx, fleet.Run{ID: "r9", Agent: "claude", Fleet: "another", Dir: w.repo, Created: now}))
	w.must(w.st.PutHalt(ctx, fleet.Halt{ID: "h1", Fleet: w.fid, Agent: "claude:r1", Run: "r1", Reason: "shares a ground", By: "supervisor", At: now}))
	_, token := w.srv.g.secrets()

	code, out := w.act("/act/release", map[string]string{"agent": "claude:r1", "reason": "they split the work"}, w.c, w.base, token)
	if code != http.StatusOK || !strings.HasPrefix(out["message"], "released claude:r1") {
		t.Fatalf("release: %d %v", code, out)
	}
	if _, halted, _ := w.st.ActiveHalt(ctx, w.fid, "claude:r1"); halted {
		t.Fatal("still halted")
	}

	e := supervise.Escalation{ID: "drift:claude:r1:1", Round: 1, Kind: supervise.EscalateDrift, Who: "claude:r1", Agents: []string{"claude:r1"},
		Why: "3 drifting verdicts in a row", Question: "what should it do?"}
	data, _ := json.Marshal(e)
	_, err := w.st.AppendJournal(ctx, fleet.JournalRecord{Fleet: w.fid, Kind: fleet.JournalEscalation, Round: 1, Agent: e.Who, Text: e.Why, Data: data})
	w.must(err)
	code, out = w.act("/act/answer", map[string]string{"id": e.ID, "decision": "go back to the parser"}, w.c, w.base, token)
	if code != http.StatusOK {
		t.Fatalf("answer: %d %v", code, out)
	}
	if code, out = w.act("/act/answer", map[string]string{"id": e.ID, "decision": "again"}, w.c, w.base, token); code != http.StatusConflict {
		t.Fatalf("a second answer: %d %v", code, out)
	}
	told, err := w.st.Deliver(ctx, w.fid, "claude:r1", fleet.Delivery{At: now, Via: "test"})
	w.must(err)
	var said []string
	for _, m := range told {
		said = append(said, m.Kind+": "+m.Text)
	}
	if strings.Join(said, "\n") != "release: the halt on claude:r1 (shares a ground) was released by ana (laserbrain ui): they split the work. You may go on.\n"+
		"answer: a person answered the supervisor's question (3 drifting verdicts in a row): go back to the parser" {
		t.Fatalf("the agent was told:\n%s", strings.Join(said, "\n"))
	}

	code, out = w.act("/act/authorize", map[string]string{"run": "r1", "action": "git push  --force origin main"}, w.c, w.base, token)
	if code != http.StatusOK {
		t.Fatalf("authorize: %d %v", code, out)
	}
	au, ok, err := fleet.Authorize(ctx, w.st, w.fid, "r1", "claude", "git push --force origin main", time.Now())
	w.must(err)
	if !ok || au.Uses != 1 || au.Run != "r1" || au.By != "ana (laserbrain ui)" {
		t.Fatalf("the gate finds %v %+v", ok, au)
	}
	if _, ok, _ := fleet.Authorize(ctx, w.st, w.fid, "r1", "claude", "git push --force origin main", time.Now()); ok {
		t.Fatal("used twice")
	}
	for _, c := range []struct {
		body map[string]string
		code int
	}{
		{map[string]string{"run": "r1", "action": "ls -la"}, http.StatusBadRequest},
		{map[string]string{"run": "r9", "action": "git push --force origin main"}, http.StatusNotFound},
		{map[string]string{"run": "nope", "action": "git push --force origin main"}, http.StatusNotFound},
		{map[string]string{"run": "r1"}, http.StatusBadRequest},
	} {
		if code, out := w.act("/act/authorize", c.body, w.c, w.base, token); code != c.code {
			t.Errorf("authorize %v: %d %v, want %d", c.body, code, out, c.code)
		}
	}

	recs, err := w.st.JournalRecords(ctx, w.fid, 0)
	w.must(err)
	var kinds []string
	for _, r := range recs {
		if r.Kind != fleet.JournalDelivery && strings.Contains(r.Text, "ana (laserbrain ui)") {
			kinds = append(kinds, r.Kind)
		}
	}
	if strings.Join(kinds, " ") != "release answer authorize" {
		t.Fatalf("journaled as the person's: %v", kinds)
	}
	c, err := fleet.CheckJournal(ctx, w.st, w.fid)
	w.must(err)
	if c.Problem != nil {
		t.Fatalf("the journal does not verify: %+v", c.Problem)
	}
}

// The stream: the page's sections first, then, when the store changes (a
// gate denial recorded by a hook), the sections whose markup changed.
func TestStreamFollowsTheStore(t *testing.T) {
	w := newWorld(t)
	w.open()
	ctx := context.Background()
	w.must(w.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: time.Now()}))
	resp, err := w.c.Get(w.base + "/events")
	w.must(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the stream: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	events := make(chan map[string]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m struct{ Sections map[string]string }
			if json.Unmarshal([]byte(data), &m) == nil {
				events <- m.Sections
			}
		}
		close(events)
	}()
	next := func(what string, until func(map[string]string) bool) map[string]string {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case s, ok := <-events:
				if !ok {
					t.Fatalf("%s: the stream ended", what)
				}
				if until(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("%s: not within 5 s", what)
			}
		}
	}
	first := next("the first event", func(map[string]string) bool { return true })
	for _, id := range sectionIDs {
		if _, ok := first[id]; !ok {
			t.Errorf("the first event lacks section %s", id)
		}
	}
	res, _ := json.Marshal(fleet.GateResult{Decision: operator.Deny, Labels: []string{"git push --force (force-push to remote)"}, Role: "executed",
		Presence: "attended", Action: "git push --force origin main"})
	_, err = w.st.AppendEvent(ctx, "r1", fleet.RunEvent{At: time.Now(), Kind: fleet.KindGate, Name: "Bash", OK: laserbrain.OKFalse, Result: res, Text: "refused"})
	w.must(err)
	s := next("the denial", func(s map[string]string) bool { return strings.Contains(s["feed"], `data-decision="deny"`) })
	if !strings.Contains(s["feed"], `data-command="git push --force origin main"`) || !strings.Contains(s["feed"], `data-run="r1"`) {
		t.Fatalf("the denial has no authorize button for its action:\n%s", s["feed"])
	}
	if _, ok := s["fleet"]; ok {
		t.Error("a section that did not change was sent again")
	}
}

// The drill-down: an agent's checks, events, gate decisions and journal
// entries; an agent of no fleet's is 404.
func TestDrillDown(t *testing.T) {
	w := newWorld(t)
	w.open()
	ctx := context.Background()
	w.must(w.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: time.Now()}))
	_, err := w.st.AppendEvent(ctx, "r1", fleet.RunEvent{At: time.Now(), Kind: fleet.KindTool, Name: "Edit", OK: laserbrain.OKTrue, Text: filepath.Join(w.repo, "a.go")})
	w.must(err)
	w.until("the run in the view", func(v *View) bool { return len(v.Fleet.Agents) == 1 })
	get := func(name string) (int, string) {
		t.Helper()
		resp, err := w.c.Get(w.base + "/agent?name=" + url.QueryEscape(name))
		w.must(err)
		defer resp.Body.Close()
		b := new(strings.Builder)
		_, _ = bufio.NewReader(resp.Body).WriteTo(b)
		return resp.StatusCode, b.String()
	}
	code, page := get("claude:r1")
	if code != http.StatusOK || !strings.Contains(page, "<h2>claude:r1</h2>") || !strings.Contains(page, "Observed events") || !strings.Contains(page, "a.go") {
		t.Fatalf("drill-down: %d\n%s", code, page)
	}
	if code, _ := get("claude:nobody"); code != http.StatusNotFound {
		t.Fatalf("an unknown agent: %d", code)
	}
}

// until waits (at most 5 s) for the server's view to satisfy ok, woken by
// each reload that changed the page.
func (w *world) until(what string, ok func(*View) bool) {
	w.t.Helper()
	sub := w.srv.hub.subscribe()
	defer w.srv.hub.unsubscribe(sub)
	deadline := time.After(5 * time.Second)
	for {
		if v := w.srv.hub.view(context.Background()); v != nil && ok(v) {
			return
		}
		select {
		case <-sub:
		case <-deadline:
			w.t.Fatalf("%s: not within 5 s", what)
		}
	}
}

// Under PostgreSQL the view follows the store's version (one query a
// poll): a gate decision another process records shows.
func TestViewFollowsPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	if _, err := pgdb.InitDSN(context.Background(), dsn, pgfleet.Component, pgfleet.SuperviseComponent); err != nil {
		t.Fatal(err)
	}
	st, err := pgfleet.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := newWorldOn(t, st)
	ctx := context.Background()
	w.must(st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: time.Now()}))
	w.until("the run", func(v *View) bool { return len(v.Fleet.Agents) == 1 })
	_, err = st.AppendEvent(ctx, "r1", fleet.RunEvent{At: time.Now(), Kind: fleet.KindGate, Name: "Bash", OK: laserbrain.OKFalse, Text: "refused"})
	w.must(err)
	w.until("the denial", func(v *View) bool { return len(v.Fleet.Gate) == 1 })
}

// A ponder session started in the repository appears live, as an agent.
func TestViewFollowsPonder(t *testing.T) {
	w := newWorld(t)
	w.until("the empty fleet", func(v *View) bool { return v.Fleet != nil })
	s, err := ponder.New(w.repo, nil).Start(ponder.StartOptions{Subject: "the parser architecture", Passes: 4})
	w.must(err)
	w.until("the session", func(v *View) bool {
		return len(v.Fleet.Agents) == 1 && v.Fleet.Agents[0].Name == fleet.PonderAgent(s.Slug) && v.Fleet.Agents[0].Client == "ponder"
	})
}

// The agents table marks a last tool call that failed, and only one the
// client said failed: an unknown outcome is not a failure.
func TestLastToolCallFailed(t *testing.T) {
	w := newWorld(t)
	w.open()
	ctx := context.Background()
	for _, r := range []struct {
		id string
		ok laserbrain.OK
	}{{"r1", laserbrain.OKFalse}, {"r2", laserbrain.OKUnknown}, {"r3", laserbrain.OKTrue}} {
		w.must(w.st.CreateRun(ctx, fleet.Run{ID: r.id, Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: time.Now()}))
		_, err := w.st.AppendEvent(ctx, r.id, fleet.RunEvent{At: time.Now(), Kind: fleet.KindTool, Name: "Bash", OK: r.ok, Text: "make test " + r.id})
		w.must(err)
	}
	w.until("the three runs in the view", func(v *View) bool { return len(v.Fleet.Agents) == 3 })
	resp, err := w.c.Get(w.base + "/")
	w.must(err)
	defer resp.Body.Close()
	b := new(strings.Builder)
	_, _ = bufio.NewReader(resp.Body).WriteTo(b)
	page := b.String()
	for id, failed := range map[string]bool{"r1": true, "r2": false, "r3": false} {
		i := strings.Index(page, "make test "+id)
		if i < 0 {
			t.Fatalf("no last tool call of %s on the page", id)
		}
		rest := page[i:]
		if end := strings.Index(rest, "</td>"); end >= 0 {
			rest = rest[:end]
		}
		if got := strings.Contains(rest, "(failed)"); got != failed {
			t.Errorf("%s's last tool call marked failed: %v, want %v (%q)", id, got, failed, rest)
		}
	}
}

// An agent's drill-down lists what its calls changed, newest first, each
// with the command that undoes it and its loss.
func TestDrillDownShowsChanges(t *testing.T) {
	a := &report.Agent{Name: "claude:r1", Kind: "run", Run: "r1", Changes: []report.CallChange{
		{At: time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC), Call: "tu-1", Tool: "Bash", What: "rm -rf src", Changed: "12 deleted (40.0 KiB lost)",
			Undo: "laserbrain undo --run r1 --to tu-1", Loss: "deleted or overwrote 12 files (40.0 KiB), more than undo.loss_files 10"},
		{At: time.Date(2026, 8, 24, 15, 1, 0, 0, time.UTC), Call: "tu-2", Tool: "Write", What: "notes.md", Changed: "1 added",
			Undo: "laserbrain undo --run r1 --to tu-2"}}}
	page := string(renderDetail(&Detail{Agent: a, Advice: map[int]string{}}))
	first, second := strings.Index(page, "laserbrain undo --run r1 --to tu-2"), strings.Index(page, "laserbrain undo --run r1 --to tu-1")
	if !strings.Contains(page, "What its calls changed") || first < 0 || second < 0 || first > second ||
		!strings.Contains(page, "12 deleted (40.0 KiB lost)") || !strings.Contains(page, "more than undo.loss_files 10") {
		t.Fatalf("the drill-down:\n%s", page)
	}
}

// An agent's drill-down draws its tokens over time when its client
// reported its model requests: the running totals, with the cost so far;
// an agent whose client reported none gets no such plot.
func TestDrillDownShowsSpending(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	a := &report.Agent{Name: "claude:r1", Kind: "run", Run: "r1", Spending: []report.Spent{
		{At: t0, Tokens: 20, CostUSD: 0.00024}, {At: t0.Add(3 * time.Second), Tokens: 40, CostUSD: 0.00048}}}
	page := string(renderDetail(&Detail{Agent: a, Advice: map[int]string{}}))
	if !strings.Contains(page, "Tokens over time") || !strings.Contains(page, "$0.00048 so far") || !strings.Contains(page, "18:00:03") {
		t.Fatalf("the drill-down:\n%s", page)
	}
	a.Spending = nil
	if page := string(renderDetail(&Detail{Agent: a, Advice: map[int]string{}})); strings.Contains(page, "Tokens over time") {
		t.Error("an agent without reported requests has a tokens plot")
	}
}

// The drill-down of a run whose client recorded which response asked for
// which call shows each call's tokens, as the run's events hold them: two
// calls asked for by one response (30 in, 12 out, 5 read from the cache)
// share it, a third had its own.
func TestDrillDownShowsCallTokens(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	shared := fleet.Usage{Input: 30, Output: 12, CacheRead: 5}
	own := fleet.Usage{Input: 7, Output: 3}
	evs := []fleet.RunEvent{
		{ID: "tool:toolu_a", At: t0, Kind: fleet.KindTool, Name: "Bash"},
		{ID: "tool:toolu_b", At: t0, Kind: fleet.KindTool, Name: "Write"},
		{ID: "tool:toolu_c", At: t0.Add(time.Second), Kind: fleet.KindTool, Name: "Read"},
		fleet.CallTokensEvent(t0.Add(2*time.Second), "s", fleet.CallUsage{Call: "toolu_a", Shared: 2, Usage: shared}),
		fleet.CallTokensEvent(t0.Add(2*time.Second), "s", fleet.CallUsage{Call: "toolu_b", Shared: 2, Usage: shared}),
		fleet.CallTokensEvent(t0.Add(3*time.Second), "s", fleet.CallUsage{Call: "toolu_c", Shared: 1, Usage: own}),
	}
	a := &report.Agent{Name: "claude:r1", Kind: "run", Run: "r1"}
	page := string(renderDetail(&Detail{Agent: a, Advice: map[int]string{}, Events: evs}))
	if !strings.Contains(page, "Tokens per tool call") {
		t.Fatalf("the drill-down has no tokens per call:\n%s", page)
	}
	for _, want := range [][]string{{"toolu_a", "Bash", "47", "30", "12", "5", "0", "1"}, {"toolu_b", "Write", "47"}, {"toolu_c", "Read", "10", "7", "3", "0", "0", "0"}} {
		i := strings.Index(page, ">"+want[0]+"<")
		if i < 0 {
			t.Errorf("no row for %s", want[0])
			continue
		}
		end := strings.Index(page[i:], "</tr>")
		cells := page[i : i+end]
		at := 0
		for _, w := range want[1:] {
			j := strings.Index(cells[at:], ">"+w+"<")
			if j < 0 {
				t.Errorf("%s's row lacks %s where expected: %s", want[0], w, cells)
				break
			}
			at += j + 1
		}
	}
	if page := string(renderDetail(&Detail{Agent: a, Advice: map[int]string{}, Events: evs[:3]})); strings.Contains(page, "Tokens per tool call") {
		t.Error("a run whose calls' tokens are unknown shows a table of them")
	}
}

// heldFleet is a fleet store whose runs cannot be listed until held is
// closed: a fleet that takes long to read.
type heldFleet struct {
	fleet.Store
	held chan struct{}
}

func (h heldFleet) ListRuns(ctx context.Context, f fleet.RunFilter) ([]fleet.Run, error) {
	select {
	case <-h.held:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Store.ListRuns(ctx, f)
}

// The page's top (its stylesheet and header) reaches the browser while
// the fleet is still being read; the rest, every section, follows once it
// is read.
func TestPageTopBeforeTheFleetIsRead(t *testing.T) {
	st, err := fleet.OpenLocal(filepath.Join(t.TempDir(), "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(held)
		}
	}
	defer release()
	w := newWorldOn(t, heldFleet{st, held})
	w.must(st.CreateRun(context.Background(), fleet.Run{ID: "r1", Agent: "claude", Fleet: w.fid, Dir: w.repo, Created: time.Now()}))
	// The link, without following it to the page (which would wait).
	noFollow := *w.c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(w.link)
	w.must(err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the link: %s", resp.Status)
	}
	resp, err = w.c.Get(w.base + "/")
	w.must(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the page: %s", resp.Status)
	}
	br := bufio.NewReader(resp.Body)
	var top strings.Builder
	for !strings.Contains(top.String(), "</header>") {
		line, err := br.ReadString('\n')
		top.WriteString(line)
		if err != nil {
			t.Fatalf("the page's top before the fleet was read: %v (read %q)", err, top.String())
		}
	}
	if !strings.Contains(top.String(), "<style>") || !strings.Contains(top.String(), "reading the fleet") || strings.Contains(top.String(), "<main") {
		t.Errorf("the page's top: %q", top.String())
	}
	release()
	rest, err := io.ReadAll(br)
	w.must(err)
	page := top.String() + string(rest)
	for _, id := range sectionIDs {
		if !strings.Contains(page, `<section id="`+id+`"`) {
			t.Errorf("the page lacks section %s", id)
		}
	}
	if !strings.Contains(page, `data-agent="claude:r1"`) || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("the page after the fleet was read lacks the agent or its end:\n%s", page)
	}
}
