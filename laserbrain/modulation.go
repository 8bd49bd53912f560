package laserbrain

import (
	"fmt"
	"slices"
	"strings"
)

// Modulation is the policy layer's answer: given a verdict and a role in a
// team, should the agent be returned to ground or left to recurse?
type Modulation struct {
	Return bool   `json:"return"`
	Basis  string `json:"basis"`
	Advice string `json:"advice,omitempty"`
	Team   string `json:"team,omitempty"`
	Role   string `json:"role,omitempty"`
}

// Depths lists the grammar's modulation depths and the modes each acts on.
func Depths() map[string][]string {
	out := make(map[string][]string, len(modulationDepths))
	for _, d := range modulationDepths {
		out[d.Name] = slices.Clone(d.Modes)
	}
	return out
}

// Presets lists the grammar's team presets by name, in grammar order.
func Presets() []string {
	out := make([]string, len(modulationPresets))
	for i, p := range modulationPresets {
		out[i] = p.Name
	}
	return out
}

// IsDriftMode reports whether reason is one of the grammar's drift modes.
func IsDriftMode(reason string) bool { return slices.Contains(modulationModes[:], reason) }

// Modulate decides whether verdict v returns the agent, for a role of a
// preset team. A reason that is not a drift mode never returns. With no
// role every drift returns, whether or not it interrupted. Otherwise the
// role's own modes, or else its depth's modes, decide. An unknown team or
// role is an error naming the valid ones.
func Modulate(v CheckResult, team, role string) (Modulation, error) {
	if !IsDriftMode(v.Reason) {
		return Modulation{Return: false, Basis: fmt.Sprintf("%s is not a drift mode", v.Reason), Team: team, Role: role}, nil
	}
	if role == "" {
		return Modulation{Return: true, Basis: "unstyled — every drift returns", Advice: v.Advice, Team: team}, nil
	}
	var preset *modulationPreset
	for i := range modulationPresets {
		if modulationPresets[i].Name == team {
			preset = &modulationPresets[i]
		}
	}
	if preset == nil {
		return Modulation{}, fmt.Errorf("unknown team %q (valid: %s)", team, strings.Join(Presets(), ", "))
	}
	var rl *modulationRole
	var roles []string
	for i := range preset.Roles {
		roles = append(roles, preset.Roles[i].Role)
		if preset.Roles[i].Role == role {
			rl = &preset.Roles[i]
		}
	}
	if rl == nil {
		return Modulation{}, fmt.Errorf("unknown role %q in team %s (valid: %s)", role, team, strings.Join(roles, ", "))
	}
	acts := rl.Modes
	if len(acts) == 0 {
		for _, d := range modulationDepths {
			if d.Name == rl.Recurse {
				acts = d.Modes
			}
		}
	}
	m := Modulation{Return: slices.Contains(acts, v.Reason), Basis: fmt.Sprintf("%s recurses %s", role, rl.Recurse), Team: team, Role: role}
	switch {
	case m.Return && rl.Return != "":
		m.Advice = rl.Return
	case m.Return:
		m.Advice = v.Advice
	default:
		m.Advice = fmt.Sprintf("%s (recurse: %s) tolerates %s — recursing on.", role, rl.Recurse, v.Reason)
	}
	return m, nil
}
