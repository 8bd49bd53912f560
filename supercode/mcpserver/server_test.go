package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
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
func testSupervisor(t testing.TB, env map[string]string) (*agentrun.Supervisor, string) {
	home := t.TempDir()
	sup := &agentrun.Supervisor{
		Getenv:    func(k string) string { return env[k] },
		OpenFleet: func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(home, "fleet")) },
		OpenRuns: func() (laserbrain.Store, error) {
			return localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
		},
	}
	t.Cleanup(func() { sup.Close() })
	return sup, home
}

// connect runs the server in process and returns a go-sdk client session.
func connect(t *testing.T, sup *agentrun.Supervisor) *mcp.ClientSession {
	t.Helper()
	return connectServer(t, New(sup))
}

// connectServer runs srv in process and returns a go-sdk client session.
func connectServer(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
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
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
	}
	sort.Strings(got)
	// The reference's eleven tools (SDK mcp.py at 0.53.0) and ours.
	want := []string{"capabilities", "check_state", "classify", "get_history", "judge_run", "laserscore", "link_read", "link_write", "lint",
		"modulate", "read_text", "reset_task", "similarity", "store_find", "store_list", "store_vend", "supervision"}
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
	// With user_turn the same change is a reground.
	v, _ = call(t, cs, "check_state", map[string]any{"goal": "add an LRU cache", "distance": 5, "user_turn": true})
	if v["reason"] != "reground" || v["drifting"] != false {
		t.Fatalf("user-turn check = %v", v)
	}
	h, _ := call(t, cs, "get_history", map[string]any{"limit": 2})
	if h["total"] != 3.0 || h["drifting"] != 1.0 || len(h["checks"].([]any)) != 2 {
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

// TestBadArguments: every mistake is a tool error with a reason, and the
// server keeps serving.
func TestBadArguments(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-b", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	cases := []struct {
		tool string
		args any
		want string
	}{
		{"check_state", map[string]any{}, "needs a goal"},
		{"check_state", map[string]any{"goal": "   "}, "needs a goal"},
		{"check_state", map[string]any{"goal": 7}, "goal must be a string"},
		{"check_state", map[string]any{"goal": "x", "distance": "far"}, `distance "far" is not a number`},
		{"check_state", map[string]any{"goal": "x", "distance": []int{1}}, "distance must be a number"},
		{"check_state", map[string]any{"goal": "x", "user_turn": "yes"}, "user_turn must be true or false"},
		{"modulate", map[string]any{"goal": "x", "team": "nope"}, `no preset named "nope"`},
		{"modulate", map[string]any{"goal": "x", "team": "deep-search", "role": "pilot"}, `deep-search has no role 'pilot'`},
		{"get_history", map[string]any{"limit": -1}, "limit must be a whole number"},
		{"store_find", map[string]any{"task": ""}, "needs a task"},
		{"store_find", map[string]any{"task": "ship", "kind": "robot"}, "kind must be workflow or team"},
		{"store_vend", map[string]any{"name": "nope"}, `no workflow "nope"`},
		{"classify", map[string]any{"command": ""}, "needs a command"},
		{"lint", map[string]any{"method": map[string]any{"goal": "x"}}, "method:"},
		{"read_text", map[string]any{"text": "x", "connectivity": "high"}, "connectivity must be a number"},
	}
	for _, c := range cases {
		out, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(out["error"].(string), c.want) {
			t.Errorf("%s %v = %v (isError %v); want an error containing %q", c.tool, c.args, out, isErr, c.want)
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool did not fail")
	}
	// Still serving.
	if v, isErr := call(t, cs, "check_state", map[string]any{"goal": "ship the parser", "distance": "4"}); isErr || v["reason"] != "grounded" {
		t.Fatalf("after the errors: %v", v)
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
	if s["overlap"] != roundN(want, 4) || shared != 2 {
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
	if len(capa["local_tools"].([]any)) != 17 {
		t.Fatalf("capabilities = %v", capa)
	}
}

// FuzzToolArguments: any JSON value as any tool's arguments answers a
// result or a tool error; nothing panics.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{`{}`, `null`, `[]`, `{"goal":"x","distance":"1e400"}`, `{"goal":"x","distance":-3}`,
		`{"limit":1e9}`, `{"top":0.5}`, `{"method":{"spec_version":1,"goal":"g","steps":[{"name":"a"}]}}`, `{"text":"\u0130stanbul"}`,
		`{"goal":"ship","progress":"sideways","team":"deep-search","role":"checker"}`, `"string"`, `{"a":null,"b":1}`} {
		for i := 0; i < 17; i++ {
			f.Add(i, seed)
		}
	}
	sup, _ := testSupervisor(f, map[string]string{agentrun.EnvRun: "fuzz", agentrun.EnvFleet: "f"})
	s := &Server{sup: sup}
	tools := s.tools()
	f.Fuzz(func(t *testing.T, i int, raw string) {
		if i < 0 {
			i = -i
		}
		td := tools[i%len(tools)]
		res, err := s.wrap(td.run)(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: td.tool.Name, Arguments: json.RawMessage(raw)}})
		if err != nil || res == nil || len(res.Content) != 1 {
			t.Fatalf("%s(%s): %v %v", td.tool.Name, raw, res, err)
		}
		if res.IsError && strings.Contains(res.Content[0].(*mcp.TextContent).Text, "internal error") {
			t.Fatalf("%s(%s) panicked: %s", td.tool.Name, raw, res.Content[0].(*mcp.TextContent).Text)
		}
	})
}

// TestServerVersionIsTheBinarys: the server reports the version laserbrain
// version prints, not a number of its own (trial 18).
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
