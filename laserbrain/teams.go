package laserbrain

import "slices"

// TeamRole is one role of a recursion-team preset, as data.
type TeamRole struct {
	Role    string   `json:"role"`
	Recurse string   `json:"recurse"`
	Modes   []string `json:"modes,omitempty"`
	Return  string   `json:"return,omitempty"`
}

// TeamPreset is a recursion-team preset as data (the grammar's
// modulation.presets): what it is for and its roles. Nothing in it runs.
type TeamPreset struct {
	Name  string     `json:"name"`
	Task  string     `json:"task"`
	Roles []TeamRole `json:"roles"`
}

// TeamPresets returns copies of the grammar's presets, in grammar order.
func TeamPresets() []TeamPreset {
	out := make([]TeamPreset, len(modulationPresets))
	for i, p := range modulationPresets {
		out[i] = TeamPreset{Name: p.Name, Task: p.Task}
		for _, r := range p.Roles {
			out[i].Roles = append(out[i].Roles, TeamRole{Role: r.Role, Recurse: r.Recurse, Modes: slices.Clone(r.Modes), Return: r.Return})
		}
	}
	return out
}
