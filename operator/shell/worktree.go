package shell

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // git's object ids, not a security hash
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/internal/gitindex"
)

// Uncommitted work. A file git tracks whose content in the work tree
// differs from what the index holds has changes nobody recorded: deleting
// it (rm, even without -r), emptying it (truncate) or writing over it
// with git's own output (git diff --output) loses them, and nothing in git
// brings them back. The gate reads the repository's index itself — no
// git process, so nothing the repository's configuration names (a clean
// filter, an fsmonitor hook) runs — and hashes the file as git hashes a
// blob. A file whose content git would filter (attributes) reads as
// changed: asked, not let through.

// maxHashedFile bounds the file the gate hashes to compare with the index.
const maxHashedFile = 8 << 20

// losesWork records that by, run as text, overwrites or deletes w's
// uncommitted changes, when w is such a file.
func (a *analyzer) losesWork(w arg, by, text string) {
	p, ok := a.resolve(w)
	if !ok || !filepath.IsAbs(p) || !uncommitted(p) {
		return
	}
	a.add(Finding{Label: "parsed: " + by + " destroys uncommitted changes to a file (no copy of them in git)", Where: Unknown,
		Note: "the work tree holds the only copy of " + w.val + "'s changes", Command: text, Paths: []string{p}})
}

// uncommitted: p is a regular file tracked in its repository's index
// whose content differs from the index's.
func uncommitted(p string) bool {
	gitDir, rel, ok := repositoryOf(p)
	if !ok {
		return false
	}
	sha256Repo := sha256Repository(gitDir)
	want, size, found := indexEntry(filepath.Join(gitDir, "index"), rel, sha256Repo)
	return found && differsFromBlob(p, want, size, sha256Repo)
}

// sha256Repository: the repository names its objects by SHA-256.
func sha256Repository(gitDir string) bool {
	cfg, err := os.ReadFile(filepath.Join(gitDir, "config"))
	return err == nil && bytes.Contains(bytes.ToLower(cfg), []byte("objectformat = sha256"))
}

// differsFromBlob: p is a regular file whose content is not the blob
// want of size bytes (hashed as git hashes a blob).
func differsFromBlob(p string, want []byte, size uint32, sha256Repo bool) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if uint32(fi.Size()) != size || fi.Size() > maxHashedFile {
		return true
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha1.New() //nolint:gosec // git's object ids
	if sha256Repo {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	if _, err := io.Copy(h, io.LimitReader(f, maxHashedFile)); err != nil {
		return false
	}
	return !bytes.Equal(h.Sum(nil), want)
}

// repositoryOf is the git directory of the work tree holding p, and p
// relative to its top (slash-separated); a .git file (a linked worktree,
// a submodule) names its git directory.
func repositoryOf(p string) (gitDir, rel string, ok bool) {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		dotGit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotGit)
		if err == nil {
			r, err := filepath.Rel(dir, p)
			if err != nil {
				return "", "", false
			}
			if fi.IsDir() {
				return dotGit, filepath.ToSlash(r), true
			}
			data, err := os.ReadFile(dotGit)
			line, found := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if err != nil || !found {
				return "", "", false
			}
			if !filepath.IsAbs(line) {
				line = filepath.Join(dir, line)
			}
			return line, filepath.ToSlash(r), true
		}
		if dir == filepath.Dir(dir) {
			return "", "", false
		}
	}
}

// indexEntry finds path's stage-0 entry in an index file: its object id
// and the size git recorded.
func indexEntry(indexPath, path string, sha256Repo bool) (id []byte, size uint32, found bool) {
	hashLen := gitindex.SHA1Len
	if sha256Repo {
		hashLen = gitindex.SHA256Len
	}
	_ = gitindex.Each(indexPath, hashLen, func(e gitindex.Entry) bool {
		if e.Stage == 0 && string(e.Path) == path {
			id, size, found = bytes.Clone(e.ID), e.Size, true
			return false
		}
		return true
	})
	return id, size, found
}
