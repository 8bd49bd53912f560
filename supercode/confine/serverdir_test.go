package confine

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/envconfig"
)

// laserbrain's servers for one user answer outside any run with the
// store's credentials: a confined agent cannot reach them. A server that
// starts listening after the run's boundary was planned, in the directory
// under the agent's $TMPDIR, is reached from outside (the oracle) and not
// from inside, where without the cover it is reached.
func TestServerDirsCovered(t *testing.T) {
	need(t, "python3")
	root := t.TempDir()
	work, tmp := filepath.Join(root, "work"), filepath.Join(root, "tmp")
	write(t, filepath.Join(work, "main.go"), "package main\n")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "TMPDIR" {
			return tmp
		}
		return ""
	}
	dirs := ServerDirs(getenv)
	dir := envconfig.ServerDir(tmp)
	if len(dirs) == 0 || dirs[0].Path != dir {
		t.Fatalf("server directories %v, want %s first", dirs, dir)
	}
	spec, rep := Plan(Options{Dir: work, RunDir: runDir(t), Credentials: dirs})
	if !strings.Contains(strings.Join(maskedPaths(rep), " "), dir) {
		t.Fatalf("the server directory is not covered: %+v", rep.Masked)
	}
	sock := filepath.Join(dir, "hook-test.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("answered\n"))
			c.Close()
		}
	}()
	connect := "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())' " + sock + " 2>&1"
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("outside, the server is not reached: %v", err)
	}
	c.Close()
	uncovered, _ := Plan(Options{Dir: work, RunDir: runDir(t)})
	if got := inside(t, uncovered, work, connect); !strings.Contains(got, "answered") {
		t.Fatalf("the control: a confined process without the cover does not reach the socket either, so the cover shows nothing:\n%s", got)
	}
	if got := inside(t, spec, work, connect); strings.Contains(got, "answered") {
		t.Errorf("a confined process reached the server's socket:\n%s", got)
	}
}

func maskedPaths(rep Report) []string {
	var out []string
	for _, m := range rep.Masked {
		out = append(out, m.Path)
	}
	return out
}
