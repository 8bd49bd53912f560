package childtest

import (
	"os"
	"os/exec"

	"github.com/laserkit/laserkit/internal/cli"
)

// Serve runs the job named in the variable env, if any, and exits as a
// command would (non-zero when job fails, saying why); otherwise it returns
// at once.
func Serve(env string, job func(spec string) error) {
	if spec := os.Getenv(env); spec != "" {
		cli.Finish(env+" child", job(spec))
	}
}

// Command is this test binary run again to do spec (running no test
// itself), with extra in its environment.
func Command(env, spec string, extra []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), extra...), env+"="+spec)
	return cmd
}
