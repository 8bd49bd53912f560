package fswatch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// Watch signals on the returned channel whenever a file or directory under
// one of roots is created, written, removed or renamed. Signals coalesce:
// the channel holds at most one, so a reader that is busy finds one waiting
// however many changes it missed. Directories created under a root are
// watched as they appear; a root that does not exist yet is waited for
// from its nearest existing parent. skip, when not nil, names changes that
// do not count (a lock file taken). The watch ends with ctx; the channel
// is then closed. An error is one the kernel gave at the start (too many
// watches, no inotify).
func Watch(ctx context.Context, roots []string, skip func(path string) bool) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	var abs []string
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			w.Close()
			return nil, err
		}
		abs = append(abs, filepath.Clean(a))
	}
	t := &tree{w: w, roots: abs, watched: map[string]bool{}}
	for _, r := range abs {
		if err := t.start(r); err != nil {
			w.Close()
			return nil, err
		}
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		signal := func() {
			select {
			case out <- struct{}{}:
			default:
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Create) {
					if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
						before := t.present()
						_ = t.cover(ev.Name)
						if t.present() > before {
							// A root appeared (perhaps with its files,
							// made before its watch was added).
							signal()
							continue
						}
					}
				}
				if ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Remove|fsnotify.Rename) == 0 || !t.inside(ev.Name) {
					continue
				}
				if skip != nil && skip(ev.Name) {
					continue
				}
				signal()
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow lost events: whatever changed, say so.
				signal()
			}
		}
	}()
	return out, nil
}

// tree is the watches over the roots and the parents waited on.
type tree struct {
	w       *fsnotify.Watcher
	roots   []string
	watched map[string]bool
}

// present counts the roots being watched.
func (t *tree) present() int {
	n := 0
	for _, r := range t.roots {
		if t.watched[r] {
			n++
		}
	}
	return n
}

// inside reports whether path is under one of the roots (a root itself
// included).
func (t *tree) inside(path string) bool {
	for _, r := range t.roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// cover watches dir, a directory just seen: every directory below it
// when it is inside a root; when it is a parent of a root not there yet,
// dir itself, and whatever of the root's path exists below it.
func (t *tree) cover(dir string) error {
	if t.inside(dir) {
		return t.walk(dir)
	}
	for _, r := range t.roots {
		if strings.HasPrefix(r, dir+string(filepath.Separator)) {
			if err := t.start(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// start watches root when it exists, else waits for it at its nearest
// existing parent. A directory on the way made between the look and the
// watch reported nothing to the parent's watch, so after each watch the
// look is taken again, until it finds no more of root's path.
func (t *tree) start(root string) error {
	for {
		p := nearest(root)
		if p == "" {
			return nil
		}
		if p == root {
			return t.walk(root)
		}
		if t.watched[p] {
			return nil // watched before this look: whatever is made below it is reported
		}
		if err := t.add(p); err != nil {
			return err
		}
		if nearest(root) == p {
			return nil
		}
	}
}

// nearest is path's nearest directory that exists, path itself included;
// "" when none does.
func nearest(path string) string {
	for p := path; ; {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}

// walk watches dir and every directory below it.
func (t *tree) walk(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		return t.add(p)
	})
}

func (t *tree) add(dir string) error {
	if t.watched[dir] {
		return nil
	}
	if err := t.w.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	t.watched[dir] = true
	return nil
}

// Lock reports whether path is a lock file (NAME.lock): taking one changes
// nothing another reader needs to see.
func Lock(path string) bool { return strings.HasSuffix(path, ".lock") }
