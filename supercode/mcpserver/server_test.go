package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// testSupervisor keeps both stores in a temporary directory; env is the
// caller's environment.
func testSupervisor(t testing.TB, env map[string]string) (*agentrun.Tracker, string) {
	home := t.TempDir()
	sup := &agentrun.Tracker{
		Getenv: func(k string) string { return env[k] },
		Stores: agentrun.StoreFuncs{
			Fleet: func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(home, "fleet")) },
			Runs: func() (laserbrain.Store, error) {
				return localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
			},
		}.Open,
	}
	t.Cleanup(func() { sup.Close() })
	return sup, home
}

// connect runs the server in process and returns a go-sdk client session.
func connect(t *testing.T, sup *agentrun.Tracker) *mcp.ClientSession {
	t.Helper()
	return connectServer(t, New(sup))
}

// connectServer serves srv (Serve, the loop laserbrain mcp runs) over a
// pair of pipes and connects the official Go SDK's client to it: the
// client negotiates, lists and calls as any MCP client does.
func connectServer(t *testing.T, srv *Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s: result is not a JSON object: %s", name, text)
	}
	return out, res.IsError
}

func TestToolList(t *testing.T) {
	sup, _ := testSupervisor(t, nil)
	cs := connect(t, sup)
	got := toolNames(t, cs)
	// The reference's eleven tools (SDK mcp.py at 0.53.0) and ours.
	want := []string{"capabilities", "check_state", "check_sub_task", "classify", "get_history", "judge_run", "laserscore", "link_read", "link_write", "lint",
		"modulate", "read_text", "reset_task", "similarity", "store_find", "store_list", "store_vend", "sub_task", "supervision", "tree_report", "tree_status"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tools = %v\nwant    %v", got, want)
	}
	if cs.InitializeResult().ServerInfo.Name != "laserbrain" {
		t.Fatalf("server name %q", cs.InitializeResult().ServerInfo.Name)
	}
}

// TestCheckStateKeyedToTheRun: checks go to the run LASERBRAIN_RUN names,
// and the fleet store sees them (the hooks read it there).
func TestCheckStateKeyedToTheRun(t *testing.T) {
	ctx := context.Background()
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-a", agentrun.EnvAgent: "a1", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	v, isErr := call(t, cs, "check_state", map[string]any{"goal": "write a JSON parser in Python", "progress": "advancing", "distance": 6})
	if isErr || v["reason"] != "grounded" || v["run"] != "run-a" {
		t.Fatalf("first check = %v", v)
	}
	// The reference's reground property: a new goal without a user turn is
	// goal-drift (and drifting).
	v, _ = call(t, cs, "check_state", map[string]any{"goal": "add an LRU cache", "distance": 5})
	if v["reason"] != "goal-drift" || v["drifting"] != true {
		t.Fatalf("second check = %v", v)
	}
	st, _ := sup.Fleet()
	r, err := st.Run(ctx, "run-a")
	if err != nil || r.Checks != 2 || r.Last == nil || !r.Last.Drifting || r.Agent != "a1" {
		t.Fatalf("run = %+v, %v", r, err)
	}
	_ = r
	// A user_turn argument changes nothing (the reference reads none)...
	v, _ = call(t, cs, "check_state", map[string]any{"goal": "add an LRU cache", "distance": 5, "user_turn": true})
	if v["reason"] != "goal-drift" {
		t.Fatalf("a check passing user_turn = %v", v)
	}
	// ...the user turn the hook marks on the run (user-prompt-submit) does:
	// the same change is then a reground.
	if _, err := st.UpdateRun(ctx, "run-a", func(r *fleet.Run) error { r.UserTurn = true; return nil }); err != nil {
		t.Fatal(err)
	}
	v, _ = call(t, cs, "check_state", map[string]any{"goal": "add an LRU cache", "distance": 5})
	if v["reason"] != "reground" || v["drifting"] != false || v["user_turn"] != true {
		t.Fatalf("check after a user turn = %v", v)
	}
	h, _ := call(t, cs, "get_history", map[string]any{"limit": 2})
	if h["total"] != 4.0 || h["drifting"] != 2.0 || len(h["checks"].([]any)) != 2 {
		t.Fatalf("history = %v", h)
	}
	j, isErr := call(t, cs, "judge_run", nil)
	if isErr || j["verdict"] == nil {
		t.Fatalf("judge_run = %v", j)
	}
}

// TestResetAndResume: reset_task sets the ground aside, the next check
// grounds afresh, and a later goal closer to the old ground resumes it.
func TestResetAndResume(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-r", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	call(t, cs, "check_state", map[string]any{"goal": "write a JSON parser in Python", "distance": 6})
	r, _ := call(t, cs, "reset_task", nil)
	if r["suspended"] != 1.0 {
		t.Fatalf("reset_task = %v", r)
	}
	v, _ := call(t, cs, "check_state", map[string]any{"goal": "fix the login page colours", "distance": 3})
	if v["reason"] != "grounded" || v["task"] != "run-r.2" {
		t.Fatalf("check after reset = %v", v)
	}
	v, _ = call(t, cs, "check_state", map[string]any{"goal": "write a JSON parser in Python", "distance": 5})
	if v["resumed_ground"] != "write a JSON parser in Python" || v["task"] != "run-r" || v["reason"] == "goal-drift" {
		t.Fatalf("check back on the first goal = %v", v)
	}
}

// TestRefusalsAndErrors: what the reference refuses comes back as it
// answers it — a result carrying the error and the names there are, not an
// error result; what the reference reads with Python's coercions is read
// the same way; a mistake in a call to one of our own tools is an error
// result with the reason; and the server keeps serving.
func TestRefusalsAndErrors(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-b", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	presets := []any{"adversarial-deliberation", "deep-search", "iterative-refinement"}
	refusals := []struct {
		tool string
		args any
		want map[string]any
	}{
		{"check_state", map[string]any{}, map[string]any{"error": "check_state needs a goal — the ground is set from it and frozen"}},
		{"check_state", map[string]any{"goal": "   "}, map[string]any{"error": "check_state needs a goal — the ground is set from it and frozen"}},
		{"modulate", map[string]any{"goal": "x", "team": "nope"}, map[string]any{"error": "no preset named 'nope'", "presets": presets}},
		{"modulate", map[string]any{"goal": "x", "team": 5}, map[string]any{"error": "no preset named 5", "presets": presets}},
		{"modulate", map[string]any{"goal": "x", "team": "deep-search", "role": "pilot"},
			map[string]any{"error": "deep-search has no role 'pilot'", "roles": []any{"explorer", "checker"}}},
		{"store_find", map[string]any{"task": ""}, map[string]any{"error": "store_find needs a task, in words, to match against"}},
		{"store_vend", map[string]any{"name": " "}, map[string]any{"error": "store_vend needs a name — see store_list or store_find"}},
		{"store_vend", map[string]any{"name": "x", "kind": "team"},
			map[string]any{"error": `"no team preset 'x' — have ['adversarial-deliberation', 'deep-search', 'iterative-refinement']"`}},
	}
	for _, c := range refusals {
		out, isErr := call(t, cs, c.tool, c.args)
		if isErr || !reflect.DeepEqual(out, c.want) {
			t.Errorf("%s %v = %v (isError %v); want the result %v", c.tool, c.args, out, isErr, c.want)
		}
	}
	if out, _ := call(t, cs, "store_vend", map[string]any{"name": "nope"}); !strings.HasPrefix(out["error"].(string), `"no workflow 'nope' — have ['audit', `) {
		t.Errorf("store_vend of an unknown workflow = %v", out)
	}
	errs := []struct {
		tool string
		args any
		want string
	}{
		{"get_history", map[string]any{"limit": "abc"}, "limit must be a whole number"},
		{"get_history", map[string]any{"limit": []int{2}}, "limit must be a whole number"},
		{"store_find", map[string]any{"task": "ship", "top": "x"}, "top must be a whole number"},
		{"modulate", map[string]any{"goal": "x", "team": []string{"deep-search"}}, "team must be a preset name"},
		{"read_text", map[string]any{"text": []string{"a"}}, "text must be a string"},
		{"similarity", "a string", "arguments must be a JSON object"},
		{"classify", map[string]any{"command": ""}, "needs a command"},
		{"classify", map[string]any{"command": 7}, "command must be a string"},
		{"lint", map[string]any{"method": map[string]any{"goal": "x"}}, "method:"},
	}
	for _, c := range errs {
		out, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(out["error"].(string), c.want) {
			t.Errorf("%s %v = %v (isError %v); want an error result containing %q", c.tool, c.args, out, isErr, c.want)
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "no such tool: no_such_tool") {
		t.Errorf("an unknown tool: %v", err)
	}
	// Still serving, and reading its arguments as the reference does: a
	// distance string is int(float()), a goal that is a number is its text.
	// The ground is "x": modulate records its check before it refuses a
	// team, as the reference does.
	if v, isErr := call(t, cs, "check_state", map[string]any{"goal": 7, "distance": "4.9"}); isErr || v["ground"] != "x" || v["laserscore"] != "⟨7⟩ advancing d4" {
		t.Fatalf("after the errors: %v", v)
	}
	if r, isErr := call(t, cs, "read_text", map[string]any{"text": "x", "connectivity": "high"}); isErr || r["connectivity"] != 0.0 {
		t.Fatalf("read_text with a connectivity that is not a number: %v", r)
	}
}

func TestStatelessTools(t *testing.T) {
	sup, _ := testSupervisor(t, nil)
	cs := connect(t, sup)
	// read_text: the reference's own example (reading.py): "the same
	// thought" three times has variety 2/6 and, at nine words, is short.
	r, _ := call(t, cs, "read_text", map[string]any{"text": "the same thought the same thought the same thought"})
	if r["variety"] != 0.3333 || r["words"] != 9.0 || r["shape"] != "short" || r["circling"] != false {
		t.Fatalf("read_text = %v", r)
	}
	r, _ = call(t, cs, "read_text", map[string]any{"text": strings.Repeat("parser tokens parser tokens ", 4)})
	if r["shape"] != "circling" || r["circling"] != true || r["variety"] != 0.125 { // 2 distinct of 16
		t.Fatalf("read_text circling = %v", r)
	}
	// similarity is Jaccard over the normalised sets.
	a, b := "alpha beta gamma", "beta gamma delta"
	s, _ := call(t, cs, "similarity", map[string]any{"a": a, "b": b})
	na, nb := laserbrain.Norm(a), laserbrain.Norm(b)
	shared := 0
	for _, x := range na {
		for _, y := range nb {
			if x == y {
				shared++
			}
		}
	}
	want := float64(shared) / float64(len(na)+len(nb)-shared)
	if s["overlap"] != round4(want) || shared != 2 {
		t.Fatalf("similarity = %v, want overlap %v", s, want)
	}
	l, _ := call(t, cs, "laserscore", map[string]any{"goal": "", "distance": 3})
	if l["laserscore"] != nil {
		t.Fatalf("laserscore of an empty goal = %v", l)
	}
	c, _ := call(t, cs, "classify", map[string]any{"command": "git push --force origin main"})
	if c["needs_authorization"] != true || c["decision"] != "deny" {
		t.Fatalf("classify = %v", c)
	}
	lst, _ := call(t, cs, "store_list", map[string]any{"kind": "team"})
	if len(lst["names"].([]any)) != 3 {
		t.Fatalf("store_list team = %v", lst)
	}
	f, _ := call(t, cs, "store_find", map[string]any{"task": "debate toward a resolved answer", "kind": "team"})
	if m := f["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["name"] != "adversarial-deliberation" {
		t.Fatalf("store_find team = %v", f)
	}
	v, isErr := call(t, cs, "store_vend", map[string]any{"name": "fix"})
	if isErr || v["spec"].(map[string]any)["goal"] == nil {
		t.Fatalf("store_vend = %v", v)
	}
	ln, isErr := call(t, cs, "lint", map[string]any{"name": "fix"})
	if isErr || len(ln["findings"].([]any)) != 0 {
		t.Fatalf("lint fix = %v", ln)
	}
	capa, _ := call(t, cs, "capabilities", nil)
	if len(capa["local_tools"].([]any)) != 21 {
		t.Fatalf("capabilities = %v", capa)
	}
}

// FuzzToolArguments: any JSON value as any tool's arguments answers a
// JSON-RPC result (or error) for the call's id; nothing panics.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{`{}`, `null`, `[]`, `{"goal":"x","distance":"1e400"}`, `{"goal":"x","distance":-3}`,
		`{"limit":1e9}`, `{"top":0.5}`, `{"method":{"spec_version":1,"goal":"g","steps":[{"name":"a"}]}}`, `{"text":"\u0130stanbul"}`,
		`{"goal":"ship","progress":"sideways","team":"deep-search","role":"checker"}`, `"string"`, `{"a":null,"b":1}`,
		`{"limit":"-0_1"}`, `{"connectivity":"nan"}`, `{"team":{"a":1}}`} {
		for i := 0; i < 17; i++ {
			f.Add(i, seed)
		}
	}
	sup, _ := testSupervisor(f, map[string]string{agentrun.EnvRun: "fuzz", agentrun.EnvFleet: "f"})
	s := New(sup)
	f.Fuzz(func(t *testing.T, i int, raw string) {
		if i < 0 {
			i = -i
		}
		if !json.Valid([]byte(raw)) {
			return
		}
		td := s.tools[i%len(s.tools)]
		line := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + td.Name + `","arguments":` + raw + `}}`
		ans := s.Answer(context.Background(), []byte(line))
		var m struct {
			ID     int              `json:"id"`
			Result *json.RawMessage `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(ans, &m); err != nil || m.ID != 9 || (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("%s(%s): %s", td.Name, raw, ans)
		}
		if strings.Contains(string(ans), "internal error") {
			t.Fatalf("%s(%s) panicked: %s", td.Name, raw, ans)
		}
	})
}

// TestServerVersionIsTheBinarys: the server reports the version laserbrain
// version prints, not a number of its own.
func TestServerVersionIsTheBinarys(t *testing.T) {
	sup, _ := testSupervisor(t, nil)
	cs := connect(t, sup)
	want := version.Get("laserbrain").Version
	if got := cs.InitializeResult().ServerInfo.Version; got != want || got == "0.1.0" {
		t.Fatalf("server version %q, the binary's %q", got, want)
	}
	capa, _ := call(t, cs, "capabilities", nil)
	if s, _ := capa["server"].(string); !strings.Contains(s, "(laserkit "+want+")") {
		t.Fatalf("capabilities server = %q", s)
	}
}
