package childtest

import (
	"fmt"
	"os"
	"os/exec"
)

// Serve runs the job named in the variable env, if any, and exits (1 when
// job fails, saying why); otherwise it returns at once.
func Serve(env string, job func(spec string) error) {
	spec := os.Getenv(env)
	if spec == "" {
		return
	}
	if err := job(spec); err != nil {
		fmt.Fprintf(os.Stderr, "%s child: %v\n", env, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command is this test binary run again to do spec (running no test
// itself), with extra in its environment.
func Command(env, spec string, extra []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), extra...), env+"="+spec)
	return cmd
}
