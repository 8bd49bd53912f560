package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/install"
)

// secretEnv are the variables a confined agent does not get: the store's
// connection string and PostgreSQL's own password settings. Its hooks and
// MCP server do not need them (the broker runs them with the supervisor's
// environment), and an agent that had them could change the store's records
// over the network.
var secretEnv = []string{envconfig.StoreEnv, "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSERVICE"}

// agentConfinement is how laserbrain run and laserbrain loop put an agent
// behind the kernel's boundary: it says whether the kernel here can, and
// returns the function that confines one agent command (its broker, with
// its socket in dir, accepting ops, answering in this process what
// brokerLocal takes, on the stores storeConfig names). unconfined says
// why not, for the run and doctor.
func agentConfinement(self string, storeConfig func() (backend.Config, error)) (confineFn func(cmd *exec.Cmd, ops broker.Ops, dir string) (string, func(), error), unconfined string) {
	if v := strings.TrimSpace(os.Getenv(confine.EnvOff)); v == "off" || v == "0" {
		return nil, confine.EnvOff + "=" + v + " turned the kernel's confinement off"
	}
	if err := confine.Check(self); err != nil {
		return nil, err.Error()
	}
	return func(cmd *exec.Cmd, ops broker.Ops, dir string) (string, func(), error) {
		sock := filepath.Join(dir, "broker.sock")
		po := planOptions(self, cmd.Dir, dir)
		po.Create = true
		spec, held, absent := confine.Plan(po)
		removeCreated := func() {
			for _, d := range confine.Created(spec) {
				_ = os.Remove(d) // only when the agent left it empty
			}
		}
		// The agent's confinement, in the broker's environment for its
		// operations (which the agent cannot change): a ponder command it
		// hands over runs under it (laserbrain ponder).
		specJSON, err := json.Marshal(spec)
		if err != nil {
			removeCreated()
			return "", nil, err
		}
		opsEnv := append(append([]string(nil), cmd.Env...), broker.EnvConfinement+"="+string(specJSON))
		ops.Streams = true // brokerLocal answers them, holding each line to ops.Run
		local, closeLocal := brokerLocal(storeConfig, ops.Run)
		srv := &broker.Server{Self: self, Env: opsEnv, Dir: cmd.Dir, Allow: ops.Allow, Local: local}
		if err := srv.Listen(sock); err != nil {
			removeCreated()
			return "", nil, err
		}
		done := func() {
			srv.Close(5 * time.Second)
			closeLocal()
			removeCreated()
		}
		env := make([]string, 0, len(cmd.Env)+1)
		for _, kv := range cmd.Env {
			k, _, _ := strings.Cut(kv, "=")
			if !contains(secretEnv, k) && k != broker.EnvSocket {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, broker.EnvSocket+"="+sock)
		if err := confine.Wrap(cmd, self, spec); err != nil {
			done()
			return "", nil, err
		}
		return confinementNote(held, absent), done, nil
	}, ""
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// planOptions are what to hold for an agent working in dir, whose run's
// private directory is runDir.
func planOptions(self, dir, runDir string) confine.Options {
	o := confine.Options{Dir: dir, RunDir: runDir, Binaries: []string{self}}
	o.UserHome, _ = os.UserHomeDir()
	if p, err := localstore.DefaultPaths(); err == nil {
		o.Home = p.Home
	}
	o.FleetDir, _ = fleet.DefaultDir()
	if g := client.GateBeside(self); g != "" {
		o.Binaries = append(o.Binaries, g)
	}
	if p := ponderProgram(self); p != "" {
		o.Binaries = append(o.Binaries, p)
	}
	for _, f := range install.HeldFiles(dir, o.UserHome, os.Getenv) {
		o.Files = append(o.Files, confine.Protected{Path: f.Path, What: f.What})
	}
	if v := strings.TrimSpace(os.Getenv(confine.EnvWritable)); v != "" {
		o.Writable = filepath.SplitList(v)
	}
	o.DenyTCP = storePorts(os.Getenv(envconfig.StoreEnv))
	return o
}

// ponderProgram is the ponder supervision runs for an agent: the one
// beside laserbrain, else the one on PATH, links resolved ("" when there is
// none). The run holds it read-only, so the ponder a confined agent's
// broker runs is never one the agent wrote.
func ponderProgram(self string) string {
	p := filepath.Join(filepath.Dir(self), "ponder")
	if !isExecutable(p) {
		var err error
		if p, err = exec.LookPath("ponder"); err != nil {
			return ""
		}
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// protectedPaths are the paths supervision stands on for an agent working
// in dir, whether they exist yet or not: what the kernel's confinement
// binds read-only (confine.Plan), for the clients' own rules.
func protectedPaths(self, dir string) []string {
	_, held, absent := confine.Plan(planOptions(self, dir, ""))
	out := make([]string, 0, len(held)+len(absent))
	for _, p := range append(held, absent...) {
		out = append(out, p.Path)
	}
	return out
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// storePorts are the TCP ports of the PostgreSQL store dsn names (none for
// the local files or a unix socket).
func storePorts(dsn string) []uint16 {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" || dsn == "local" {
		return nil
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil
	}
	var out []uint16
	add := func(host string, port uint16) {
		if !strings.HasPrefix(host, "/") && port != 0 {
			out = append(out, port)
		}
	}
	add(cfg.Host, cfg.Port)
	for _, f := range cfg.Fallbacks {
		add(f.Host, f.Port)
	}
	return out
}

// confinementNote is what the run records about its confinement.
func confinementNote(held, absent []confine.Protected) string {
	var b strings.Builder
	fmt.Fprintf(&b, "confined by the kernel (Landlock and a mount namespace): %d paths read-only to the agent", len(held))
	for _, h := range held {
		b.WriteString("\n  held: " + h.Path + " (" + h.What + ")")
	}
	for _, a := range absent {
		b.WriteString("\n  not there, so the gate alone guards it: " + a.Path + " (" + a.What + ")")
	}
	return b.String()
}

// superviseTree makes this process the one an agent's tree stays below (a
// subreaper named confine.SupervisorComm), so that a person's command run
// anywhere in that tree knows it; it reaps the orphans it inherits as they
// exit (on SIGCHLD), leaving the agent to its own Wait. stop ends it.
func superviseTree() (started func(pid int), stop func()) {
	if err := confine.BecomeSupervisor(); err != nil {
		return func(int) {}, func() {}
	}
	sigs := make(chan os.Signal, 16)
	quit := make(chan struct{})
	return func(pid int) {
			signal.Notify(sigs, syscall.SIGCHLD)
			go func() {
				for {
					select {
					case <-quit:
						return
					case <-sigs:
						confine.Reap(pid)
					}
				}
			}()
		}, func() {
			signal.Stop(sigs)
			close(quit)
		}
}
