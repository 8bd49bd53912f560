package scan

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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

// Dir scans dir. progress, if not nil, is called with the running count of
// paths found (often; callers throttle).
func Dir(dir string, progress func(n int)) (*Result, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "scan", Path: dir, Err: errors.New("not a directory")}
	}
	if paths, ok := gitFiles(dir, progress); ok {
		return &Result{Method: Git, Paths: paths}, nil
	}
	paths, err := walk(dir, progress)
	if err != nil {
		return nil, err
	}
	return &Result{Method: Walk, Paths: paths}, nil
}

// gitFiles lists the tracked files under dir that are on disk. ok is false
// when dir is not in a git work tree or git is not installed.
func gitFiles(dir string, progress func(int)) (paths []string, ok bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false
	}
	cmd := exec.Command("git", "-C", dir, "ls-files", "-z")
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
			p := strings.TrimSuffix(entry, "\x00")
			// Tracked but deleted from the work tree is not a file on disk.
			if _, serr := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); serr == nil {
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
	return paths, true
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
