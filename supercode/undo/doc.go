// Package undo makes an agent's local damage undoable. No reading of
// commands catches every way to destroy work — a Makefile recipe the agent
// wrote, code built from strings, xargs on input nobody saw, SQL decoded
// from base64 — so before every call that may write, the hooks take a
// checkpoint, whatever the gate answered, and laserbrain undo goes back to
// one, byte for byte.
//
// A checkpoint records the work tree as git sees it (tracked files with
// their uncommitted changes, untracked files that are not ignored), the
// ignored data the project policy names (.laserbrain/policy.json
// "undo": {"include": [...]}: a database, say), the staged changes, and the
// repository's refs, HEAD and stash list. It lives in the laserbrain home,
// which a confined agent cannot write, in an object store of its own per
// work tree that holds every object a checkpoint needs: an agent's git gc
// --prune=now, a deleted branch or rm -rf .git takes nothing from it.
//
// Real git does the work. A snapshot is git add -A through a private index
// into the store's repository (GIT_DIR the store, GIT_WORK_TREE the work
// tree): git compares each tracked file's stat data with the private index
// and hashes only the files that changed, so a checkpoint reads and writes
// what changed since the last one, not the tree (it still stats every
// tracked file and reads each directory for new ones). A process that
// checkpoints one work tree many times (laserbrain run, which answers its
// agent's hooks) watches it through the kernel's file notifications
// instead: a checkpoint is handed the paths that changed since the last,
// reads and hashes only those, and writes the blobs and the trees above them
// as one pack from the last tree it holds in memory, running no git; a
// change the notifications cannot vouch for (a lost notification, a
// directory that appeared, went away or moved, a new path, an ignore rule)
// sends that checkpoint the whole way, through git. The refs
// are read from their files, and their objects fetched into the store only
// when a ref moved. The store's own .gitattributes override makes every
// file go in and come out as its bytes are. A restore is git read-tree -u
// from the state just recorded to the target (only what differs is
// written or removed), a fetch of the objects back into the repository, one
// update-ref transaction, the stash list written back, and the index.
//
// A run's checkpoints are a list in the order taken: the run's start, one
// before each call, one at its end. What a call changed is the difference
// to the next one. An undo records the state before it (so an undo is
// undone like any call) and after it; it refuses while the run has not
// ended or when the work tree changed since it did, unless forced.
package undo
