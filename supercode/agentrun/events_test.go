package agentrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkText writes what fmt writes for "%s Φ=%.2f %s" once trimmed, over
// the reasons and laserscores a check has (empty, spaced, multi-byte) and
// values of Φ at and between every rounding edge, signed zero and the
// infinities included.
func TestCheckTextMatchesFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	phis := []float64{0, math.Copysign(0, -1), 0.005, 0.015, 0.125, 0.375, 1, 1.005, 2.675, -0.38, 1e21, 1e-7, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := 0; i < 5000; i++ {
		phis = append(phis, math.Round(r.Float64()*400)/100, r.NormFloat64()*3)
	}
	texts := []string{"", " ", "advancing", " excursion ", "⟨add|admin|csv|import|panel⟩ advancing d8", "⟨x⟩ stuck d5 ⊂ ⟨y⟩\t"}
	for _, phi := range phis {
		reason, ls := texts[r.IntN(len(texts))], texts[r.IntN(len(texts))]
		if got, want := checkText(reason, phi, ls), strings.TrimSpace(fmt.Sprintf("%s Φ=%.2f %s", reason, phi, ls)); got != want {
			t.Fatalf("checkText(%q, %v, %q) = %q, fmt writes %q", reason, phi, ls, got, want)
		}
	}
}
