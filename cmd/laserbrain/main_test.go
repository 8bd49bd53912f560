package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/cli/clitest"
)

// TestMain lets the test binary act as the laserbrain command inside the
// txtar scripts of testdata/script, so they drive the real CLI.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LASERBRAIN_TEST_SIGNAL_CHILD"); dir != "" {
		signalChild(dir) // an agent stand-in for TestRunForwardsSignals
	}
	if dir := os.Getenv("LASERBRAIN_TEST_HOOKED_AGENT"); dir != "" {
		hookedAgent(dir) // an agent stand-in for TestHookedAgentHalted
	}
	testscript.Main(removingBuilds{m}, map[string]func(){
		"laserbrain": func() {
			code, cmd := runCmd(os.Args[1:], cli.System())
			clitest.Record(cmd, code)
			os.Exit(code)
		},
	})
}

// removingBuilds runs the tests, then removes the binaries they built once
// for the whole process (laserbrainBinary, ponderBinary): a temporary
// directory of their own each, which t.TempDir cannot give as it ends with
// the test that asked first.
type removingBuilds struct{ m *testing.M }

func (r removingBuilds) Run() int {
	code := r.m.Run()
	for _, dir := range []string{laserbrainDir, ponderDir} {
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
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: scriptCmds(),
		Setup: func(env *testscript.Env) error {
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
			// The loop scripts run the shipped reference loop.
			ref, err := os.ReadFile("../../examples/loop/ci-until-green.sh")
			if err != nil {
				return err
			}
			return os.WriteFile(env.WorkDir+"/ci-until-green.sh", ref, 0o755)
		},
	})
}

// preparedRoot is laserbrain's command tree as it runs (cobra's help and
// completion commands included).
func preparedRoot(t *testing.T) *cobra.Command {
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	root := newRootCmd(streams)
	if _, err := cli.Execute(root, []string{"--help"}, streams); err != nil {
		t.Fatal(err)
	}
	return root
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
