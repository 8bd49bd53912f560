package scan

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Methods a scan can use.
const (
	Git  = "git"
	Walk = "walk"
)

// skipDirs are never descended into by the fallback walk.
var skipDirs = map[string]bool{".git": true, ".ponder": true, "node_modules": true}

// Result is a scan: the method used and the paths found.
type Result struct {
	Method string
	Paths  []string
}

// Dir scans dir: the files on disk under it. A dir that is a symlink to a
// directory is followed — once, at the root (with or without a trailing
// slash); symlinks inside are entries, never followed. progress, if not
// nil, is called with the running count of paths found (often; callers
// throttle).
func Dir(dir string, progress func(n int)) (*Result, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "scan", Path: dir, Err: errors.New("not a directory")}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if paths, ok := gitFiles(real, progress); ok {
		return &Result{Method: Git, Paths: paths}, nil
	}
	paths, err := walk(real, progress)
	if err != nil {
		return nil, err
	}
	return &Result{Method: Walk, Paths: paths}, nil
}

// gitFiles lists the files under dir that are on disk and not ignored:
// tracked ones and untracked ones alike (git ls-files --cached --others
// --exclude-standard). ok is false when dir is not in a git work tree or git
// is not installed.
func gitFiles(dir string, progress func(int)) (paths []string, ok bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false
	}
	cmd := exec.Command("git", "-C", dir, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		entry, err := r.ReadString(0)
		if len(entry) > 1 || (len(entry) == 1 && entry[0] != 0) {
			// A nested repository is listed as its directory, "sub/".
			p := strings.TrimSuffix(strings.TrimSuffix(entry, "\x00"), "/")
			// Tracked but deleted from the work tree is not a file on
			// disk; ponder's own state is never a unit.
			if _, serr := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); serr == nil && !ponderState(p) {
				paths = append(paths, p)
				if progress != nil {
					progress(len(paths))
				}
			}
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, false
	}
	sortBytewise(paths)
	// An unmerged path is listed once per stage.
	return slices.Compact(paths), true
}

// ponderState reports whether p lies in a .ponder directory.
func ponderState(p string) bool {
	return strings.HasPrefix(p, ".ponder/") || strings.Contains(p, "/.ponder/")
}

func walk(dir string, progress func(int)) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		paths = append(paths, filepath.ToSlash(rel))
		if progress != nil {
			progress(len(paths))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortBytewise(paths)
	return paths, nil
}

// sortBytewise sorts by bytes (Go compares strings bytewise), independent
// of locale — git's own order for ls-files.
func sortBytewise(paths []string) { sort.Strings(paths) }
