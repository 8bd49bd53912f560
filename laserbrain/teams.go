package laserbrain

import (
	"fmt"
	"slices"
	"sort"
)

// TeamRole is one role of a recursion-team preset, as data.
type TeamRole struct {
	Role    string   `json:"role"`
	Recurse string   `json:"recurse"`
	Modes   []string `json:"modes,omitempty"`
	Return  string   `json:"return,omitempty"`
}

// TeamPreset is a recursion-team preset as data: what it is for (the
// grammar's task line) and its roles. Nothing in it runs.
type TeamPreset struct {
	Name  string     `json:"name"`
	Task  string     `json:"task"`
	Roles []TeamRole `json:"roles"`
}

// liveReturns are the return texts the reference acts on where they differ
// from its grammar's copy of the presets. The reference keeps the presets
// in its package and syncs them into the grammar one way, and the two copies
// have come apart in one line: the deep-search checker's text lacks the
// grammar's opening sentence. modulate and store_vend answer with the
// package's, so ours do too; the grammar stays as it is published.
// An array, not a map: a map literal is built at init in every process.
var liveReturns = [...]struct{ preset, role, ret string }{
	{"deep-search", "checker", "Restate the goal and verify the last step against it."},
}

// liveReturn returns the reference's live return text for a preset's role.
func liveReturn(preset, role string) (string, bool) {
	for _, l := range liveReturns {
		if l.preset == preset && l.role == role {
			return l.ret, true
		}
	}
	return "", false
}

// TeamPresets returns copies of the presets, in grammar order, with the
// roles the instrument acts on.
func TeamPresets() []TeamPreset {
	out := make([]TeamPreset, len(modulationPresets))
	for i, p := range modulationPresets {
		out[i] = TeamPreset{Name: p.Name, Task: p.Task}
		for _, r := range p.Roles {
			ret := r.Return
			if live, ok := liveReturn(p.Name, r.Role); ok {
				ret = live
			}
			out[i].Roles = append(out[i].Roles, TeamRole{Role: r.Role, Recurse: r.Recurse, Modes: slices.Clone(r.Modes), Return: ret})
		}
	}
	return out
}

// teamPreset returns the preset called name.
func teamPreset(name string) (TeamPreset, bool) {
	for _, p := range TeamPresets() {
		if p.Name == name {
			return p, true
		}
	}
	return TeamPreset{}, false
}

// VendTeam returns the preset called name, or an error naming the ones
// there are (as the reference's KeyError reads: no team preset 'x' — have
// ['a', 'b']).
func VendTeam(name string) (TeamPreset, error) {
	if p, ok := teamPreset(name); ok {
		return p, nil
	}
	names := Presets()
	sort.Strings(names)
	have := make([]any, len(names))
	for i, n := range names {
		have[i] = n
	}
	return TeamPreset{}, fmt.Errorf("no team preset %s — have %s", PyRepr(name), PyRepr(have))
}

// TeamMatch is one preset found for a task.
type TeamMatch struct {
	Name  string   `json:"name"`
	Score float64  `json:"score"`
	Task  string   `json:"task"`
	Roles []string `json:"roles"`
}

// FindTeams ranks the presets for a task in words: 0.7 × the overlap of its
// tokens with a preset's task + 0.3 × with its role names, rounded to 3
// places; zero scores are left out; best first, ties in name order. An
// empty result for a task of stopwords alone, as for one that matches
// nothing.
func FindTeams(task string) []TeamMatch {
	want := Norm(task)
	out := []TeamMatch{}
	if len(want) == 0 {
		return out
	}
	presets := TeamPresets()
	sort.Slice(presets, func(i, j int) bool { return presets[i].Name < presets[j].Name })
	for _, p := range presets {
		var roles []string
		var roleWords []string
		for _, r := range p.Roles {
			roles = append(roles, r.Role)
			roleWords = append(roleWords, Norm(r.Role)...)
		}
		score := 0.7*Overlap(want, Norm(p.Task)) + 0.3*Overlap(want, SortedSet(roleWords))
		if score > 0 {
			out = append(out, TeamMatch{Name: p.Name, Score: round3(score), Task: p.Task, Roles: roles})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// SortedSet returns the distinct tokens of toks, sorted: the form Overlap
// reads.
func SortedSet(toks []string) []string {
	out := slices.Clone(toks)
	slices.Sort(out)
	return slices.Compact(out)
}
