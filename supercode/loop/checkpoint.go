package loop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RefPrefix is where checkpoints live: refs/laserkit/loop/<run>/<step>.
const RefPrefix = "refs/laserkit/loop/"

// CheckpointRef names a run's checkpoint for a step.
func CheckpointRef(run string, step int) string { return fmt.Sprintf("%s%s/%d", RefPrefix, run, step) }

// repo is the git repository the loop works in.
type repo struct {
	top string
	// exclude are paths inside the tree a snapshot leaves out: laserbrain's
	// own state, when it lives in the repository.
	exclude []string
}

// findRepo returns the repository containing dir, or nil outside one.
func findRepo(ctx context.Context, dir string) *repo {
	out, err := gitOut(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil || strings.TrimSpace(out) == "" {
		return nil
	}
	return &repo{top: strings.TrimSpace(out)}
}

// gitCmd is git run in dir with env added, never prompting.
func gitCmd(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

func gitOut(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := gitCmd(ctx, dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.String(), nil
}

// snapshot writes the working tree as git sees it — tracked files as they
// are on disk, untracked files that are not ignored, deletions — to a tree
// object, through a private index in scratch, so the user's index and
// working tree are never touched. With commitMsg it also makes a commit of
// that tree (parent HEAD when there is one) and returns it.
func (g *repo) snapshot(ctx context.Context, scratch, commitMsg string) (tree, commit string, err error) {
	index := filepath.Join(scratch, "checkpoint.index")
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	head, herr := gitOut(ctx, g.top, nil, "rev-parse", "--verify", "-q", "HEAD")
	head = strings.TrimSpace(head)
	// Start from a copy of the real index: its stat data spares hashing
	// every unchanged file again.
	seeded := false
	if p, err := gitOut(ctx, g.top, nil, "rev-parse", "--path-format=absolute", "--git-path", "index"); err == nil {
		seeded = copyFile(strings.TrimSpace(p), index) == nil
	}
	if !seeded {
		os.Remove(index)
		if herr == nil && head != "" {
			if _, err := gitOut(ctx, g.top, env, "read-tree", head); err != nil {
				return "", "", err
			}
		}
	}
	add := []string{"add", "-A", "--", "."}
	for _, x := range g.exclude {
		add = append(add, ":(exclude)"+x)
	}
	if _, err := gitOut(ctx, g.top, env, add...); err != nil {
		return "", "", err
	}
	out, err := gitOut(ctx, g.top, env, "write-tree")
	if err != nil {
		return "", "", err
	}
	tree = strings.TrimSpace(out)
	if commitMsg == "" {
		return tree, "", nil
	}
	args := []string{"commit-tree", tree, "-m", commitMsg}
	if herr == nil && head != "" {
		args = append(args, "-p", head)
	}
	ident := []string{"GIT_AUTHOR_NAME=laserbrain loop", "GIT_AUTHOR_EMAIL=loop@laserkit.invalid",
		"GIT_COMMITTER_NAME=laserbrain loop", "GIT_COMMITTER_EMAIL=loop@laserkit.invalid"}
	out, err = gitOut(ctx, g.top, ident, args...)
	if err != nil {
		return "", "", err
	}
	return tree, strings.TrimSpace(out), nil
}

// checkpoint commits the tree to ref and returns the tree's id.
func (g *repo) checkpoint(ctx context.Context, scratch, ref, msg string) (tree string, err error) {
	tree, commit, err := g.snapshot(ctx, scratch, msg)
	if err != nil {
		return "", err
	}
	if _, err := gitOut(ctx, g.top, nil, "update-ref", "-m", msg, ref, commit); err != nil {
		return "", err
	}
	return tree, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// excludeInside adds the paths under the repository's top that git does
// not already ignore to the snapshot exclusions.
func (g *repo) excludeInside(ctx context.Context, paths ...string) {
	top, err := filepath.EvalSymlinks(g.top)
	if err != nil {
		top = g.top
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		rel, err := filepath.Rel(top, abs)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		if _, err := gitOut(ctx, g.top, nil, "check-ignore", "-q", rel); err == nil {
			continue // ignored already: naming it to git add would be an error
		}
		g.exclude = append(g.exclude, filepath.ToSlash(rel))
	}
}
