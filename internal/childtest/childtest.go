package childtest

import (
	"os"
	"os/exec"
	"testing"

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

// Place is one empty location of a store of kind S (a home, a directory, a
// database) that a suite tests the store on.
type Place[S any] interface {
	// Open opens a new store on the place, as another process would.
	Open(t testing.TB) S
	// Env is what a child process needs in its environment to open the
	// place with the opener given to the suite's Child.
	Env() []string
}
