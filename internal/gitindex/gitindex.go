// Package gitindex reads git's index file (the staging area), and what
// makes a directory a repository's to git, without a git process. Reading it in-process means nothing the repository's own
// configuration names (a clean filter, an fsmonitor hook) runs, which is
// what the gate needs when it looks at a repository an agent controls, and
// it is cheaper than a process for the undo journal's every checkpoint.
package gitindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// Entry is one entry of an index, as Each hands it over.
type Entry struct {
	// Path is slash-separated and relative to the work tree's top. Its
	// bytes are the reader's own: valid only until visit returns.
	Path []byte
	// ID is the object id of the entry's blob (hashLen bytes), valid only
	// until visit returns.
	ID []byte
	// Size is the file's size as git recorded it (its stat data, cut to
	// 32 bits).
	Size uint32
	// Stage is 0 for a merged entry, 1 to 3 for the sides of a conflict.
	Stage int
}

// ErrFormat is what Each returns for a file that is not an index it can
// read (wrapped with what was wrong).
var ErrFormat = errors.New("not a readable git index")

// SHA1Len and SHA256Len are the id lengths, in bytes, of git's two object
// formats.
const (
	SHA1Len   = 20
	SHA256Len = 32
)

// Each reads the index file at path (git's documented format, versions 2
// to 4; hashLen is the object format's id length) and calls visit with
// each entry in the index's order until visit returns false. An error
// reading the file is returned as it is; a file that is not such an index,
// or is cut short, is ErrFormat.
func Each(path string, hashLen int, visit func(Entry) bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return fmt.Errorf("%w: no index signature", ErrFormat)
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return fmt.Errorf("%w: index version %d", ErrFormat, version)
	}
	n := int(binary.BigEndian.Uint32(data[8:12]))
	off, fixed := 12, 40+hashLen+2
	var name []byte // the previous entry's path (version 4 strips from it)
	for i := 0; i < n; i++ {
		start := off
		if off+fixed > len(data) {
			return fmt.Errorf("%w: entry past the end", ErrFormat)
		}
		e := Entry{Size: binary.BigEndian.Uint32(data[off+36 : off+40]), ID: data[off+40 : off+40+hashLen]}
		flags := binary.BigEndian.Uint16(data[off+40+hashLen:])
		e.Stage = int(flags>>12) & 3
		off += fixed
		if version >= 3 && flags&0x4000 != 0 {
			off += 2 // the extended flags
		}
		if version == 4 {
			strip, k := offsetVarint(data[off:])
			if k <= 0 || strip > len(name) {
				return fmt.Errorf("%w: bad path prefix", ErrFormat)
			}
			off += k
			name = name[:len(name)-strip]
		} else {
			name = name[:0]
		}
		end := bytes.IndexByte(data[off:], 0)
		if end < 0 {
			return fmt.Errorf("%w: path without its end", ErrFormat)
		}
		name = append(name, data[off:off+end]...)
		off += end + 1
		if version < 4 {
			off = start + (off-start+7)&^7 // 1 to 8 NULs pad the entry to a multiple of 8
		}
		e.Path = name
		if !visit(e) {
			return nil
		}
	}
	return nil
}

// offsetVarint reads git's offset varint: seven bits a byte, high group
// first, each continuation adding one before the shift; k is the bytes
// read, 0 when it runs past the end or past nine bytes.
func offsetVarint(b []byte) (v, k int) {
	for k < len(b) && k < 9 {
		c := b[k]
		k++
		v = v<<7 | int(c&0x7f)
		if c&0x80 == 0 {
			return v, k
		}
		v++
	}
	return 0, 0
}
