package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/laserkit/laserkit/internal/cli"
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
	testscript.Main(m, map[string]func(){
		"laserbrain": func() { os.Exit(run(os.Args[1:], cli.System())) },
	})
}

func TestScripts(t *testing.T) {
	ponder := ponderBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: scriptCmds(),
		Setup: func(env *testscript.Env) error {
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
