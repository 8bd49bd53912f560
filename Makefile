# The test command the README and CI use is `make test`.
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: all build install test test-race generate check-generated bench bench-stream bench-drift bench-fleet bench-store bench-oca bench-hook bench-pair bench-guard bench-ui bench-coverage bench-undo bench-boundary oracle lint fmt clean claude agents test-agents report-example ui-example test-browser vectors-python

all: build

# The version the binaries print (version, --version): the tag that
# describes HEAD, else v0.0.0-dev; and the commit, for builds the Go
# toolchain records no VCS information for (worktrees, tarballs).
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
# -s -w: no symbol table and no DWARF in the installed programs (a third
# of laserbrain-gate's file; neither is mapped at start, so start-up is the
# same). Stack traces keep their function names and lines (pclntab); build
# without them (go build ./cmd/...) to debug or profile with symbols.
LDFLAGS := -s -w -X github.com/laserkit/laserkit/internal/version.stamp=$(VERSION) -X github.com/laserkit/laserkit/internal/version.commitStamp=$(COMMIT)
PREFIX  ?= /usr/local

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

# laserbrain, laserbrain-gate, laserbrain-otel and ponder into $(PREFIX)/bin (DESTDIR for
# packagers). laserbrain install claude then writes that absolute path
# into the hook configs.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/laserbrain $(BIN)/laserbrain-gate $(BIN)/laserbrain-otel $(BIN)/ponder $(DESTDIR)$(PREFIX)/bin/

# Tests run against a throwaway PostgreSQL (scripts/with-postgres.sh); without
# one the OCA integration tests skip, and the script says so loudly. The
# packages that drive real agent clients take minutes on a busy machine:
# a package may take up to TEST_TIMEOUT (go test's own default is 10m).
# The run ends with one line per reason a test was skipped (a missing agent
# client, browser, server or tool: scripts/skip-summary.sh), since go test
# prints "ok" for a package whose tests all skipped.
TEST_TIMEOUT ?= 30m
test:
	scripts/skip-summary.sh scripts/with-postgres.sh $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

# The race detector over the packages whose tests drive goroutines and
# processes at once: the fleet stores, the broker, the file watcher, the
# local run store, the supervisor's rounds, the hook, and supercode's own
# Saw/Observe. CI runs it after make test (about twice their plain time).
RACE_PKGS := ./supercode ./supercode/fleet/... ./supercode/broker ./internal/fswatch ./laserbrain/localstore ./supercode/supervise ./supercode/hook
test-race:
	scripts/skip-summary.sh scripts/with-postgres.sh $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

# The pinned agent clients the end-to-end tests drive (npm, into a cache
# outside the tree, in parallel; a second run reuses them offline).
agents:
	scripts/install-agents.sh

# Only the Claude Code CLI (make claude keeps working).
claude:
	scripts/install-claude.sh

# Every end-to-end test with a real agent client: the harness baseline of
# all seven (internal/agenttest) and the supervised ones (cmd/laserbrain).
# Tests that drive a real client are named TestAgent…, TestClaude…,
# TestCodex… or TestDoctor…;
# -parallel bounds how many clients run at once.
AGENT_TESTS := TestAgent|TestClaude|TestCodex|TestDoctor|TestRunForwardsSignals
AGENT_PARALLEL ?= 2
test-agents: agents
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -parallel $(AGENT_PARALLEL) -run '$(AGENT_TESTS)' ./internal/agenttest ./cmd/laserbrain

# A real fleet report: three agents under laserbrain run and two ponder
# sessions on a throwaway repository, drawn by laserbrain report --fleet, and
# its first screen in headless Chromium: the README's picture.
report-example: build
	scripts/report-example.sh $(BIN)/report-example.html docs/report-example.png

# The live view of a scripted fleet (three agents: one drifting, one halted by
# a supervisor round) in headless Chromium: the README's picture of laserbrain ui.
ui-example: build
	scripts/ui-example.sh docs/ui-example.png

# Only the browser tests in a real Chromium (Debian's chromium package): the
# HTML reports, and laserbrain ui live (the binary, a fleet, the page).
test-browser:
	$(GO) test -count=1 -run 'Chromium|Harness' ./internal/browsertest ./supercode/report ./ponder/report ./cmd/laserbrain

# Every bench target prints the load average before and after it runs:
# a figure is quoted with the load it ran at.
LOADAVG = @echo "load average: $$(cut -d' ' -f1-3 /proc/loadavg)"

# The stores side by side in one run: the local home against a durable
# PostgreSQL over its Unix socket (checks/s, hook latency, laserbrain-gate's
# allow and deny through the hook server, a stream over 200 new runs), new
# runs in the local store against the earlier per-run files, and the
# journal of 1,000 supervisor rounds in PostgreSQL (minutes; target 5 MB)
# (docs/performance.md).
bench-store:
	$(LOADAVG)
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'GateStore' -benchtime 100x ./cmd/laserbrain-gate/
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'NewRuns' -benchtime 3x ./laserbrain/localstore/
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'StoreSteps|SuperviseRound100' -benchtime 2s ./supercode/backend/
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'HookStore|CheckStream10k(Fresh200|Interleaved8)?$$' -benchtime 50x ./cmd/laserbrain/
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'CheckStreamFresh200Stores' -benchtime 3x ./cmd/laserbrain/
	scripts/with-postgres.sh $(GO) test -timeout 30m -run '^$$' -bench 'SuperviseJournalPostgres' -benchtime 1x ./supercode/supervise/
	$(LOADAVG)

# The OCA store's benchmarks: pgx round trips against psql processes, one run.
bench-oca:
	$(LOADAVG)
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench . -benchmem ./ponder/oca/pgstore/
	$(LOADAVG)

# The Python SDK behind the runner protocol (vectors/adapters/python), sent
# every case of every built-in kind: the reference must agree with all of
# them (CI expects 0 failed, 0 errored). SDK is the directory holding the
# laserbrain package: the reference copy in $(LASERKIT_SHARED) or beside
# the worktree when there is one, else an installed laserbrain (pip install
# laserbrain==0.53.0).
SDK ?= $(wildcard $(or $(LASERKIT_SHARED),../shared)/reference/laserbrain-sdk-0.53.0)
VECTORS_REPORT ?= $(BIN)/vectors-python
vectors-python:
	mkdir -p $(VECTORS_REPORT)
	$(GO) run ./cmd/laserbrain vectors run --report $(VECTORS_REPORT) \
		--impl 'python3 vectors/adapters/python/laserbrain_vectors.py $(if $(SDK),--sdk $(SDK))'

generate:
	$(GO) generate $(PKGS)

# Fails when go generate changes anything: generated code must be committed fresh.
check-generated:
	$(GO) generate $(PKGS)
	git diff --exit-code
	@test -z "$$(git status --porcelain --untracked-files=all -- '*zz_generated*' 'vectors/*.json')" || { echo "go generate created untracked files"; exit 1; }

bench: bench-stream bench-drift bench-fleet bench-boundary
	$(LOADAVG)
	$(GO) test -run '^$$' -bench . -skip '$(FLEET_BENCH)|CheckStream10k|UI50Agents|Boundary|CheckpointHook|DriftStreamOverReference' -benchmem $(PKGS)
	$(LOADAVG)

# What laserbrain run's boundary costs, each a ratio of interleaved medians
# against its baseline in the same run: git status and a tool call's hook
# pair inside the boundary against the same run with the boundary off
# (x-outside, ≤ 1.2×), laserbrain run -- true against the same with the
# network part off (x-no-network, ≤ 2×).
bench-boundary:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench 'Boundary' -benchtime 30x ./cmd/laserbrain
	$(LOADAVG)

# The fleet-scale figures, each a ratio of interleaved medians measured in
# one run and bounded as the acceptance has it: a stream by an agent under
# laserbrain run (through its broker) against an unregistered one (≤ 1.5×), 10k steps over 10k runs against 1k runs
# (≤ 2× per step), a 300k-step run's peak RSS against a 30k one's (≤ 1.5×),
# a fleet report of 100 agents × 1,000 checks (< 1 s), supervise --once
# after 1,000 rounds against a first round (≤ 1.3×; building the 1,000
# rounds takes minutes) and their journal on disk (≤ 5 MB), a round on
# 1,000 agents in 22 clusters after 10 checks (≤ 0.5 s CPU, ≤ 100 KB of
# journal) beside the same fleet with goals that overlap nobody's, and the
# live view's first byte on 100 × 1,000 (≤ 100 ms) and on 1,000 agents,
# their goals overlapping or identical in 22 clusters (≤ 300 ms).
FLEET_BENCH := StreamRegistered1000|StreamRunLocks|LongRunRSS|ReportFleet100x1000|UIFirstByte|SuperviseOnceAfter1000|SuperviseClustered

bench-fleet:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench 'StreamRegistered1000|StreamRunLocks' -benchtime 10x ./cmd/laserbrain
	$(GO) test -run '^$$' -bench 'LongRunRSS|ReportFleet100x1000|UIFirstByte' -benchtime 3x ./cmd/laserbrain
	$(GO) test -timeout 60m -run '^$$' -bench 'SuperviseOnceAfter1000' -benchtime 10x ./supercode/supervise
	$(GO) test -timeout 30m -run '^$$' -bench 'SuperviseClustered' -benchtime 3x ./supercode/supervise
	$(LOADAVG)

# laserbrain check --stream on 10,000 steps, the real binary end to end:
# ns/step, CPU ns/step, and the throughput ratio to the Python reference's
# stated 0.7 ms a step (x-reference; the reference itself is not run).
bench-stream:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench 'CheckStream10k|StreamInProcess10k' -benchtime 5x ./cmd/laserbrain
	$(LOADAVG)

# check --stream against the Python reference on the same 10,000 states,
# the best of three runs of each (x-reference; the target is 150x). The
# reference takes about 7 s a run here near idle. Run it on a quiet
# machine: load slows the reference's long runs far more than the stream.
bench-drift:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench DriftStreamOverReference -benchtime 1x -timeout 20m ./cmd/laserbrain
	$(LOADAVG)

# The PreToolUse hook as Claude Code runs it: whole processes, medians,
# interleaved with /bin/true, an empty Go program (the runtime's floor),
# laserbrain hook pre-tool-use, laserbrain --version and (when LB_SAFETY
# names lb_safety.py) the Python reference. Reports each one's ratio to
# /bin/true against the start-up targets (the gate 1.5x, the other two 3x);
# fails when the gate is past 2.5x (a regression), and reports the ratio to
# the reference (flagged under 100x). -v: the whole report is printed.
bench-hook:
	$(LOADAVG)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/laserbrain
	LASERBRAIN_BIN=$(CURDIR)/$(BIN)/laserbrain $(GO) test -v -run '^$$' -bench HookProcess -benchtime 300x ./cmd/laserbrain-gate
	$(LOADAVG)

# A tool call's two hooks under laserbrain run, as Claude Code runs the
# installed command lines, by a confined agent whose hooks go to the run's
# broker; beside the same pair installed for an empty Go program, interleaved
# in one run: wall and CPU medians. Fails when the CPU ratio is over 2x.
bench-pair:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench HookPairUnderRun -benchtime 60x ./cmd/laserbrain-gate
	$(LOADAVG)

# What the fail-closed guard around the installed hook command costs:
# whole processes, medians, interleaved with /bin/true, the bare gate and
# the unguarded command line through sh -c. Fails over 1.2x the unguarded.
bench-guard:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench GuardedHook -benchtime 300x ./cmd/laserbrain-gate
	$(LOADAVG)

# laserbrain ui under fifty agents checking at once (250 checks a second):
# latency from a check to the page's stream, the server's cores beside its
# idle cores and the writers' CPU, in one run. Fails at a core or a p95 of 2 s.
bench-ui:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench UI50Agents -benchtime 25x ./cmd/laserbrain
	$(LOADAVG)

# What holding an agent to coverage adds to the gate: whole processes,
# medians, interleaved with /bin/true and the same call with coverage off.
# Fails over 0.3 ms added to an allowed call under laserbrain run.
bench-coverage:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench CoverageGate -benchtime 300x ./cmd/laserbrain-gate
	$(LOADAVG)

# What a PreToolUse with its undo checkpoint costs on a 5,000-file
# repository under laserbrain run (the run's process answers the hook and
# watches the work tree): medians, interleaved with checkpoints off and the
# checkpoint finding nothing changed. Fails when 10 changed files cost over
# 1.5x nothing changed, or over 20 ms, in CPU. Then the same without
# laserbrain run (hooks only: the whole tree compared), reported.
bench-undo:
	$(LOADAVG)
	$(GO) test -run '^$$' -bench 'Checkpoint(UnderRun|HooksOnly)' -benchtime 100x ./cmd/laserbrain-gate
	$(LOADAVG)

# Every oracle variant (git, the shell and its tools, npm and cargo registries)
# in throwaway fixtures (go test runs a sample);
# prints the counts operator/POLICY.md quotes.
oracle:
	@log=$$(mktemp); $(GO) test ./operator -count=1 -run 'Oracle' -v -oracle.full >$$log 2>&1; s=$$?; \
	grep -E 'oracle_[a-z]*_?test|shell oracle|publish oracle|cli oracle|    [a-z-]+ +destroyed|FAIL|^ok|panic' $$log; rm -f $$log; exit $$s

# golangci-lint, pinned: `go run` fetches it through the module proxy once
# and reuses the build cache afterwards (.golangci.yml says what it checks).
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(GOLANGCI_LINT) run $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
