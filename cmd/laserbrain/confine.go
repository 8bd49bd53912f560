package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
	"github.com/laserkit/laserkit/supercode/install"
)

// secretEnv are the variables a confined agent does not get: the store's
// connection string and PostgreSQL's own password settings. Its hooks and
// MCP server do not need them (the broker runs them with the supervisor's
// environment), and an agent that had them could change the store's records
// over the network.
var secretEnv = []string{envconfig.StoreEnv, "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSERVICE"}

// boundaryRun is what the boundary of one agent command needs to know of
// its run: the broker's operations, the run's id (a refusal names it in
// the command a person runs to allow), where its attempts are recorded,
// how a person's authorization of an endpoint is found, and what a person
// passes through on purpose.
type boundaryRun struct {
	ops broker.Ops
	// record appends an event to the run (nil: dropped).
	record func(fleet.RunEvent)
	// permit finds and spends a person's authorization of action (nil:
	// none is looked for).
	permit func(action string) (rule string, ok bool)
	pass   passThrough
	// telemetry is the receiver of the client's own telemetry (a URL on
	// the loopback, outside the boundary; "" for none): the agent's tree
	// reaches it.
	telemetry string
}

// passThrough are credentials a person passes into the boundary on
// purpose (laserbrain run --pass-env, --pass-path): variables by name,
// places by path.
type passThrough struct {
	env, paths []string
}

// runBoundary is what the boundary of the run ops names needs of it, read
// and written through sup's fleet store: the attempts recorded on the run,
// a person's authorizations looked up (and spent) on it.
func runBoundary(sup *agentrun.Tracker, ops broker.Ops, pass passThrough) boundaryRun {
	b := boundaryRun{ops: ops, pass: pass}
	st, err := sup.Fleet()
	if err != nil {
		return b
	}
	ctx := context.Background()
	b.record = func(e fleet.RunEvent) { _, _ = st.AppendEvent(ctx, ops.Run, e) }
	b.permit = func(action string) (string, bool) {
		r, err := st.Run(ctx, ops.Run)
		if err != nil {
			return "", false
		}
		a, ok, err := fleet.Authorize(ctx, st, r.Fleet, r.ID, r.Agent, action, time.Now().UTC())
		if err != nil || !ok {
			return "", false
		}
		return "a person's authorization " + agentrun.AuthorizedBy(a), true
	}
	return b
}

// boundaryFn confines one agent command (its broker's socket in dir).
type boundaryFn func(cmd *exec.Cmd, b boundaryRun, dir string) (note string, done func(), err error)

// agentConfinement is how laserbrain run and laserbrain loop put an agent
// behind the kernel's boundary: it says whether the kernel here can, and
// returns the function that confines one agent command (its broker
// answering in this process what brokerLocal takes, on the stores
// storeConfig names). unconfined says why not, for the run and doctor.
func agentConfinement(self string, storeConfig func() (backend.Config, error)) (confineFn boundaryFn, unconfined string) {
	if v := strings.TrimSpace(os.Getenv(confine.EnvOff)); v == "off" || v == "0" {
		return nil, confine.EnvOff + "=" + v + " turned the kernel's confinement off"
	}
	if err := confine.Check(self); err != nil {
		return nil, err.Error()
	}
	var netErr error
	if v := strings.TrimSpace(os.Getenv(confine.EnvNetOff)); v == "off" || v == "0" {
		netErr = fmt.Errorf("%s=%s turned it off", confine.EnvNetOff, v)
	} else {
		netErr = confine.CheckNet(self)
	}
	return func(cmd *exec.Cmd, b boundaryRun, dir string) (string, func(), error) {
		return confineCommand(self, storeConfig, cmd, b, dir, netErr)
	}, ""
}

// confineCommand puts one agent command behind the boundary: its
// credentials masked and scrubbed, its network its own (unless netErr
// says the kernel cannot), its writes kept to where it works, its hooks'
// operations handed to a broker of its own.
func confineCommand(self string, storeConfig func() (backend.Config, error), cmd *exec.Cmd, b boundaryRun, dir string, netErr error) (string, func(), error) {
	var undo []func()
	done := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	getenv := envGetter(cmd.Env)
	bo := boundaryOf(self, cmd, b, dir, getenv)
	if netErr != nil {
		bo.plan.Net = nil
	}
	made := install.ReadyHeld(cmd.Dir)
	spec, rep := confine.Plan(bo.plan)
	spec.Created = append(made, spec.Created...)
	undo = append(undo, func() { confine.Release(spec) })
	// The agent's confinement, in the broker's environment for its
	// operations (which the agent cannot change): a ponder command it
	// hands over runs under it (laserbrain ponder).
	specJSON, err := json.Marshal(spec)
	if err != nil {
		done()
		return "", nil, err
	}
	sock := filepath.Join(dir, "broker.sock")
	opsEnv := append(slices.Clone(cmd.Env), broker.EnvConfinement+"="+string(specJSON))
	ops := b.ops
	ops.Streams = true // brokerLocal answers them, holding each line to ops.Run
	local, closeLocal := brokerLocal(storeConfig, ops.Run, &hook.Act{Self: self, Passes: &broker.Passes{}})
	undo = append(undo, closeLocal)
	srv := &broker.Server{Self: self, Env: opsEnv, Dir: cmd.Dir, Allow: ops.Allow, Local: local}
	if err := srv.Listen(sock); err != nil {
		done()
		return "", nil, err
	}
	undo = append(undo, func() { srv.Close(5 * time.Second) })
	env := make([]string, 0, len(cmd.Env)+12)
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretEnv, k) && k != broker.EnvSocket && !(spec.Net != nil && slices.Contains(confine.ProxyVars, k)) {
			env = append(env, kv)
		}
	}
	env, removed := confine.ScrubEnv(env, bo.keepEnv)
	if spec.Net != nil {
		env = append(env, confine.ProxyEnv(bo.proxy)...)
	}
	cmd.Env = append(env, broker.EnvSocket+"="+sock)
	h, err := confine.Wrap(cmd, self, spec)
	if err != nil {
		done()
		return "", nil, err
	}
	if h != nil {
		m := bo.mediator(b, getenv)
		served := make(chan struct{})
		go func() {
			defer close(served)
			// Handed over once the agent has started (Spawn starts it
			// after this returns); a setup step that failed hands nothing.
			if lns, err := h.Listeners(time.Minute); err == nil {
				m.Serve(lns)
			}
		}()
		undo = append(undo, func() { h.Close(); <-served; m.Close() })
	}
	return boundaryNote(rep, removed, bo, spec.Net != nil, netErr), done, nil
}

// boundary is one agent command's boundary, planned.
type boundary struct {
	plan    confine.Options
	keepEnv []string
	// passedEnv are the credential variables passed through, each with
	// who passed it.
	passedEnv []string
	policy    confine.NetPolicy
	proxy     string
	direct    map[string]string
	client    client.Name
}

// boundaryOf plans the boundary of cmd: what its client needs to reach
// its model (install.ReachOf), what the project policy opens, what a
// person passes through.
func boundaryOf(self string, cmd *exec.Cmd, b boundaryRun, dir string, getenv func(string) string) boundary {
	var bo boundary
	home, _ := os.UserHomeDir()
	var reach install.Reach
	if n, ok := client.Detect(cmd.Args[0]); ok {
		bo.client = n
		reach = install.ReachOf(n, cmd.Dir, home, getenv)
	}
	pol, _ := agentrun.LoadPolicy(cmd.Dir, policyschema.Validate)
	pb := pol.Boundary
	if pol.Err != "" {
		pb = operator.Boundary{} // a policy that is not valid opens nothing
	}
	bo.keepEnv = append(slices.Clone(reach.Env), b.pass.env...)
	for _, v := range b.pass.env {
		bo.passedEnv = append(bo.passedEnv, v+" (laserbrain run --pass-env)")
	}
	for _, v := range pb.PassEnv {
		bo.keepEnv = append(bo.keepEnv, v)
		bo.passedEnv = append(bo.passedEnv, v+" (the project policy)")
	}
	root := operator.PolicyRoot(cmd.Dir)
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) && root != "" {
			return filepath.Join(root, p)
		}
		return p
	}
	po := planOptions(self, cmd.Dir, dir)
	po.Create = true
	po.State = reach.State
	po.Credentials = append(confine.CredentialPaths(home, getenv), confine.ServerDirs(getenv)...)
	for _, p := range b.pass.paths {
		po.Pass = append(po.Pass, expand(p))
	}
	for _, p := range pb.PassPaths {
		po.Pass = append(po.Pass, expand(p))
	}
	for _, w := range pb.Writable {
		po.Writable = append(po.Writable, expand(w))
	}
	po.Writable = append(po.Writable, caches(home, getenv)...)
	var connect []confine.NetRule
	for _, c := range pb.Connect {
		if h, port, err := confine.ParseEndpoint(c.Endpoint); err == nil {
			connect = append(connect, confine.NetRule{ID: "the project policy's " + c.ID, Host: h, Port: port})
		}
	}
	if h, port, err := confine.ParseEndpoint(b.telemetry); b.telemetry != "" && err == nil {
		connect = append(connect, confine.NetRule{ID: "laserbrain's receiver of the client's telemetry", Host: h, Port: port})
	}
	n, np, proxy, direct := confine.PlanNet(confine.NetOptions{Model: reach.Endpoints, Connect: connect,
		Registries: pb.Registries == nil || *pb.Registries, Never: storeEndpoints(os.Getenv(envconfig.StoreEnv))})
	po.Net = &n
	bo.plan, bo.policy, bo.proxy, bo.direct = po, np, proxy, direct
	return bo
}

// mediator serves the tree's network for run b.
func (bo boundary) mediator(b boundaryRun, getenv func(string) string) *confine.Mediator {
	run := b.ops.Run
	m := &confine.Mediator{Policy: bo.policy, Proxy: bo.proxy, Direct: bo.direct, Attended: getenv(agentrun.EnvAttended) == "1",
		HowToAllow: func(e string) string { return "laserbrain authorize --run " + run + " --connect " + e }}
	if b.permit != nil {
		m.Permit = func(e string) (string, bool) { return b.permit(connectAction(e)) }
	}
	var mu sync.Mutex
	m.Record = func(a confine.Attempt) {
		if b.record == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		ok := laserbrain.OKOf(a.Answer == confine.NetAllowed && a.Error == "")
		data, _ := json.Marshal(a)
		b.record(fleet.RunEvent{At: a.At, Kind: fleet.KindNetwork, Name: string(a.Answer), OK: ok, Text: attemptText(a), Result: data})
		if a.Answer == confine.NetAsked {
			b.record(fleet.RunEvent{At: time.Now().UTC(), Kind: fleet.KindWaiting, Name: "connect",
				Text: "the agent asks to connect to " + a.Endpoint + ": laserbrain authorize --run " + run + " --connect " + a.Endpoint})
		}
	}
	return m
}

// connectAction is what a person's authorization of a connection to
// endpoint names.
func connectAction(endpoint string) string { return "connect " + endpoint }

// attemptText is one attempt as the run's record says it.
func attemptText(a confine.Attempt) string {
	what := a.Endpoint
	if a.Method != "" {
		what = a.Method + " " + what
	}
	t := fmt.Sprintf("%s %s (%s, %s)", a.Answer, what, a.Via, a.Rule)
	if a.Answer == confine.NetAllowed {
		t += fmt.Sprintf(": %d bytes sent, %d received", a.Sent, a.Received)
	}
	if a.Error != "" {
		t += ": " + a.Error
	}
	return t
}

// caches are the build and package caches in the user's home an agent
// writes while it works, those that exist.
func caches(home string, getenv func(string) string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		add(x)
	} else if home != "" {
		add(filepath.Join(home, ".cache"))
	}
	add(getenv("GOMODCACHE"))
	add(getenv("GOCACHE"))
	add(getenv("npm_config_cache"))
	if home != "" {
		for _, d := range []string{".npm", "go/pkg/mod", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".pnpm-store", ".yarn/berry/cache"} {
			add(filepath.Join(home, d))
		}
	}
	return out
}

// envGetter reads env as os.Getenv reads the process's.
func envGetter(env []string) func(string) string {
	return func(k string) string {
		v := ""
		for _, kv := range env {
			if name, val, ok := strings.Cut(kv, "="); ok && name == k {
				v = val
			}
		}
		return v
	}
}

// boundaryNote is what the run records about its boundary.
func boundaryNote(rep confine.Report, removed []string, bo boundary, netOwn bool, netErr error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "confined by the kernel (Landlock and a mount namespace): %d paths read-only to the agent", len(rep.Held))
	for _, h := range rep.Held {
		b.WriteString("\n  held: " + h.Path + " (" + h.What + ")")
	}
	for _, a := range rep.Unwritable {
		b.WriteString("\n  held while absent (outside every writable place): " + a.Path + " (" + a.What + ")")
	}
	for _, a := range rep.Absent {
		b.WriteString("\n  not there, so the gate alone guards it: " + a.Path + " (" + a.What + ")")
	}
	b.WriteString("\nwrites only in: " + strings.Join(rep.Writable, ", "))
	for _, m := range rep.Masked {
		b.WriteString("\n  credentials unreadable: " + m.Path + " (" + m.What + ")")
	}
	for _, p := range rep.Passed {
		b.WriteString("\n  credentials passed through: " + p.Path + " (" + p.What + ")")
	}
	if len(removed) > 0 {
		b.WriteString("\ncredential variables taken out: " + strings.Join(removed, ", "))
	}
	if len(bo.keepEnv) > 0 && bo.client != "" {
		b.WriteString("\ncredential variables kept for " + bo.client.Title() + "'s model: " + strings.Join(install.ModelEnv(bo.client), ", "))
	}
	for _, p := range bo.passedEnv {
		b.WriteString("\ncredential variable passed through: " + p)
	}
	if !netOwn {
		why := "the kernel cannot give it one here"
		if netErr != nil {
			why = netErr.Error()
		}
		b.WriteString("\nnetwork: NOT contained (" + why + "): the agent reaches what this machine reaches")
		return b.String()
	}
	b.WriteString("\nnetwork: its own; through the supervisor only to (proxy " + bo.proxy + "):")
	for _, r := range bo.policy.Allow {
		if r.ID == "a public package registry" {
			continue
		}
		b.WriteString("\n  " + confine.Endpoint(r.Host, r.Port) + " (" + r.ID + ")")
	}
	if slices.ContainsFunc(bo.policy.Allow, func(r confine.NetRule) bool { return r.ID == "a public package registry" }) {
		b.WriteString("\n  the public package registries, reads (" + strings.Join(confine.Registries, ", ") + ")")
	}
	return b.String()
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
	_, rep := confine.Plan(planOptions(self, dir, ""))
	var out []string
	for _, p := range slices.Concat(rep.Held, rep.Within, rep.Unwritable, rep.Absent) {
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
	var out []uint16
	storeHosts(dsn, func(_ string, port uint16) { out = append(out, port) })
	return out
}

// storeHosts calls add with each TCP host and port the PostgreSQL store
// dsn names, fallbacks included (none for the local files or a unix
// socket).
func storeHosts(dsn string, add func(host string, port uint16)) {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" || dsn == "local" {
		return
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return
	}
	tcp := func(host string, port uint16) {
		if !strings.HasPrefix(host, "/") && port != 0 {
			add(host, port)
		}
	}
	tcp(cfg.Host, cfg.Port)
	for _, f := range cfg.Fallbacks {
		tcp(f.Host, f.Port)
	}
}

// storeEndpoints are the host:port endpoints of the PostgreSQL store dsn
// names, loopback and not (none for the local files or a unix socket).
func storeEndpoints(dsn string) []string {
	var out []string
	storeHosts(dsn, func(host string, port uint16) {
		out = append(out, confine.Endpoint(host, port))
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			out = append(out, confine.Endpoint("127.0.0.1", port), confine.Endpoint("::1", port))
		}
	})
	return out
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
