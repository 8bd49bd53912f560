package main

// laserbrain ui end to end: the real binary serving a real fleet (agents
// under laserbrain run, checks by laserbrain check, the hook's gate, a
// supervise round), watched by a real Chromium with the network off.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/browsertest"
	"github.com/laserkit/laserkit/internal/proctest"
)

// uiWorld is a repository with agents working on it and laserbrain ui
// watching it.
type uiWorld struct {
	t    *testing.T
	lb   string
	repo string
	env  []string
	link string // the one-time link ui printed
	base string // http://127.0.0.1:PORT
	runs map[string]string
}

func newUIWorld(t *testing.T) *uiWorld {
	t.Helper()
	dir := t.TempDir()
	w := &uiWorld{t: t, lb: laserbrainBinary(t), repo: filepath.Join(dir, "shop"), runs: map[string]string{}}
	w.env = append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "HOME="+dir, "PONDER_OCA=off", "LASERBRAIN_FLEET=", "CI=")
	if err := os.MkdirAll(filepath.Join(w.repo, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.repo, "src", "parser.py"), []byte("# parser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "init"}} {
		w.cmd("git", args...).run(0)
	}
	return w
}

type uiCmd struct {
	w *uiWorld
	c *exec.Cmd
}

func (w *uiWorld) cmd(name string, args ...string) uiCmd {
	c := exec.Command(name, args...)
	c.Dir, c.Env = w.repo, w.env
	return uiCmd{w, c}
}

// run runs it and checks its exit status; stdout is returned.
func (c uiCmd) run(want int) string {
	c.w.t.Helper()
	out, errOut, code := proctest.Run(c.w.t, c.c)
	if code != want {
		c.w.t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", c.c.Args, code, want, out, errOut)
	}
	return out + errOut
}

// agent starts `laserbrain run --agent NAME --goal GOAL` around a shell
// that prints its run id and waits for its standard input to close; the
// run is over when the test ends.
func (w *uiWorld) agent(name, goal string) string {
	w.t.Helper()
	c := w.cmd(w.lb, "run", "--agent", name, "--goal", goal, "--", "sh", "-c", `echo "$LASERBRAIN_RUN"; exec cat >/dev/null`).c
	stdin, err := c.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { stdin.Close(); _ = c.Wait() })
	line := readLineWithin(w.t, stdout, 30*time.Second, "the run id of "+name)
	w.runs[name] = line
	return name + ":" + line
}

// readLineWithin reads one line from r within timeout.
func readLineWithin(t *testing.T, r io.Reader, timeout time.Duration, what string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(l)
	}()
	select {
	case l := <-got:
		if l == "" {
			t.Fatalf("no %s", what)
		}
		return l
	case <-time.After(timeout):
		t.Fatalf("no %s within %s", what, timeout)
	}
	return ""
}

func (w *uiWorld) check(agent, goal string, distance int) {
	w.t.Helper()
	w.cmd(w.lb, "check", "--run", w.runs[agent], "--goal", goal, "--progress", "advancing", "--distance", fmt.Sprint(distance)).run(0)
}

// hook feeds the agent's pre-tool-use hook one shell command.
func (w *uiWorld) preToolUse(agent, command string, want int) string {
	w.t.Helper()
	ev, _ := json.Marshal(map[string]any{"session_id": "s-" + agent, "cwd": w.repo, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_use_id": fmt.Sprintf("tu-%s-%d", agent, time.Now().UnixNano()), "tool_input": map[string]string{"command": command}})
	c := w.cmd(w.lb, "hook", "pre-tool-use")
	c.c.Env = append(c.c.Env, "LASERBRAIN_RUN="+w.runs[agent], "LASERBRAIN_AGENT="+agent)
	c.c.Stdin = strings.NewReader(string(ev))
	return c.run(want)
}

// serve starts laserbrain ui on the repository and reads its link.
func (w *uiWorld) serve() {
	w.t.Helper()
	c := w.cmd(w.lb, "ui", "--repo", w.repo).c
	stdout, err := c.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = c.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				w.t.Errorf("laserbrain ui did not stop cleanly on SIGINT: %v\n%s", err, &stderr)
			}
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			w.t.Errorf("laserbrain ui did not stop within 10 s of SIGINT")
		}
	})
	br := bufio.NewReader(stdout)
	deadline := time.After(30 * time.Second)
	lines := make(chan string)
	go func() {
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSpace(l)
		}
	}()
	for w.link == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				w.t.Fatalf("laserbrain ui ended before printing its link\n%s", &stderr)
			}
			if strings.HasPrefix(l, "http://") {
				w.link = l
			}
		case <-deadline:
			w.t.Fatalf("laserbrain ui printed no link within 30 s\n%s", &stderr)
		}
	}
	go func() {
		for range lines { // drain
		}
	}()
	w.base = w.link[:strings.Index(w.link, "/?")]
}

// TestUIInChromium is the live view in a real browser: the page
// asks nothing of anyone but the server; a check changes the agent's row
// within 2 s without a reload; a gate denial appears in the feed; a halt
// shows, and releasing it from the page lifts it in the journal and for
// the next hook event, while the same act without the token is refused
// 403; the denied action, authorized from the feed, goes through once;
// the page follows the browser's colour scheme and a phone-wide window
// does not scroll sideways.
func TestUIInChromium(t *testing.T) {
	exe := browsertest.Require(t)
	w := newUIWorld(t)
	p1 := w.agent("parser-1", "write a JSON parser in Python")
	p2 := w.agent("parser-2", "write a fast JSON parser in Python")
	w.check("parser-1", "write a JSON parser in Python", 7)
	w.check("parser-2", "write a fast JSON parser in Python", 8)
	w.serve()

	// Anyone without the session is refused: the page, its stream, an act.
	for _, r := range []struct{ method, path string }{{"GET", "/"}, {"GET", "/events"}, {"GET", "/agent?name=" + p1}, {"POST", "/act/release"}} {
		req, _ := http.NewRequest(r.method, w.base+r.path, strings.NewReader(`{"agent":"`+p1+`"}`))
		req.Header.Set("Origin", w.base)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s %s without the session: %d, want 403", r.method, r.path, resp.StatusCode)
		}
	}

	b, err := browsertest.Open(context.Background(), exe, 1200, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(w.link); err != nil {
		t.Fatal(err)
	}
	row := func(agent string) string { return fmt.Sprintf(`document.querySelector('tr[data-agent=%q]')`, agent) }
	if _, err := b.WaitTrue(row(p1)+" !== null && "+row(p2)+" !== null && document.getElementById('conn').textContent === 'live'", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if u, _ := browsertest.Eval[string](b, "location.href"); u != w.base+"/" {
		t.Fatalf("the page is at %s, want %s/ (the token out of the address bar)", u, w.base)
	}
	// The link is spent: a second browser opening it is refused.
	if resp, err := http.Get(w.link); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the one-time link opened twice: %v %v", resp.Status, err)
	}
	if _, err := browsertest.Eval[bool](b, "(window.__noReload = true)"); err != nil {
		t.Fatal(err)
	}

	// A check changes the agent's row, live.
	before, err := browsertest.Eval[string](b, row(p1)+".dataset.steps")
	if err != nil || before != "2" { // the run's --goal, and its check
		t.Fatalf("before the check, the row shows %q checks: %v", before, err)
	}
	w.check("parser-1", "write a JSON parser in Python", 6)
	took, err := b.WaitTrue(row(p1)+".dataset.steps === '3'", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a check reached the row in %s", took.Round(time.Millisecond))

	// A gate denial appears in the feed.
	if out := w.preToolUse("parser-1", "git push --force origin main", 2); !strings.Contains(out, "git push --force") {
		t.Fatalf("the hook's refusal does not name the command: %s", out)
	}
	if _, err := b.WaitTrue(fmt.Sprintf(`!!document.querySelector('#feed li[data-kind=gate][data-decision=deny][data-agent=%q]')`, p1), 2*time.Second); err != nil {
		t.Fatal(err)
	}

	// What a call changed is in the agent's drill-down with the command
	// that undoes it: the file written after the refused push is on the
	// checkpoint the next call takes, and the view has it from the next
	// event on the fleet (here a check).
	if err := os.WriteFile(filepath.Join(w.repo, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.preToolUse("parser-1", "ls", 0)
	w.check("parser-1", "write a JSON parser in Python", 6)
	if _, err := b.WaitTrue(row(p1)+".dataset.steps === '4'", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	drill, err := browsertest.Eval[string](b, fmt.Sprintf(`fetch('/agent?name=' + encodeURIComponent(%q)).then(r => r.text())`, p1))
	if err != nil || !strings.Contains(drill, "1 added") || !strings.Contains(drill, "laserbrain undo --run "+w.runs["parser-1"]+" --to tu-parser-1-") {
		t.Fatalf("the drill-down of %s does not show the call's change and its undo (%v):\n%s", p1, err, drill)
	}

	// A supervisor round halts one of the two on one ground; the page
	// shows it where a person acts.
	w.cmd(w.lb, "supervise", "--repo", w.repo).run(0)
	if _, err := b.WaitTrue(`!!document.querySelector('#needs li.halt')`, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	halted, err := browsertest.Eval[string](b, `document.querySelector('#needs li.halt').dataset.halted`)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.SplitN(halted, ":", 2)[0]
	if halted != p1 && halted != p2 {
		t.Fatalf("halted %q, neither agent", halted)
	}
	if out := w.preToolUse(name, "ls", 2); !strings.Contains(out, "halted") {
		t.Fatalf("the halted agent's call was not refused for its halt: %s", out)
	}

	// The same act without the page's token is refused 403, with the
	// session and from the page itself.
	status, err := browsertest.Eval[float64](b, fmt.Sprintf(`fetch('/act/release', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({agent: %q})}).then(r => r.status)`, halted))
	if err != nil || status != 403 {
		t.Fatalf("a release without the token: %v %v, want 403", status, err)
	}
	if n, _ := browsertest.Eval[float64](b, `document.querySelectorAll('#needs li.halt').length`); n != 1 {
		t.Fatal("the halt went away without the token")
	}

	// Released from the page, with a reason.
	if err := b.SetValue("#needs li.halt input[name=reason]", "they split the work"); err != nil {
		t.Fatal(err)
	}
	if err := b.Click("#needs li.halt button[type=submit]"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitTrue(`!document.querySelector('#needs li.halt') && document.getElementById('said').textContent.startsWith('released')`, 5*time.Second); err != nil {
		said, _ := browsertest.Eval[string](b, `document.getElementById('said').textContent`)
		t.Fatalf("%v (the page said %q)", err, said)
	}
	log := w.cmd(w.lb, "supervise", "log", "--json", "--repo", w.repo).run(0)
	found := false
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec struct{ Kind, Agent, Text string }
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Kind == "release" && rec.Agent == halted {
			found = strings.Contains(rec.Text, "(laserbrain ui)") && strings.Contains(rec.Text, "they split the work")
		}
	}
	if !found {
		t.Fatalf("the journal has no release of %s by a person in laserbrain ui:\n%s", halted, log)
	}
	w.cmd(w.lb, "supervise", "verify", "--repo", w.repo).run(0)
	w.preToolUse(name, "ls", 0) // the next hook event goes through

	// Authorized from the feed, once: the exact action the gate refused
	// goes through the next time, and only that time.
	deny := fmt.Sprintf(`#feed li[data-kind=gate][data-decision=deny][data-agent=%q] button[data-authorize]`, p1)
	if err := b.Click(deny); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitTrue(`document.getElementById('said').textContent.startsWith('authorized "git push --force origin main" once')`, 5*time.Second); err != nil {
		said, _ := browsertest.Eval[string](b, `document.getElementById('said').textContent`)
		t.Fatalf("%v (the page said %q)", err, said)
	}
	if out := w.preToolUse("parser-1", "git push --force origin main", 0); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("the authorized push was not allowed: %s", out)
	}
	w.preToolUse("parser-1", "git push --force origin main", 2)

	if ok, _ := browsertest.Eval[bool](b, "window.__noReload === true"); !ok {
		t.Fatal("the page reloaded")
	}

	// The colour scheme follows the browser's.
	bg := func(dark bool) string {
		if err := b.Scheme(dark); err != nil {
			t.Fatal(err)
		}
		c, err := browsertest.Eval[string](b, "getComputedStyle(document.body).backgroundColor")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dark, light := bg(true), bg(false)
	if dark == light || luminance(t, dark) > 0.2 || luminance(t, light) < 0.8 {
		t.Fatalf("background dark %s, light %s: the page does not follow the scheme", dark, light)
	}

	// A phone-wide window has no horizontal scroll.
	if err := b.Phone(390, 844); err != nil {
		t.Fatal(err)
	}
	if err := b.Navigate(w.base + "/"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitTrue(row(p1)+" !== null", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if wide, _ := browsertest.Eval[bool](b, "document.documentElement.scrollWidth > window.innerWidth + 1"); wide {
		sw, _ := browsertest.Eval[float64](b, "document.documentElement.scrollWidth")
		t.Fatalf("on a phone the page is %v px wide: it scrolls sideways", sw)
	}

	// Nothing was asked of anyone but the server, and nothing complained.
	for _, u := range b.Requests() {
		if !strings.HasPrefix(u, w.base+"/") {
			t.Errorf("the page asked for %s", u)
		}
	}
	// The one complaint is the browser's about the test's own refused
	// release.
	for _, p := range b.Problems() {
		if !strings.Contains(p, "status of 403") || !strings.HasSuffix(p, w.base+"/act/release") {
			t.Errorf("the page complained: %s", p)
		}
	}
}

// luminance is an "rgb(r, g, b)" colour's relative brightness, 0 to 1.
func luminance(t *testing.T, css string) float64 {
	var r, g, b float64
	if _, err := fmt.Sscanf(css, "rgb(%g, %g, %g)", &r, &g, &b); err != nil {
		t.Fatalf("colour %q: %v", css, err)
	}
	return (0.2126*r + 0.7152*g + 0.0722*b) / 255
}
