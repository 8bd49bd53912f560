package localstore

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// absentFilter is a Bloom filter over the run ids of one pack's index, two
// bits of one 64-bit word per id (a register-blocked filter: one memory
// read per query) and about 16 bits per id, which turns away all but about
// 1–2% of the ids the pack does not hold. It lives in memory only, so its
// seed is this process's.
type absentFilter struct {
	seed  maphash.Seed
	words []uint64
	mask  uint64
}

func newAbsentFilter(index []byte, entries int) *absentFilter {
	n := 1 << bits.Len(uint(max(entries, 4)/4)) // ≥ 16 bits per entry, a power of two
	f := &absentFilter{seed: maphash.MakeSeed(), words: make([]uint64, n), mask: uint64(n - 1)}
	for rest := index; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		name, _, _ := bytes.Cut(line, []byte(" "))
		w, b := f.place(maphash.Bytes(f.seed, name))
		f.words[w] |= b
		rest = after
	}
	return f
}

func (f *absentFilter) place(h uint64) (word, bit uint64) {
	return h & f.mask, 1<<(h>>52&63) | 1<<(h>>58)
}

// surelyAbsent reports that id is not in the index; false says nothing.
func (f *absentFilter) surelyAbsent(id string) bool {
	w, b := f.place(maphash.String(f.seed, id))
	return f.words[w]&b != b
}
