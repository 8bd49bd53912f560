package gitindex

import (
	"os"
	"path/filepath"
)

// IsGitDir says whether git takes the directory g (a work tree's .git)
// for a repository's: it holds a HEAD file, and objects and refs, or a
// commondir through which a linked worktree's finds them. A directory
// named .git without them is none to git, which looks further up.
func IsGitDir(g string) bool {
	if fi, err := os.Stat(filepath.Join(g, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if _, err := os.Stat(filepath.Join(g, "commondir")); err == nil {
		return true
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(g, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
