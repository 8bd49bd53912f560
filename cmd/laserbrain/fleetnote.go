package main

import (
	"fmt"
	"io"
	"strings"
)

// noteDirFleet tells a person, on stderr, why the fleet is a directory's
// (dir:…) rather than a repository's: outside a git repository with a
// commit, only agents started in that very directory belong to it — which
// is why a table can be empty.
func noteDirFleet(w io.Writer, command, fid string) {
	if dir, ok := strings.CutPrefix(fid, "dir:"); ok {
		fmt.Fprintf(w, "laserbrain %s: note: %s is not in a git repository with a commit, so the fleet is %s: only agents started in this directory belong to it (LASERBRAIN_FLEET names a fleet explicitly)\n", command, dir, fid)
	}
}
