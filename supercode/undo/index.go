package undo

import "github.com/laserkit/laserkit/internal/gitindex"

// entrySize is what the private index said of a path at the last
// checkpoint: that it was there, and its size (the stat data git keeps;
// the store's attributes make it the blob's size).
type entrySize struct {
	Size int64
}

// readIndexSizes reads the sizes of the paths wanted from an index file:
// enough to tell an added file from a modified one and what a change lost,
// without a git process. hashLen is the object format's id length in bytes.
func readIndexSizes(path string, hashLen int, wanted map[string]bool) (map[string]entrySize, error) {
	out := make(map[string]entrySize, len(wanted))
	err := gitindex.Each(path, hashLen, func(e gitindex.Entry) bool {
		if wanted[string(e.Path)] {
			out[string(e.Path)] = entrySize{Size: int64(e.Size)}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
