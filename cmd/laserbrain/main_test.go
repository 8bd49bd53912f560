package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/operator/shell"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/cli/clitest"
	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/internal/testhome"
	"github.com/laserkit/laserkit/supercode/confine"
)

// TestMain lets the test binary act as the laserbrain command inside the
// txtar scripts of testdata/script, so they drive the real CLI.
func TestMain(m *testing.M) {
	// In every process of the test binary, the scripts' laserbrain too: a
	// script not about the analysis budget must not meet it on a loaded
	// machine (operator.WidenBudgetForTest).
	shell.WidenBudgetForTest(shell.TestBudgetFactor)
	if dir := os.Getenv("LASERBRAIN_TEST_SIGNAL_CHILD"); dir != "" {
		signalChild(dir) // an agent stand-in for TestRunForwardsSignals
	}
	if dir := os.Getenv("LASERBRAIN_TEST_HOOKED_AGENT"); dir != "" {
		hookedAgent(dir) // an agent stand-in for TestHookedAgentHalted
	}
	if spec := os.Getenv("LASERBRAIN_TEST_STREAM_AGENT"); spec != "" {
		streamAgent(spec) // an agent stand-in for BenchmarkStreamRegistered1000
	}
	testscript.Main(testhome.M{Runner: removingBuilds{m}}, map[string]func(){
		"laserbrain": func() {
			if len(os.Args) > 1 && os.Args[1] == confine.HelperArg {
				// The confinement's setup step, as main runs it: the
				// scripts' runs and loops are confined as the real
				// binary's are.
				os.Exit(int(cli.CodeOf(confine.Main(os.Args[2:]))))
			}
			code, cmd := runCmd(newFactory(cli.System()), os.Args[1:])
			clitest.Record(cmd, code)
			os.Exit(code)
		},
	})
}

// removingBuilds runs the tests, then removes the binaries they built once
// for the whole process (builds): a temporary directory of their own each,
// which t.TempDir cannot give as it ends with the test that asked first.
type removingBuilds struct{ m *testing.M }

func (r removingBuilds) Run() int {
	code := r.m.Run()
	dirs := []string{batteryGoCache}
	for _, b := range builds {
		dirs = append(dirs, b.dir)
	}
	for _, dir := range dirs {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	return code
}

// unobservedExits are the exit codes commands document that no script
// provokes, and why.
var unobservedExits = map[string]string{
	"laserbrain exit-codes 2": "a help topic: cobra prints it whatever follows",
	"laserbrain store init 0": "it needs a PostgreSQL database: store_pg_test.go runs it against one",
	"laserbrain ui 0":         "it serves until interrupted: TestUIInChromium stops the real binary with SIGINT and checks it exits 0",
}

func TestScripts(t *testing.T) {
	ponder := ponderBinary(t)
	exitLog := filepath.Join(t.TempDir(), "exits.log")
	// After every script has run: each command exited only with codes its
	// help documents, and each documented code was seen.
	t.Cleanup(func() {
		clitest.CheckExits(t, preparedRoot(t), exitLog, unobservedExits)
	})
	adapter, sdkArg := pythonAdapter()
	testscript.Run(t, testscript.Params{
		Dir:       "testdata/script",
		Cmds:      scriptCmds(),
		Condition: scriptConditions,
		Setup: func(env *testscript.Env) error {
			// The Python SDK's adapter, and where the SDK is (the shared
			// reference copy, when it is beside the worktree).
			env.Setenv("ADAPTER", adapter)
			env.Setenv("SDK_ARG", sdkArg)
			env.Setenv(clitest.LogEnv, exitLog)
			// What grammar.json itself says, for the version scripts.
			version, hash, err := grammarFacts()
			if err != nil {
				return err
			}
			env.Setenv("GRAMMAR_VERSION", version)
			env.Setenv("GRAMMAR_HASH", hash)
			// Each script gets its own laserbrain home, never the user's,
			// and the ponder binary beside laserbrain.
			env.Setenv("LASERBRAIN_HOME", env.WorkDir+"/.laserbrain")
			env.Setenv("PATH", ponder+string(os.PathListSeparator)+env.Getenv("PATH"))
			// The loop scripts run the shipped reference loop, and ralph.sid
			// (from its source document when it is there: ralphScript).
			ref, err := os.ReadFile("../../examples/loop/ci-until-green.sh")
			if err != nil {
				return err
			}
			if err := os.WriteFile(env.WorkDir+"/ci-until-green.sh", ref, 0o755); err != nil {
				return err
			}
			ralph, from, err := ralphScript()
			if err != nil {
				return err
			}
			env.Setenv("RALPH_FROM", from)
			return os.WriteFile(env.WorkDir+"/ralph.sid", ralph, 0o755)
		},
	})
}

// pythonAdapter is the shipped Python adapter's path, and the --sdk
// argument that points it at the reference copy beside the worktree ("" when
// there is none: it then imports an installed laserbrain).
func pythonAdapter() (adapter, sdkArg string) {
	a, _ := filepath.Abs("../../vectors/adapters/python/laserbrain_vectors.py")
	if init, err := testenv.SharedPath("reference/laserbrain-sdk-0.53.0/laserbrain/__init__.py"); err == nil {
		sdkArg = "--sdk " + filepath.Dir(filepath.Dir(init))
	}
	return a, sdkArg
}

// scriptConditions are the scripts' own conditions:
//
//	[python]      python3 runs (the broken-port fixture is Python)
//	[python-sdk]  and imports the laserbrain SDK (from $SDK_ARG's copy or
//	              installed): the Python adapter can run
//
// Under CI=true a missing one is an error, not a skip: CI installs them.
func scriptConditions(cond string) (bool, error) {
	var ok bool
	var why string
	switch cond {
	case "python":
		_, err := exec.LookPath("python3")
		ok, why = err == nil, "python3 is not on PATH"
	case "python-sdk":
		_, sdkArg := pythonAdapter()
		cmd := exec.Command("python3", "-c", "import laserbrain")
		if dir := strings.TrimPrefix(sdkArg, "--sdk "); dir != "" {
			cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
		}
		ok, why = cmd.Run() == nil, "python3 cannot import the laserbrain SDK (the reference copy in ../shared, or pip install laserbrain==0.53.0)"
	default:
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	return testenv.Condition(ok, why)
}

// preparedRoot is laserbrain's command tree as it runs (cobra's help and
// completion commands included).
func preparedRoot(t *testing.T) *cobra.Command {
	return clitest.Prepared(t, func(s *cli.IOStreams) *cobra.Command { return newRootCmd(newFactory(s)) })
}

// Every command has examples and a long help that explains; the root's
// commands are grouped.
func TestHelpStyle(t *testing.T) { clitest.CheckHelp(t, preparedRoot(t)) }

// grammarFacts reads the version and content_hash grammar.json states.
func grammarFacts() (version, hash string, err error) {
	data, err := os.ReadFile("../../grammar/grammar.json")
	if err != nil {
		return "", "", err
	}
	var g struct {
		Version string `json:"laserbrain_grammar"`
		Hash    string `json:"content_hash"`
	}
	err = json.Unmarshal(data, &g)
	return g.Version, g.Hash, err
}
