package undo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1" //nolint:gosec // git's object names
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

// The object types a pack names.
const (
	objTree = 2
	objBlob = 3
)

// packer gathers the objects a checkpoint made and writes them as one git
// pack with its index (version 2 of both), which git reads beside its
// loose objects and other packs.
type packer struct {
	raw  int
	objs []packObj
	seen map[string]bool
}

type packObj struct {
	id   []byte
	kind byte
	data []byte
}

func (p *packer) newHash() hash.Hash {
	if p.raw == sha256.Size {
		return sha256.New()
	}
	return sha1.New() //nolint:gosec // git's object names
}

// add keeps an object for the pack and returns its name.
func (p *packer) add(kind byte, data []byte) []byte {
	h := p.newHash()
	name := "blob"
	if kind == objTree {
		name = "tree"
	}
	h.Write([]byte(name + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	id := h.Sum(nil)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[string(id)] {
		p.seen[string(id)] = true
		p.objs = append(p.objs, packObj{id: id, kind: kind, data: data})
	}
	return id
}

// write writes the pack and then its index into dir (the index makes the
// pack seen, so it comes last) and returns their path less the extension;
// nothing ("") when there are no objects.
func (p *packer) write(dir string) (string, error) {
	if len(p.objs) == 0 {
		return "", nil
	}
	var pack bytes.Buffer
	pack.WriteString("PACK")
	_ = binary.Write(&pack, binary.BigEndian, uint32(2))
	_ = binary.Write(&pack, binary.BigEndian, uint32(len(p.objs)))
	offsets := make([]uint64, len(p.objs))
	crcs := make([]uint32, len(p.objs))
	// Trees (object names, mostly) are stored as they are: compressing
	// them costs more than it saves; a later repack compresses.
	stored, fast := storedPool.Get().(*zlib.Writer), fastPool.Get().(*zlib.Writer)
	defer storedPool.Put(stored)
	defer fastPool.Put(fast)
	for i, o := range p.objs {
		start := pack.Len()
		offsets[i] = uint64(start)
		pack.Write(objHeader(o.kind, len(o.data)))
		zw := fast
		if o.kind == objTree {
			zw = stored
		}
		zw.Reset(&pack)
		if _, err := zw.Write(o.data); err != nil {
			return "", err
		}
		if err := zw.Close(); err != nil {
			return "", err
		}
		crcs[i] = crc32.ChecksumIEEE(pack.Bytes()[start:])
	}
	return p.finish(dir, &pack, offsets, crcs)
}

// finish ends the pack with its sum and writes it and its index.
func (p *packer) finish(dir string, pack *bytes.Buffer, offsets []uint64, crcs []uint32) (string, error) {
	if pack.Len() >= 1<<31 {
		return "", errors.New("a pack too large for a small index")
	}
	h := p.newHash()
	h.Write(pack.Bytes())
	sum := h.Sum(nil)
	pack.Write(sum)
	idx := p.index(offsets, crcs, sum)
	base := filepath.Join(dir, "pack-"+hex.EncodeToString(sum))
	if _, err := os.Stat(base + ".idx"); err == nil {
		return base, nil // the same objects, written before: never written over
	}
	// The pack under its own name (git reads no pack without its index,
	// so a torn one is never read), then the index through a rename.
	if err := writeReadOnly(base+".pack", pack.Bytes()); err != nil {
		return "", err
	}
	return base, writeRenamed(base+".idx", idx)
}

// mergePacks writes the objects of packs this package wrote (bases: their
// paths less the extension) as one pack and removes them. They hold no
// deltas, so each entry is copied as it is; an object in two is kept once.
func mergePacks(dir string, bases []string, raw int) (string, error) {
	p := &packer{raw: raw, seen: map[string]bool{}}
	var pack bytes.Buffer
	pack.WriteString("PACK")
	_ = binary.Write(&pack, binary.BigEndian, uint32(2))
	_ = binary.Write(&pack, binary.BigEndian, uint32(0)) // the count, set below
	var offsets []uint64
	var crcs []uint32
	for _, base := range bases {
		ents, data, err := readOwnPack(base, raw)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			if p.seen[string(e.id)] {
				continue
			}
			p.seen[string(e.id)] = true
			p.objs = append(p.objs, packObj{id: e.id})
			offsets = append(offsets, uint64(pack.Len()))
			crcs = append(crcs, e.crc)
			pack.Write(data[e.start:e.end])
		}
	}
	binary.BigEndian.PutUint32(pack.Bytes()[8:12], uint32(len(p.objs)))
	merged, err := p.finish(dir, &pack, offsets, crcs)
	if err != nil {
		return "", err
	}
	for _, base := range bases {
		if base != merged {
			_ = os.Remove(base + ".idx") // the index first: no index names a pack that is gone
			_ = os.Remove(base + ".pack")
		}
	}
	return merged, nil
}

// packEntry is one object's entry in a pack: its name, CRC-32 and bytes.
type packEntry struct {
	id         []byte
	crc        uint32
	start, end int
}

// readOwnPack reads a pack written by packer and its index (version 2,
// small offsets): each object's entry, in the pack's order.
func readOwnPack(base string, raw int) ([]packEntry, []byte, error) {
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(base + ".pack")
	if err != nil {
		return nil, nil, err
	}
	bad := errors.New(base + ": not a pack this store wrote")
	if len(idx) < 8+256*4 || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) || len(data) < 12+raw {
		return nil, nil, bad
	}
	n := int(binary.BigEndian.Uint32(idx[8+255*4:]))
	names := 8 + 256*4
	crcAt := names + n*raw
	offAt := crcAt + n*4
	if len(idx) < offAt+n*4+2*raw {
		return nil, nil, bad
	}
	ents := make([]packEntry, n)
	for i := range ents {
		off := binary.BigEndian.Uint32(idx[offAt+i*4:])
		if off&0x80000000 != 0 || int(off) < 12 || int(off) >= len(data)-raw {
			return nil, nil, bad
		}
		ents[i] = packEntry{id: idx[names+i*raw : names+(i+1)*raw], crc: binary.BigEndian.Uint32(idx[crcAt+i*4:]), start: int(off)}
	}
	slices.SortFunc(ents, func(a, b packEntry) int { return a.start - b.start })
	for i := range ents {
		ents[i].end = len(data) - raw
		if i+1 < len(ents) {
			ents[i].end = ents[i+1].start
		}
	}
	return ents, data, nil
}

// The compressors packs are written with, kept: each holds tables too
// large to make per checkpoint.
var (
	storedPool = sync.Pool{New: func() any { zw, _ := zlib.NewWriterLevel(nil, zlib.NoCompression); return zw }}
	fastPool   = sync.Pool{New: func() any { zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed); return zw }}
)

// objHeader is an object's type and size as a pack entry begins.
func objHeader(kind byte, size int) []byte {
	b := []byte{kind<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// index is the pack's index: the names in order with a fan-out table by
// first byte, each one's CRC-32 and offset, the pack's sum and its own.
func (p *packer) index(offsets []uint64, crcs []uint32, packSum []byte) []byte {
	order := make([]int, len(p.objs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(p.objs[a].id, p.objs[b].id) })
	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c'})
	_ = binary.Write(&idx, binary.BigEndian, uint32(2))
	var fan [256]uint32
	for _, o := range p.objs {
		fan[o.id[0]]++
	}
	total := uint32(0)
	for i := range fan {
		total += fan[i]
		fan[i] = total
	}
	_ = binary.Write(&idx, binary.BigEndian, fan)
	for _, i := range order {
		idx.Write(p.objs[i].id)
	}
	for _, i := range order {
		_ = binary.Write(&idx, binary.BigEndian, crcs[i])
	}
	for _, i := range order {
		_ = binary.Write(&idx, binary.BigEndian, uint32(offsets[i]))
	}
	idx.Write(packSum)
	h := p.newHash()
	h.Write(idx.Bytes())
	idx.Write(h.Sum(nil))
	return idx.Bytes()
}

// writeRenamed writes data to path through a temporary file and a rename,
// read-only as git keeps its packs.
func writeRenamed(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "tmp_"+filepath.Base(path))
	if err := writeReadOnly(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// writeReadOnly writes a read-only file at path, over one a write killed
// before left, making its directory when it is missing.
func writeReadOnly(path string, data []byte) error {
	err := os.WriteFile(path, data, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		err = os.WriteFile(path, data, 0o444)
	}
	if errors.Is(err, fs.ErrPermission) {
		// A read-only file of the same name: the same objects, or torn.
		_ = os.Remove(path)
		err = os.WriteFile(path, data, 0o444)
	}
	return err
}
