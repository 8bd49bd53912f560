package localstore

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func indexOf(ids []string) []byte {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	var b strings.Builder
	for i, id := range sorted {
		if i%7 == 3 {
			fmt.Fprintf(&b, "%s %d\n", id, gone) // a run that left the packs
		} else {
			fmt.Fprintf(&b, "%s %d\n", id, 100*i)
		}
	}
	return []byte(b.String())
}

// A pack's filter never hides a run the pack holds, and turns most others
// away; find answers as the search of the index does before and after the
// filter is built.
func TestAbsentFilter(t *testing.T) {
	var held []string
	for i := range 20_000 {
		held = append(held, fmt.Sprintf("i%d-10000-r%d", i%3, i))
	}
	p := &pack{index: indexOf(held), entries: len(held)}
	f := newAbsentFilter(p.index, p.entries)
	for _, id := range held {
		if f.surelyAbsent(id) {
			t.Fatalf("%s is in the index but the filter turns it away", id)
		}
	}
	turned := 0
	const others = 20_000
	for i := range others {
		if f.surelyAbsent(fmt.Sprintf("i9-10000-r%d", i)) {
			turned++
		}
	}
	if turned < others*95/100 {
		t.Fatalf("the filter turned away %d of %d ids the pack does not hold", turned, others)
	}

	want := func(id string) (int64, bool) { return p.search(id) }
	for round := 0; round < 2; round++ {
		for i := range 2_000 {
			for _, id := range []string{held[i*7%len(held)], fmt.Sprintf("x%d", i)} {
				wo, wok := want(id)
				if o, ok := p.find(id); o != wo || ok != wok {
					t.Fatalf("find(%s) = %d %v, the index says %d %v (filter built: %v)", id, o, ok, wo, wok, p.absent != nil)
				}
			}
		}
		if p.absent == nil {
			t.Fatalf("no filter after %d searches in vain over %d entries", p.misses, p.entries)
		}
	}
}
