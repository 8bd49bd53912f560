package undo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// entrySize is what the private index said of a path at the last
// checkpoint: that it was there, and its size (the stat data git keeps;
// the store's attributes make it the blob's size).
type entrySize struct {
	Size int64
}

// readIndexSizes reads the paths and sizes of an index file (git's
// documented format, versions 2 to 4) for the paths wanted: enough to tell
// an added file from a modified one and what a change lost, without a git
// process. hashLen is the object format's id length in bytes.
func readIndexSizes(path string, hashLen int, wanted map[string]bool) (map[string]entrySize, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errors.New("not an index file")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	n := int(binary.BigEndian.Uint32(data[8:12]))
	out := make(map[string]entrySize, len(wanted))
	off := 12
	var name []byte // the previous entry's path (version 4 strips from it)
	fixed := 40 + hashLen + 2
	for i := 0; i < n; i++ {
		start := off
		if off+fixed > len(data) {
			return nil, errors.New("index entry past the end")
		}
		size := int64(binary.BigEndian.Uint32(data[off+36 : off+40]))
		flags := binary.BigEndian.Uint16(data[off+40+hashLen:])
		off += fixed
		if version >= 3 && flags&0x4000 != 0 {
			off += 2
		}
		if version == 4 {
			strip, k := gitVarint(data[off:])
			if k <= 0 || strip > len(name) {
				return nil, errors.New("bad path prefix in index")
			}
			off += k
			end := indexNUL(data, off)
			if end < 0 {
				return nil, errors.New("index path without its end")
			}
			name = append(name[:len(name)-strip], data[off:end]...)
			off = end + 1
		} else {
			end := indexNUL(data, off)
			if end < 0 {
				return nil, errors.New("index path without its end")
			}
			name = append(name[:0], data[off:end]...)
			off = start + (end-start+8)/8*8 // 1 to 8 NULs pad the entry to a multiple of 8
		}
		if wanted[string(name)] {
			out[string(name)] = entrySize{Size: size}
		}
	}
	return out, nil
}

func indexNUL(data []byte, from int) int {
	for i := from; i < len(data); i++ {
		if data[i] == 0 {
			return i
		}
	}
	return -1
}

// gitVarint reads git's offset varint (varint.c): seven bits a byte, high
// group first, each continuation adding one; k is the bytes read (0: bad).
func gitVarint(b []byte) (v, k int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = int(c & 127)
	k = 1
	for c&128 != 0 {
		if k >= len(b) || k > 8 {
			return 0, 0
		}
		c = b[k]
		k++
		v = ((v + 1) << 7) | int(c&127)
	}
	return v, k
}
