package agentrun

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/childtest"
)

const childEnv = "AGENTRUN_TEST_CHILD"

// child plays one part of an agent client's process tree, in a real
// process: the client itself (which starts a hook through sh, as every
// client runs a hook command, then an MCP server directly), the hook
// (which binds the session), or the server (which reads its caller).
// spec is ROLE|DIR|SESSION; each writes what it saw to DIR/ROLE.json.
func child(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	role, dir, session := parts[0], parts[1], parts[2]
	sup := &Tracker{BindingDir: filepath.Join(dir, "bindings"), Getenv: func(string) string { return "" }}
	out := map[string]any{}
	switch role {
	case "client", "client-nohook":
		st, err := readStat(os.Getpid())
		if err != nil {
			return err
		}
		out["pid"], out["start"] = os.Getpid(), st.start
		if role == "client" {
			// A hook command: through sh -c, which execs the program.
			hook := exec.Command("sh", "-c", `exec "$0" -test.run='^$'`, os.Args[0])
			hook.Env = append(os.Environ(), childEnv+"=hook|"+dir+"|"+session)
			if b, err := hook.CombinedOutput(); err != nil {
				return fmt.Errorf("hook: %v %s", err, b)
			}
		}
		server := childtest.Command(childEnv, "server|"+dir+"|", nil)
		if b, err := server.CombinedOutput(); err != nil {
			return fmt.Errorf("server: %v %s", err, b)
		}
	case "hook":
		p, err := ClientProcess()
		if err != nil {
			return err
		}
		out["process"] = p
		if err := sup.BindSession(Caller{Session: session, Client: "gemini"}); err != nil {
			return err
		}
	case "server":
		p, err := ClientProcess()
		if err != nil {
			return err
		}
		c := sup.Caller("", "")
		out["process"], out["session"], out["client"] = p, c.Session, c.Client
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	b, _ := json.Marshal(out)
	return os.WriteFile(filepath.Join(dir, role+".json"), b, 0o644)
}

type seen struct {
	PID     int     `json:"pid"`
	Start   uint64  `json:"start"`
	Process Process `json:"process"`
	Session string  `json:"session"`
	Client  string  `json:"client"`
}

func runClient(t *testing.T, role, dir, session string) (client, hook, server seen) {
	t.Helper()
	for _, f := range []string{"client.json", "client-nohook.json", "hook.json", "server.json"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	if b, err := childtest.Command(childEnv, role+"|"+dir+"|"+session, nil).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", role, err, b)
	}
	read := func(name string) seen {
		var s seen
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil && name != "hook.json" {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	return read(role + ".json"), read("hook.json"), read("server.json")
}

// A hook started through sh and an MCP server started directly, by the
// same client process: both find that process (the pid and start time
// /proc gives the client itself), the hook binds its session to it, and
// the server's caller is that session, of that client. Another client
// process's server is bound to nothing — the first one's binding is not
// its own — and the binding of a client that has exited is removed by the
// next one written.
func TestBindingJoinsHookAndServerThroughTheirClient(t *testing.T) {
	dir := t.TempDir()
	c, h, s := runClient(t, "client", dir, "sess-a")
	want := Process{PID: c.PID, Start: c.Start, Boot: h.Process.Boot}
	if h.Process != want || s.Process != want || want.Boot == "" {
		t.Fatalf("client %+v: the hook found %+v, the server %+v", want, h.Process, s.Process)
	}
	if s.Session != "sess-a" || s.Client != "gemini" {
		t.Fatalf("the server's caller: session %q client %q; want sess-a, gemini", s.Session, s.Client)
	}
	first := filepath.Join(dir, "bindings", want.fileName())
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("no binding file for the client: %v", err)
	}

	if _, _, s := runClient(t, "client-nohook", dir, ""); s.Session != "" || s.Process.PID == want.PID {
		t.Fatalf("another client's server took the session %q (process %+v)", s.Session, s.Process)
	}

	c2, _, s2 := runClient(t, "client", dir, "sess-b")
	if s2.Session != "sess-b" || s2.Process.PID != c2.PID {
		t.Fatalf("the second client's server: %+v", s2)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("the exited client's binding is still there (%v)", err)
	}
}

// BoundSession reads only a binding that is the client process's own: a
// file under its name that names another process (a reused pid, a copied
// file) or holds no valid session is not read. BindSession refuses a
// caller without a session, and rewrites nothing when the binding already
// says the same.
func TestBindingIsTheProcesssOwn(t *testing.T) {
	dir := t.TempDir()
	p := Process{PID: 4242, Start: 777, Boot: "boot-x"}
	sup := &Tracker{BindingDir: dir, ClientProcess: func() (Process, error) { return p, nil },
		Now: func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }}
	if _, ok := sup.BoundSession(); ok {
		t.Fatal("bound to something in an empty directory")
	}
	if err := sup.BindSession(Caller{}); err == nil {
		t.Fatal("bound a caller without a session")
	}
	if err := sup.BindSession(Caller{Session: "../x"}); err == nil {
		t.Fatal("bound a session id that is not one")
	}
	if err := sup.BindSession(Caller{Session: "s1", Client: "codex"}); err != nil {
		t.Fatal(err)
	}
	b, ok := sup.BoundSession()
	if !ok || b.Session != "s1" || b.Client != "codex" || b.Process != p {
		t.Fatalf("bound: %+v %v", b, ok)
	}
	path := filepath.Join(dir, p.fileName())
	fi, _ := os.Stat(path)
	sup.Now = func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }
	if err := sup.BindSession(Caller{Session: "s1", Client: "codex"}); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the same binding was written again")
	}
	for name, content := range map[string]string{
		"another process": `{"pid":4242,"start":778,"boot":"boot-x","session":"s2"}`,
		"another boot":    `{"pid":4242,"start":777,"boot":"boot-y","session":"s2"}`,
		"a bad session":   `{"pid":4242,"start":777,"boot":"boot-x","session":"a b"}`,
		"not JSON":        `{`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, ok := sup.BoundSession(); ok {
			t.Errorf("%s: read as bound: %+v", name, b)
		}
	}
}

// readStat reads a name with spaces and parentheses (a process may call
// itself anything) and the fields after it.
func TestReadStat(t *testing.T) {
	st, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getppid() || st.start == 0 || st.comm == "" {
		t.Fatalf("%+v (ppid %d)", st, os.Getppid())
	}
	// A program whose file name holds ") (": the kernel names the process
	// after it.
	data, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "x) (y")
	if err := os.WriteFile(odd, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	got, err := readStat(cmd.Process.Pid)
	if err != nil || got.comm != "x) (y" || got.ppid != os.Getpid() || got.start < st.start {
		t.Fatalf("%+v %v", got, err)
	}
}
