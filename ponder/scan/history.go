package scan

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Known reports which of names (relative to dir, as bytes) git knows in
// dir's work tree: in the last commit or in the index. A name git knows
// is a file that existed, whatever the disk says now. The value is the
// name's blob id in the last commit ("" when only the index has it). ok
// is false outside a work tree or without git; then nothing is known.
func Known(dir string, names []string) (known map[string]string, ok bool) {
	if len(names) == 0 {
		return map[string]string{}, true
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false
	}
	known = map[string]string{}
	// HEAD: "<mode> <type> <id>\t<name>\0"; no HEAD yet is not an error
	// worth more than an empty answer.
	if out, err := git(dir, append([]string{"ls-tree", "-z", "HEAD", "--"}, names...)...); err == nil {
		for _, entry := range strings.Split(out, "\x00") {
			meta, name, found := strings.Cut(entry, "\t")
			if !found {
				continue
			}
			if f := strings.Fields(meta); len(f) == 3 {
				known[name] = f[2]
			}
		}
	} else if _, err := git(dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return nil, false
	}
	out, err := git(dir, append([]string{"ls-files", "-z", "--cached", "--"}, names...)...)
	if err != nil {
		return nil, false
	}
	for _, name := range strings.Split(out, "\x00") {
		if _, seen := known[name]; name != "" && !seen {
			known[name] = ""
		}
	}
	return known, true
}

// Hashes are the git blob ids of files on disk under dir (git
// hash-object), by name; a name that cannot be hashed is left out.
func Hashes(dir string, names []string) map[string]string {
	out := map[string]string{}
	// --stdin-paths reads a name a line: a name holding a newline cannot
	// be asked for.
	// hash-object fails whole on one name it cannot read: ask only for
	// regular files.
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		if strings.ContainsAny(n, "\n\r") {
			return true
		}
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(n)))
		return err != nil || !fi.Mode().IsRegular()
	})
	if len(names) == 0 {
		return out
	}
	// --stdin-paths does not resolve names against the working directory:
	// give it absolute ones.
	abs := make([]string, len(names))
	for i, n := range names {
		abs[i] = filepath.Join(dir, filepath.FromSlash(n))
	}
	cmd := exec.Command("git", "-C", dir, "hash-object", "--no-filters", "--stdin-paths")
	cmd.Stdin = strings.NewReader(strings.Join(abs, "\n") + "\n")
	cmd.Stderr = io.Discard
	res, err := cmd.Output()
	if err != nil {
		return out
	}
	ids := strings.Fields(string(res))
	if len(ids) != len(names) {
		return out
	}
	for i, n := range names {
		out[n] = ids[i]
	}
	return out
}

// git runs git in dir on literal path names (no pathspec magic).
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--literal-pathspecs", "-C", dir}, args...)...)
	cmd.Stderr = io.Discard
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}
