package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// ScriptEnv names the variable with-postgres.sh sets to its own path.
const ScriptEnv = "LASERKIT_PG_SCRIPT"

// Cluster is a private PostgreSQL server for one test, for tests that stop
// the database under a running session.
type Cluster struct {
	// AdminDSN reaches the superuser on database postgres.
	AdminDSN string
	dir      string
	script   string
	stopOnce sync.Once
}

// StartCluster starts a private server for t and stops and deletes it when
// t ends. It skips t (loudly) where the shared test server is absent too.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	AdminDSN(t) // no shared server: skip for the same reason
	script, err := findScript()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	out, err := exec.Command(script, "--start").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("pgtest: %s --start: %v: %s", script, err, bytes.TrimSpace(ee.Stderr))
		}
		t.Fatalf("pgtest: %s --start: %v", script, err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	c := &Cluster{AdminDSN: vars["LASERKIT_TEST_PG_DSN"], dir: vars["DIR"], script: script}
	if c.dir == "" || c.AdminDSN == "" {
		t.Fatalf("pgtest: %s --start printed no cluster: %s", script, out)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: stopping the private cluster: %v", err)
		}
	})
	return c
}

// NewDatabase creates an empty database on the private cluster for t.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, c.AdminDSN)
}

// Halt stops the server, ending every session at once, keeping its files.
func (c *Cluster) Halt() error { return c.run("--halt") }

// Resume starts a halted server again.
func (c *Cluster) Resume() error { return c.run("--resume") }

func (c *Cluster) run(op string) error {
	out, err := exec.Command(c.script, op, c.dir).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)) + ": " + err.Error())
	}
	return nil
}

// Stop stops the server and deletes its files;
// later calls do nothing.
func (c *Cluster) Stop() error {
	var err error
	c.stopOnce.Do(func() { err = c.run("--stop") })
	return err
}

// findScript locates with-postgres.sh: from the environment, else by
// walking up from the working directory to the module root.
func findScript() (string, error) {
	if s := os.Getenv(ScriptEnv); s != "" {
		return s, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "with-postgres.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/with-postgres.sh not found above the working directory; set " + ScriptEnv)
		}
		dir = parent
	}
}

// Durable turns on what the throwaway cluster runs without — fsync,
// synchronous_commit, full_page_writes — so that a benchmark against it
// pays for durability as a real server does.
func (c *Cluster) Durable(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	for _, q := range []string{`ALTER SYSTEM SET fsync = on`, `ALTER SYSTEM SET synchronous_commit = on`,
		`ALTER SYSTEM SET full_page_writes = on`, `SELECT pg_reload_conf()`} {
		if err := adminExec(ctx, c.AdminDSN, q); err != nil {
			t.Fatalf("pgtest: %s: %v", q, err)
		}
	}
}

// Freeze stops the server's processes with SIGSTOP, the postmaster and
// every process it started: a connection is accepted by the kernel and
// then nothing answers, as with a server that hangs. Thaw undoes it; a
// frozen cluster is thawed when t ends, before it is stopped.
func (c *Cluster) Freeze(t testing.TB) {
	t.Helper()
	if err := c.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("pgtest: freezing the server: %v", err)
	}
	t.Cleanup(func() { _ = c.signal(syscall.SIGCONT) })
}

// Thaw lets a frozen server run again.
func (c *Cluster) Thaw() error { return c.signal(syscall.SIGCONT) }

// signal sends sig to the postmaster and its children.
func (c *Cluster) signal(sig syscall.Signal) error {
	b, err := os.ReadFile(filepath.Join(c.dir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	pids := []int{pm}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ")".
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); i > 0 && len(f) > 1 && f[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && pid == pm {
			return err
		}
	}
	return nil
}
