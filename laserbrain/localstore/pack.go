package localstore

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Packs. A compaction writes the small runs of the log — a run whose
// steps and state come to less than PackBelow bytes, and that has no files
// of its own — into one new file, runs/packs/<seq>.pack, instead of two
// files per run: creating a file costs far more than appending to one (on
// ext4 the inode allocation alone was most of a 10,000-run stream's time),
// so a small run costs its bytes, as a step does. A run in a pack that
// grows past PackBelow gets its own files at the compaction that finds it
// so, and from then on its files are what it is.
//
//	{"pack":"laserbrain runs","seq":N}                     first line
//	<records>                                              one per run, as in the log,
//	                                                       its whole history (base 0)
//	<id> <offset>                                          the index: one line per run,
//	…                                                      sorted by id, offset of its header
//	{"index":I,"len":L,"crc":C}                            trailer, padded to 64 bytes
//
// A pack is written whole under a temporary name, made durable, then
// renamed into place, and never changed after: a pack in place is complete
// (one that is not is damage, and an error naming it). A run reads from the
// newest pack that holds it — unless it has its own files, which always
// win — with the chain of its saves in the log on top; a pack's index also
// says of a run that left the packs for files of its own that it did. So
// that packs stay few, a compaction folds the newest packs into the one it
// writes when they make foldTiers of one size tier (toFold): O(log) packs,
// a run's bytes rewritten once per tier, each run's newest record copied
// over and the folded packs removed only once the new one is durable in
// place.

// PackBelow is the size (steps and state, in bytes) under which a
// compaction keeps a run in a pack rather than in files of its own; 0 puts
// every run in files of its own.
var PackBelow int64 = 64 << 10

// packMergeMax is the size past which a pack is no longer folded into a
// newer one: a compaction rewrites at most about this much of older packs.
const packMergeMax = 64 << 20

const (
	packHeaderPrefix = `{"pack":"laserbrain runs","seq":`
	packTrailerSize  = 64
)

// pack is one pack file, open for reading, its index in memory (the bytes
// of its sorted index lines).
type pack struct {
	seq   int
	path  string
	f     *os.File
	size  int64
	index []byte
	// absent answers most lookups of a run the pack does not hold without
	// a search of its index; built once the pack has been searched in vain
	// often enough to pay for it (see find).
	absent  *absentFilter
	entries int
	misses  int
	ino     uint64 // the file opened, to know it again at the next load
	mtime   int64
}

// same reports whether fi (a stat of p's path) is the file p has open.
func (p *pack) same(fi fs.FileInfo) bool {
	return inode(fi) == p.ino && fi.Size() == p.size && fi.ModTime().UnixNano() == p.mtime
}

// packRun is a run's place in a pack, and the state its record holds.
type packRun struct {
	p     *pack
	sp    span
	state []byte
}

// openPack opens the pack at path and reads its index.
func openPack(path string, seq int) (*pack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := readPack(f, path, seq)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("pack %s is damaged: %w", path, err)
	}
	return p, nil
}

func readPack(f *os.File, path string, seq int) (*pack, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < packTrailerSize {
		return nil, fmt.Errorf("%d bytes, shorter than its trailer", size)
	}
	var tr [packTrailerSize]byte
	if _, err := f.ReadAt(tr[:], size-packTrailerSize); err != nil {
		return nil, err
	}
	var t struct {
		Index int64  `json:"index"`
		Len   int64  `json:"len"`
		CRC   uint32 `json:"crc"`
	}
	if tr[packTrailerSize-1] != '\n' || json.Unmarshal(bytes.TrimSpace(tr[:]), &t) != nil {
		return nil, errors.New("no trailer: it ends without its index")
	}
	if t.Index <= 0 || t.Len < 0 || t.Index+t.Len+packTrailerSize != size {
		return nil, fmt.Errorf("its trailer places the index at %d+%d in %d bytes", t.Index, t.Len, size)
	}
	index := make([]byte, t.Len)
	if _, err := f.ReadAt(index, t.Index); err != nil {
		return nil, err
	}
	if crc32.Checksum(index, castagnoli()) != t.CRC {
		return nil, errors.New("its index does not match its checksum")
	}
	return &pack{seq: seq, path: path, f: f, size: size, index: index, entries: bytes.Count(index, []byte("\n")),
		ino: inode(fi), mtime: fi.ModTime().UnixNano()}, nil
}

// find returns the offset of run id's record, by binary search over the
// index lines. A pack searched in vain about once for every 32 of its runs
// gets an absentFilter, which then turns most misses away at the cost of
// one word read: a stream starting many runs looks each up in every pack,
// and each search of a large index is a string of cache misses.
func (p *pack) find(id string) (int64, bool) {
	if p.absent != nil && p.absent.surelyAbsent(id) {
		return 0, false
	}
	off, ok := p.search(id)
	if !ok && p.absent == nil {
		if p.misses++; p.misses > 16+p.entries/32 {
			p.absent = newAbsentFilter(p.index, p.entries)
		}
	}
	return off, ok
}

func (p *pack) search(id string) (int64, bool) {
	key := []byte(id)
	idx := p.index
	lo, hi := 0, len(idx)
	for lo < hi {
		mid := lo + (hi-lo)/2
		s := lo + bytes.LastIndexByte(idx[lo:mid], '\n') + 1
		e := s + bytes.IndexByte(idx[s:], '\n')
		if e < s {
			return 0, false // an index line without its line feed: not written by us
		}
		name, off, _ := bytes.Cut(idx[s:e], []byte(" "))
		switch c := bytes.Compare(name, key); {
		case c == 0:
			n, err := strconv.ParseInt(string(off), 10, 64)
			return n, err == nil
		case c < 0:
			lo = e + 1
		default:
			hi = s
		}
	}
	return 0, false
}

// eachEntry calls fn with every index entry of the pack, in id order: the
// offset of the run's record, or gone for a run that left the packs.
func (p *pack) eachEntry(fn func(id string, off int64)) {
	for rest := p.index; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		name, off, _ := bytes.Cut(line, []byte(" "))
		n, err := strconv.ParseInt(string(off), 10, 64)
		if err != nil {
			n = gone
		}
		fn(string(name), n)
		rest = after
	}
}

// gone is the offset an index gives a run that left the packs for files
// of its own: its records in older packs are no longer it.
const gone = -1

// maxHeader is more than any record header's length (an id is at most 64
// bytes).
const maxHeader = 512

// record reads and checks the record of run id at off, through buf (which
// it returns, grown): one read when the record is under recordRead bytes,
// as a small run's is, else a second for the rest of its body.
func (p *pack) record(id string, off int64, buf []byte) (span, []byte, error) {
	end := p.size - packTrailerSize
	if off < 0 || off >= end {
		return span{}, buf, p.damaged(id, off, "is past its records")
	}
	buf = slices.Grow(buf[:0], recordRead)[:min(recordRead, end-off)]
	if _, err := p.f.ReadAt(buf, off); err != nil {
		return span{}, buf, err
	}
	head, _, ok := bytes.Cut(buf[:min(len(buf), maxHeader)], []byte("\n"))
	body := off + int64(len(head)) + 1
	h, err := p.header(id, off, head, ok, body)
	if err != nil {
		return span{}, buf, err
	}
	n, from := h.Steps+h.State, int64(len(head))+1
	if from+n <= int64(len(buf)) {
		copy(buf, buf[from:from+n])
		buf = buf[:n]
	} else {
		have := copy(buf, buf[from:])
		buf = slices.Grow(buf[:have], int(n)-have)[:n]
		if _, err := p.f.ReadAt(buf[have:], body+int64(have)); err != nil {
			return span{}, buf, err
		}
	}
	if crc32.Checksum(buf, castagnoli()) != h.CRC {
		return span{}, buf, p.damaged(id, off, "does not match its checksum")
	}
	return span{body: body, n: h.N, steps: h.Steps, state: h.State}, buf, nil
}

// header checks head, the first line (found whole: ok) of run id's record
// at off, whose body starts at body: it must be that run's whole-history
// header, its body within the pack's records.
func (p *pack) header(id string, off int64, head []byte, ok bool, body int64) (recordHeader, error) {
	var h recordHeader
	if !ok || !bytes.HasPrefix(head, headerPrefix) || !decodeHeader(head, &h) || h.Run != id || h.Base != 0 {
		return h, p.damaged(id, off, "is not there")
	}
	if h.Steps < 0 || h.State <= 0 || body+h.Steps+h.State > p.size-packTrailerSize {
		return h, p.damaged(id, off, "runs past the records")
	}
	return h, nil
}

// damaged is the error for run id's record at off, which is not as the
// pack's index says.
func (p *pack) damaged(id string, off int64, what string) error {
	return fmt.Errorf("pack %s is damaged: run %s's record at byte %d %s", p.path, id, off, what)
}

// recordRead is how much of a pack a record's first read takes.
const recordRead = 4 << 10

// appendSteps appends the record's step lines to buf.
func (pr *packRun) appendSteps(buf []byte) ([]byte, error) {
	n := len(buf)
	buf = append(buf, make([]byte, pr.sp.steps)...)
	_, err := pr.p.f.ReadAt(buf[n:], pr.sp.body)
	return buf, err
}

// packSet is the packs of one runs directory as this process last read
// them; the caller holds the log's lock. It is read again when the log is
// another generation — every compaction that finishes ends by replacing
// the log — and always at the start of a compaction, which holds it as it
// read it to its end. A view older than a compaction cut short is still
// whole: its packs stay readable through the descriptors it holds even if
// they were removed, and whatever a pack it does not know holds is still in
// the log, which the compaction had not dropped.
type packSet struct {
	dir    string // runs/packs
	loaded bool
	gen    int  // the log generation it was read at
	pinned bool // a compaction holds the set as it read it
	packs  []*pack
	buf    []byte
}

// current brings the set up to date with the log's generation gen.
func (ps *packSet) current(gen int) error {
	if ps.pinned || ps.loaded && gen == ps.gen {
		return nil
	}
	return ps.load(gen)
}

// load reads the packs in place now. A pack this process has open already
// is kept as it is, index and filter too, when the file at its path is
// still the one it opened: a pack is never changed once in place, so only
// the packs new since the last load are read.
func (ps *packSet) load(gen int) error {
	old := map[string]*pack{}
	for _, p := range ps.packs {
		old[p.path] = p
	}
	ps.packs, ps.loaded = nil, false
	closeAll := func() {
		for _, p := range old {
			p.f.Close()
		}
	}
	ents, err := os.ReadDir(ps.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		closeAll()
		return err
	}
	for _, e := range ents {
		name := e.Name()
		seq, err := strconv.Atoi(strings.TrimSuffix(name, ".pack"))
		if !strings.HasSuffix(name, ".pack") || err != nil || seq < 0 {
			continue // a pack being written, or not ours
		}
		path := filepath.Join(ps.dir, name)
		if p := old[path]; p != nil {
			if fi, err := os.Stat(path); err == nil && p.same(fi) {
				delete(old, path)
				ps.packs = append(ps.packs, p)
				continue
			}
		}
		p, err := openPack(path, seq)
		if err != nil {
			closeAll()
			ps.close()
			return err
		}
		ps.packs = append(ps.packs, p)
	}
	closeAll()
	sort.Slice(ps.packs, func(i, j int) bool { return ps.packs[i].seq < ps.packs[j].seq })
	ps.loaded, ps.gen = true, gen
	return nil
}

// find returns where run id stands in the newest pack that holds it; nil
// when none does.
func (ps *packSet) find(id string) (*packRun, error) {
	for i := len(ps.packs) - 1; i >= 0; i-- {
		p := ps.packs[i]
		off, ok := p.find(id)
		if !ok {
			continue
		}
		if off == gone {
			return nil, nil
		}
		sp, buf, err := p.record(id, off, ps.buf)
		ps.buf = buf
		if err != nil {
			return nil, err
		}
		state := bytes.TrimSuffix(buf[sp.steps:], []byte("\n"))
		return &packRun{p: p, sp: sp, state: bytes.Clone(state)}, nil
	}
	return nil, nil
}

// eachID calls fn with every run id the packs hold, once, from the newest
// pack holding it.
func (ps *packSet) eachID(fn func(id string, p *pack)) {
	seen := map[string]bool{}
	for i := len(ps.packs) - 1; i >= 0; i-- {
		p := ps.packs[i]
		p.eachEntry(func(id string, off int64) {
			if !seen[id] {
				seen[id] = true
				if off != gone {
					fn(id, p)
				}
			}
		})
	}
}

// foldTiers is how many packs of one size tier make a compaction fold them
// (with its own) into one pack of the next: eight rather than four
// rewrites a run's bytes fewer times for a few more packs to search.
const foldTiers = 8

// tier is a pack size's tier: 0 below 4× CompactAt, then one more for
// every factor of 4.
func tier(size int64) int {
	t := 0
	for base := max(CompactAt, 1) * foldTiers; size >= base && t < 40; base *= foldTiers {
		t++
	}
	return t
}

// toFold picks the newest packs a compaction that writes about fresh
// bytes folds into its pack, as a counter in base foldTiers carries: when
// the newest packs and the new one are foldTiers of one tier, they become
// one of the next, which may carry on. Packs stay O(log) in number, and a
// run's bytes are rewritten once per tier. A pack past packMergeMax is left
// as it is.
func (ps *packSet) toFold(fresh int64) []*pack {
	acc, i := fresh, len(ps.packs)
	for {
		t, j := tier(acc), i
		for j > 0 && tier(ps.packs[j-1].size) <= t && ps.packs[j-1].size <= packMergeMax {
			j--
		}
		if i-j+1 < foldTiers {
			break
		}
		for _, p := range ps.packs[j:i] {
			acc += p.size
		}
		i = j
	}
	return ps.packs[i:]
}

func (ps *packSet) nextSeq() int {
	if len(ps.packs) == 0 {
		return 1
	}
	return ps.packs[len(ps.packs)-1].seq + 1
}

func (ps *packSet) close() {
	for _, p := range ps.packs {
		p.f.Close()
	}
	ps.packs, ps.loaded = nil, false
}

// packWriter writes a new pack under a temporary name.
type packWriter struct {
	dir, tmp, path string
	f              *os.File
	w              *bufio.Writer
	off            int64
	index          []packEntry
	buf            []byte
	foldBuf        []byte // the window folds read through
}

type packEntry struct {
	id  string
	off int64
}

func newPackWriter(dir string, seq int) (*packWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%010d.pack", seq))
	pw := &packWriter{dir: dir, tmp: path + ".tmp", path: path}
	f, err := os.OpenFile(pw.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	pw.f, pw.w = f, bufio.NewWriterSize(f, cursorWindow)
	head := packHeaderPrefix + strconv.Itoa(seq) + "}\n"
	_, err = pw.w.WriteString(head)
	pw.off = int64(len(head))
	if err != nil {
		pw.abort()
		return nil, err
	}
	return pw, nil
}

// add writes run id's whole history (n steps) and its state.
func (pw *packWriter) add(id string, n int, steps, state []byte) error {
	pw.buf = encodeRecord(pw.buf[:0], id, 0, n, steps, state)
	pw.index = append(pw.index, packEntry{id: id, off: pw.off + 1}) // the header, after the fence
	_, err := pw.w.Write(pw.buf)
	pw.off += int64(len(pw.buf))
	return err
}

// fold copies into pw every record of p whose run moved does not name yet,
// and marks it; a run that left the packs is noted as such when keepGone.
// The records are read in the pack's file order, through one window, so a
// fold reads each pack once from start to end.
func (p *pack) fold(pw *packWriter, moved map[string]bool, keepGone bool) error {
	type at struct {
		id  string
		off int64
	}
	var recs []at
	p.eachEntry(func(id string, off int64) {
		if moved[id] {
			return
		}
		moved[id] = true
		if off == gone {
			if keepGone {
				pw.leave(id)
			}
			return
		}
		recs = append(recs, at{id, off})
	})
	slices.SortFunc(recs, func(a, b at) int { return cmp.Compare(a.off, b.off) })
	c := &cursor{f: p.f, end: p.size - packTrailerSize, buf: pw.foldBuf[:0]}
	defer func() { pw.foldBuf = c.buf }()
	for _, r := range recs {
		if err := p.copyRecord(pw, c, r.id, r.off); err != nil {
			return fmt.Errorf("compact run %s: %w", r.id, err)
		}
	}
	return nil
}

// copyRecord copies run id's record at off into pw through c (a cursor
// over p's records), checking its CRC as it goes: a mismatch ends the
// compaction, whose pack is then never put in place.
func (p *pack) copyRecord(pw *packWriter, c *cursor, id string, off int64) error {
	if off < 0 || off >= c.end {
		return p.damaged(id, off, "is past its records")
	}
	head, body, ok, err := c.line(off)
	if err != nil {
		return err
	}
	h, err := p.header(id, off, head, ok, body)
	if err != nil {
		return err
	}
	if err := pw.header(id, span{n: h.N, steps: h.Steps, state: h.State}, h.CRC); err != nil {
		return err
	}
	var sum uint32
	for at, stop := body, body+h.Steps+h.State; at < stop; {
		w, err := c.window(at)
		if err != nil {
			return err
		}
		if len(w) == 0 {
			return p.damaged(id, off, "runs past the records")
		}
		w = w[:min(int64(len(w)), stop-at)]
		sum = crc32.Update(sum, castagnoli(), w)
		if _, err := pw.w.Write(w); err != nil {
			return err
		}
		pw.off += int64(len(w))
		at += int64(len(w))
	}
	if sum != h.CRC {
		return p.damaged(id, off, "does not match its checksum")
	}
	return nil
}

// header writes the header line of a record copied from another pack, at
// the offset the index will give it; its body follows.
func (pw *packWriter) header(id string, sp span, crc uint32) error {
	pw.buf = append(pw.buf[:0], "\n{\"run\":\""...)
	pw.buf = append(pw.buf, id...)
	pw.buf = append(pw.buf, "\",\"base\":0,\"n\":"...)
	pw.buf = strconv.AppendInt(pw.buf, int64(sp.n), 10)
	pw.buf = append(pw.buf, ",\"steps\":"...)
	pw.buf = strconv.AppendInt(pw.buf, sp.steps, 10)
	pw.buf = append(pw.buf, ",\"state\":"...)
	pw.buf = strconv.AppendInt(pw.buf, sp.state, 10)
	pw.buf = append(pw.buf, ",\"crc\":"...)
	pw.buf = strconv.AppendUint(pw.buf, uint64(crc), 10)
	pw.buf = append(pw.buf, "}\n"...)
	pw.index = append(pw.index, packEntry{id: id, off: pw.off + 1})
	_, err := pw.w.Write(pw.buf)
	pw.off += int64(len(pw.buf))
	return err
}

// leave notes that run id left the packs.
func (pw *packWriter) leave(id string) {
	pw.index = append(pw.index, packEntry{id: id, off: gone})
}

// finish writes the index and the trailer and closes the file, made
// durable through sy; the caller renames pw.tmp to pw.path once sy is done.
func (pw *packWriter) finish(sy *syncer) error {
	sort.Slice(pw.index, func(i, j int) bool { return pw.index[i].id < pw.index[j].id })
	var idx []byte
	for _, e := range pw.index {
		idx = append(idx, e.id...)
		idx = append(idx, ' ')
		idx = strconv.AppendInt(idx, e.off, 10)
		idx = append(idx, '\n')
	}
	if _, err := pw.w.Write(idx); err != nil {
		return err
	}
	tr := fmt.Sprintf(`{"index":%d,"len":%d,"crc":%d}`, pw.off, len(idx), crc32.Checksum(idx, castagnoli()))
	tr += strings.Repeat(" ", packTrailerSize-1-len(tr)) + "\n"
	if _, err := io.WriteString(pw.w, tr); err != nil {
		return err
	}
	if err := pw.w.Flush(); err != nil {
		return err
	}
	if err := sy.add(pw.f); err != nil {
		return err
	}
	err := pw.f.Close()
	pw.f = nil
	return err
}

// abort closes and removes a pack not finished.
func (pw *packWriter) abort() {
	if pw.f != nil {
		pw.f.Close()
		pw.f = nil
	}
	os.Remove(pw.tmp)
}

// removeUnfinished removes packs a compaction cut short left under their
// temporary names.
func removeUnfinished(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.pack.tmp"))
	for _, n := range names {
		os.Remove(n)
	}
}
