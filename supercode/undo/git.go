package undo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/internal/gitindex"
	"github.com/laserkit/laserkit/internal/reap"
)

// Repo is a git work tree as the checkpoints see it: its top, its git
// directory (a linked worktree's own) and the common directory its refs and
// objects live in.
type Repo struct {
	Top       string `json:"top"`
	GitDir    string `json:"git_dir"`
	CommonDir string `json:"common_dir"`
}

// ErrNoRepo: the directory is in no git work tree, so there is nothing the
// checkpoints know how to record.
var ErrNoRepo = errors.New("not in a git work tree")

// FindRepo is the work tree containing dir: the nearest directory up that
// holds .git (a directory, or a linked worktree's "gitdir:" file). It reads
// the files git reads, without running git, so a hook pays no process for
// it.
func FindRepo(dir string) (Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for d := abs; ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil && (!fi.IsDir() || gitindex.IsGitDir(dotgit)) {
			// A directory named .git with no HEAD is no repository to git,
			// which looks further up.
			return repoAt(d, dotgit, fi)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Repo{}, fmt.Errorf("%s: %w", dir, ErrNoRepo)
		}
		d = parent
	}
}

func repoAt(top, dotgit string, fi os.FileInfo) (Repo, error) {
	r := Repo{Top: top, GitDir: dotgit, CommonDir: dotgit}
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return Repo{}, err
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return Repo{}, fmt.Errorf("%s is not a gitdir file", dotgit)
		}
		gd = strings.TrimSpace(gd)
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(top, gd)
		}
		r.GitDir, r.CommonDir = filepath.Clean(gd), filepath.Clean(gd)
	} else if !fi.IsDir() {
		return Repo{}, fmt.Errorf("%s is neither a directory nor a gitdir file", dotgit)
	}
	if b, err := os.ReadFile(filepath.Join(r.GitDir, "commondir")); err == nil {
		cd := strings.TrimSpace(string(b))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(r.GitDir, cd)
		}
		r.CommonDir = filepath.Clean(cd)
	}
	if _, err := os.Stat(filepath.Join(r.CommonDir, "objects")); err != nil {
		return Repo{}, fmt.Errorf("%s: no object directory: %w", r.CommonDir, err)
	}
	return r, nil
}

// safeConfig is what every git we run is given on its command line: no
// hook, no file-system monitor and no automatic gc run on our behalf
// (an agent may have set any of them in the repository's configuration),
// and output in one language and one quoting we read.
var safeConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "core.quotePath=false",
	"-c", "advice.addEmbeddedRepo=false",
	"-c", "advice.detachedHead=false",
}

// gitRun is one git process: its arguments after the safe configuration,
// the variables it runs with (the caller's GIT_* ones dropped: they would
// point it elsewhere), its input and directory.
type gitRun struct {
	dir   string
	env   []string
	stdin io.Reader
}

func (g gitRun) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, safeConfig...), args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(cleanEnv(), g.env...)
	cmd.Stdin = g.stdin
	cmd.WaitDelay = waitDelay
	return cmd
}

// out runs git and returns its standard output; a failure names the
// command and what git said.
func (g gitRun) out(ctx context.Context, args ...string) ([]byte, error) {
	cmd := g.cmd(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := reap.Run(cmd); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		if ctx.Err() != nil {
			msg = ctx.Err().Error() + ": " + msg
		}
		return out.Bytes(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.Bytes(), nil
}

// cleanEnv is this process's environment without git's own variables,
// with messages in one language.
func cleanEnv() []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") || strings.HasPrefix(kv, "LANGUAGE=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "LANGUAGE=C", "GIT_TERMINAL_PROMPT=0")
}
