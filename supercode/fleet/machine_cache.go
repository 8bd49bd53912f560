package fleet

import (
	"maps"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

// machineRead is the last machine.json this process read and parsed, by
// the file's identity: the gate reads the file on every tool call, and
// laserbrain run answers all of its agent's calls in one process, while
// the file changes only when a halt is put or released or a journal is
// verified further (on a clustered fleet it holds a thousand halts, a
// megabyte to parse). The file is only ever replaced whole, by rename.
var machineRead struct {
	sync.Mutex
	path   string
	stamp  machineStamp
	readAt time.Time
	m      *Machine
}

// machineStamp is what tells one machine.json from another: its inode,
// size and modification time.
type machineStamp struct {
	ino  uint64
	size int64
	mod  time.Time
}

func stampOfMachine(fi os.FileInfo) machineStamp {
	st := machineStamp{size: fi.Size(), mod: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st
}

// machineSettle is how much older than the read a file's modification
// time must be for its stamp to vouch for it: the file system keeps times
// to its clock's tick, so a file written in the same tick as the read
// (and its inode number freed and taken again) could show the same stamp
// with other bytes. A file stamped later than that is read again.
const machineSettle = 100 * time.Millisecond

// cachedMachine is what this process read of the file at path, if the
// file there now is the one it read (a copy the caller may change).
func cachedMachine(path string) *Machine {
	machineRead.Lock()
	defer machineRead.Unlock()
	if machineRead.m == nil || machineRead.path != path {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	st := stampOfMachine(fi)
	if st != machineRead.stamp || !st.mod.Before(machineRead.readAt.Add(-machineSettle)) {
		return nil
	}
	return machineRead.m.clone()
}

// keepMachine keeps m, read at readAt from the file at path with stamp st.
func keepMachine(path string, st machineStamp, readAt time.Time, m *Machine) {
	machineRead.Lock()
	defer machineRead.Unlock()
	machineRead.path, machineRead.stamp, machineRead.readAt, machineRead.m = path, st, readAt, m.clone()
}

// clone is a copy of m that shares nothing a caller changes: its
// witnesses and halts (the bytes it was read from are only compared).
func (m *Machine) clone() *Machine {
	c := &Machine{InForce: slices.Clone(m.InForce), Damaged: m.Damaged, loaded: m.loaded}
	if m.Witness != nil {
		c.Witness = make(map[string]*Witness, len(m.Witness))
		for k, w := range maps.All(m.Witness) {
			v := w.clone()
			c.Witness[k] = &v
		}
	}
	return c
}
