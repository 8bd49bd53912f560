package laserbrain

import "strings"

// Explorer is the search instrument: for work whose goal is supposed to
// move, it reads whether the moving ground is going anywhere. Each Ground
// call names a new ground; Step counts a step of work on the current one.
type Explorer struct {
	grounds   []exploreGround
	novelties []float64
	seen      map[string]bool
}

type exploreGround struct {
	toks  []string
	steps int
}

// The explore readings.
const (
	ExploreOpened     = "opened"
	ExploreRevisiting = "revisiting"
	ExploreThrashing  = "thrashing"
	ExploreSettled    = "settled"
	ExploreNarrowing  = "narrowing"
	ExploreSearching  = "searching"
)

// ExploreReading is what one new ground reads as.
type ExploreReading struct {
	Reading    string  `json:"reading"`
	Novelty    float64 `json:"novelty"`
	Staying    float64 `json:"staying"`
	Revisit    float64 `json:"revisit"`
	Commitment int     `json:"commitment"`
	// Temperature is the mean novelty of the last window grounds, nil until
	// there have been that many.
	Temperature *float64 `json:"temperature"`
	Trailscore  string   `json:"trailscore"`
}

// Step counts one step of work on the current ground.
func (x *Explorer) Step() {
	if n := len(x.grounds); n > 0 {
		x.grounds[n-1].steps++
	}
}

// Ground moves to a new ground and reads the search so far. Readings, first
// match: the first ground opened; back on an earlier ground (overlap at
// least revisit_min) revisiting; the previous window grounds each worked
// fewer than min_commitment steps thrashing; the last window novelties all
// at most settled_max settled; novelty falling across the window narrowing;
// else searching.
func (x *Explorer) Ground(goal string) ExploreReading {
	if x.seen == nil {
		x.seen = map[string]bool{}
	}
	t := Norm(goal)
	fresh := 0
	for _, tok := range t {
		if !x.seen[tok] {
			fresh++
		}
	}
	novelty := 0.0
	if len(t) > 0 {
		novelty = float64(fresh) / float64(len(t))
	}
	for _, tok := range t {
		x.seen[tok] = true
	}
	r := ExploreReading{Novelty: round2(novelty)}
	n := len(x.grounds)
	if n > 0 {
		prev := x.grounds[n-1]
		r.Staying = round2(similarity(t, prev.toks))
		r.Commitment = prev.steps
		if r.Staying < exploreRevisitMin {
			for _, g := range x.grounds[:n-1] {
				r.Revisit = max(r.Revisit, similarity(t, g.toks))
			}
			r.Revisit = round2(r.Revisit)
		}
	}
	x.grounds = append(x.grounds, exploreGround{toks: t, steps: 1})
	x.novelties = append(x.novelties, novelty)

	w := exploreWindow
	switch {
	case len(x.grounds) == 1:
		r.Reading = ExploreOpened
	case r.Revisit >= exploreRevisitMin:
		r.Reading = ExploreRevisiting
	case len(x.grounds)-1 >= w && allFewSteps(x.grounds[len(x.grounds)-1-w:len(x.grounds)-1]):
		r.Reading = ExploreThrashing
	case len(x.novelties) >= w && allAtMost(x.novelties[len(x.novelties)-w:], exploreSettledMax):
		r.Reading = ExploreSettled
	case len(x.novelties) >= w && x.novelties[len(x.novelties)-1] < x.novelties[len(x.novelties)-w]:
		r.Reading = ExploreNarrowing
	default:
		r.Reading = ExploreSearching
	}
	if len(x.novelties) >= w {
		sum := 0.0
		for _, v := range x.novelties[len(x.novelties)-w:] {
			sum += v
		}
		temp := round2(sum / float64(w))
		r.Temperature = &temp
	}
	union := make([]string, 0, len(x.seen))
	for tok := range x.seen {
		union = append(union, tok)
	}
	sortStrings(union)
	r.Trailscore = "⟨" + strings.Join(union, "|") + "⟩ ×" + itoa(len(x.grounds))
	return r
}

// similarity is 1 − Jaccard distance: two empty grounds are the same place.
func similarity(a, b []string) float64 { return 1 - jaccardDistance(a, b) }

func allFewSteps(gs []exploreGround) bool {
	for _, g := range gs {
		if g.steps >= exploreMinCommitment {
			return false
		}
	}
	return true
}

func allAtMost(xs []float64, limit float64) bool {
	for _, x := range xs {
		if x > limit {
			return false
		}
	}
	return true
}
