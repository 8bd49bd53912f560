package firstuse

import (
	"sync"
	"testing"
)

func TestValueBuildsOnce(t *testing.T) {
	builds := 0
	v := Value[[]int]{New: func() []int { builds++; return []int{builds} }}
	if builds != 0 {
		t.Fatalf("built %d times before Get", builds)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := v.Get(); len(got) != 1 || got[0] != 1 {
				t.Errorf("Get = %v, want [1]", got)
			}
		})
	}
	wg.Wait()
	if builds != 1 {
		t.Fatalf("built %d times, want once", builds)
	}
}

// pkgLevel is declared as the packages using Value declare theirs; the
// gate's init budget test (cmd/laserbrain-gate) is what holds them to
// costing nothing at init.
var pkgLevel = Value[map[string]bool]{New: func() map[string]bool { return map[string]bool{"x": true} }}

func TestPackageLevelValue(t *testing.T) {
	if !pkgLevel.Get()["x"] {
		t.Fatal("package-level Value not built on Get")
	}
}
