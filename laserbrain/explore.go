package laserbrain

import (
	"strconv"
	"strings"
)

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

// ExploreReading is what one new ground reads as. Novelty, Staying and
// Revisit are reported to 2 places; the readings are decided on the exact
// values.
type ExploreReading struct {
	Reading string `json:"reading"`
	// Advice is the reading in the reference's words, for the agent.
	Advice     string  `json:"advice"`
	Novelty    float64 `json:"novelty"`
	Staying    float64 `json:"staying"`
	Revisit    float64 `json:"revisit"`
	Commitment int     `json:"commitment"`
	// Grounds is how many grounds the search has had, this one included.
	Grounds int `json:"grounds"`
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
	var staying, revisit float64
	n := len(x.grounds)
	r := ExploreReading{}
	if n > 0 {
		prev := x.grounds[n-1]
		// Overlap, not similarity: two empty grounds share nothing (the
		// reference skips the pair).
		staying = Overlap(t, prev.toks)
		r.Commitment = prev.steps
		// Only grounds already left count as revisited: the one being left
		// now is staying, not returning.
		if staying < exploreRevisitMin {
			for _, g := range x.grounds[:n-1] {
				revisit = max(revisit, Overlap(t, g.toks))
			}
		}
	}
	x.grounds = append(x.grounds, exploreGround{toks: t, steps: 1})
	x.novelties = append(x.novelties, novelty)
	r.Novelty, r.Staying, r.Revisit, r.Grounds = round2(novelty), round2(staying), round2(revisit), len(x.grounds)

	w := exploreWindow
	switch {
	case len(x.grounds) == 1:
		r.Reading = ExploreOpened
		r.Advice = "First ground. Everything from here is measured against the path, not against this."
	case revisit >= exploreRevisitMin:
		r.Reading = ExploreRevisiting
		r.Advice = "This ground overlaps one you already left (" + percent(revisit) + "). You have been here. Either finish it or say why it is different."
	case len(x.grounds)-1 >= w && allFewSteps(x.grounds[len(x.grounds)-1-w:len(x.grounds)-1]):
		r.Reading = ExploreThrashing
		r.Advice = itoa(w) + " grounds in a row abandoned after one step. Nothing was worked long enough to learn whether it was wrong."
	case len(x.novelties) >= w && allAtMost(x.novelties[len(x.novelties)-w:], exploreSettledMax):
		r.Reading = ExploreSettled
		r.Advice = "Novelty has gone. The search has become a task — ground it in Harness and let laserbrain hold it."
	case len(x.novelties) >= w && x.novelties[len(x.novelties)-1] < x.novelties[len(x.novelties)-w]:
		r.Reading = ExploreNarrowing
		r.Advice = "Novelty falling (" + f2(x.novelties[len(x.novelties)-w]) + " → " + f2(x.novelties[len(x.novelties)-1]) + "). The search is closing in."
	default:
		r.Reading = ExploreSearching
		r.Advice = "New ground, " + percent(novelty) + " of it unvisited. The path is still opening."
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

// percent is Python's "{x:.0%}".
func percent(x float64) string { return strconv.FormatFloat(x*100, 'f', 0, 64) + "%" }

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
