package laserbrain

import (
	"slices"
	"strconv"
	"strings"
)

// intersect counts the tokens two sorted, duplicate-free sets share.
func intersect(a, b []string) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			n++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return n
}

// Overlap is the Jaccard similarity |a∩b|/|a∪b| of two normalised token
// sets, and 0 when both are empty (the reference's anchor: an empty goal
// anchors to nothing, not to everything).
func Overlap(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	n := intersect(a, b)
	return float64(n) / float64(len(a)+len(b)-n)
}

// jaccardDistance is 1 − |a∩b|/|a∪b|, and 0 when both sets are empty.
func jaccardDistance(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	n := intersect(a, b)
	return 1 - float64(n)/float64(len(a)+len(b)-n)
}

// isProgress reports whether p is one of the grammar's progress values
// (exact and case-sensitive).
func isProgress(p string) bool {
	for _, v := range progressEnum {
		if p == v {
			return true
		}
	}
	return false
}

// phi is the drift score of a state against a ground, evaluated as the
// reference evaluates it: w_distance·(|Δ|/10), summed left to right (goal,
// distance, progress). The explicit float64 conversions force a rounding
// after every operation, so the compiler may not fuse a multiply and an add.
// An unknown distance on either side makes the distance term 0.
func phi(goalToks, groundToks []string, progress string, d Distance, g *Ground) float64 {
	goalTerm := float64(weightGoal * jaccardDistance(goalToks, groundToks))
	distTerm := 0.0
	if d.Known && g.Dist.Known {
		delta := d.Value - g.Dist.Value
		if delta < 0 {
			delta = -delta
		}
		distTerm = float64(float64(delta) / 10)
	}
	progTerm := 0.0
	if progress != g.Progress {
		progTerm = 1
	}
	sum := float64(goalTerm + float64(weightDistance*distTerm))
	return float64(sum + float64(weightProgress*progTerm))
}

// Phi is the drift score Φ of (goal, progress, distance) against a ground
// state, unrounded: thresholds are applied to this value, and only the
// reported phi is rounded (see Round2).
func Phi(goal, progress string, d Distance, ground Ground) float64 {
	return phi(Norm(goal), Norm(ground.Goal), progress, d, &ground)
}

// Round2 is the reported precision: Python's round(x, 2), ties to even on
// the exact binary value (0.125 → 0.12, 0.375 → 0.38).
func Round2(x float64) float64 { return round2(x) }

// GroundScore turns a (reported) Φ into a bounded "how grounded" reading,
// round(1/(1 + 4·max(0, Φ)), 3).
func GroundScore(phi float64) float64 {
	return round3(1 / (1 + 4*max(0, phi)))
}

// Spelling is the canonical spelling of a token set: sorted tokens joined
// by "|". Norm already returns them sorted.
func Spelling(toks []string) string { return strings.Join(toks, "|") }

// Laserscore writes one well-formed state in the grammar's notation,
// "⟨tokens⟩ progress dN", with " ⊂ ⟨parent tokens⟩" when a parent goal is
// named. ok is false (no laserscore) unless the trimmed goal is non-empty
// and progress is one of the grammar's values. An unknown distance is
// written "d?".
func Laserscore(goal, progress string, d Distance, parentGoal string) (string, bool) {
	goal = pyStrip(goal)
	if goal == "" || !isProgress(progress) {
		return "", false
	}
	var parent []string
	hasParent := pyStrip(parentGoal) != ""
	if hasParent {
		parent = Norm(parentGoal)
	}
	return laserscore(Norm(goal), progress, d, hasParent, parent), true
}

func laserscore(toks []string, progress string, d Distance, hasParent bool, parent []string) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString("⟨")
	writeJoined(&b, toks)
	b.WriteString("⟩ ")
	b.WriteString(progress)
	b.WriteString(" d")
	if d.Known {
		b.WriteString(strconv.Itoa(d.Value))
	} else {
		b.WriteByte('?')
	}
	if hasParent {
		b.WriteString(" ⊂ ⟨")
		writeJoined(&b, parent)
		b.WriteString("⟩")
	}
	return b.String()
}

func writeJoined(b *strings.Builder, toks []string) {
	for i, t := range toks {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(t)
	}
}

// ContextID names the task a goal describes, independent of its wording:
// "ctx_" + base36 of the 32-bit FNV-1a hash of the goal's spelling. ok is
// false when the goal has no tokens.
func ContextID(goal string) (string, bool) {
	return contextID(Norm(goal))
}

const (
	fnvOffset32 = 0x811c9dc5
	fnvPrime32  = 0x01000193
)

func contextID(toks []string) (string, bool) {
	if len(toks) == 0 {
		return "", false
	}
	h := uint32(fnvOffset32)
	for i, t := range toks {
		if i > 0 {
			h ^= '|'
			h *= fnvPrime32
		}
		// Tokens are ASCII, so a byte is a character code.
		for j := 0; j < len(t); j++ {
			h ^= uint32(t[j])
			h *= fnvPrime32
		}
	}
	var buf [16]byte
	return string(strconv.AppendUint(append(buf[:0], "ctx_"...), uint64(h), 36)), true
}

func sortStrings(s []string) { slices.Sort(s) }

func itoa(n int) string { return strconv.Itoa(n) }
