package laserbrain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Modulation is the policy layer's answer: given a verdict and a role in a
// team, should the agent be returned to ground or left to recurse? Team and
// Role name the preset role that decided ("" — JSON null — when none did).
type Modulation struct {
	Return bool   `json:"return"`
	Advice string `json:"advice"`
	Basis  string `json:"basis"`
	Team   string `json:"team"`
	Role   string `json:"role"`
}

// MarshalJSON writes an empty team or role as null, as the reference does.
func (m Modulation) MarshalJSON() ([]byte, error) {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return json.Marshal(struct {
		Return bool    `json:"return"`
		Advice string  `json:"advice"`
		Basis  string  `json:"basis"`
		Team   *string `json:"team"`
		Role   *string `json:"role"`
	}{m.Return, m.Advice, m.Basis, opt(m.Team), opt(m.Role)})
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

// Modulate decides whether verdict v returns the agent, as the reference's
// modulate tool does. An unknown team, or a role its team does not have, is
// an error naming the valid ones (whatever the verdict). A reason that is
// not a drift mode never returns. Without a role of a known team — no
// role, or a role with no team — every drift returns ("unstyled"), whether
// or not it interrupted. Otherwise the role's own modes, or else its
// depth's, decide. The advice is the verdict's, the role's return text, or
// a note that the role tolerates the drift.
func Modulate(v CheckResult, team, role string) (Modulation, error) {
	var preset *TeamPreset
	if team != "" {
		p, ok := teamPreset(team)
		if !ok {
			names := Presets()
			slices.Sort(names)
			return Modulation{}, fmt.Errorf("no preset named %s (presets: %s)", PyRepr(team), strings.Join(names, ", "))
		}
		preset = &p
	}
	var rl *TeamRole
	if preset != nil && role != "" {
		var roles []string
		for i := range preset.Roles {
			roles = append(roles, preset.Roles[i].Role)
			if preset.Roles[i].Role == role {
				rl = &preset.Roles[i]
			}
		}
		if rl == nil {
			return Modulation{}, fmt.Errorf("%s has no role %s (roles: %s)", team, PyRepr(role), strings.Join(roles, ", "))
		}
	}
	m := Modulation{Team: team}
	if preset == nil {
		m.Team = ""
	}
	switch {
	case !IsDriftMode(v.Reason):
		m.Advice, m.Basis = v.Advice, v.Reason+" is not a drift mode"
	case rl == nil:
		m.Return, m.Advice, m.Basis = true, v.Advice, "unstyled — every drift returns"
	default:
		acts := rl.Modes
		if len(acts) == 0 {
			for _, d := range modulationDepths {
				if d.Name == rl.Recurse {
					acts = d.Modes
				}
			}
		}
		m.Return = slices.Contains(acts, v.Reason)
		m.Basis = fmt.Sprintf("%s recurses %s", rl.Role, rl.Recurse)
		switch {
		case m.Return && rl.Return != "":
			m.Advice = rl.Return
		case m.Return:
			m.Advice = v.Advice
		default:
			m.Advice = fmt.Sprintf("%s (recurse: %s) tolerates %s — recursing on.", rl.Role, rl.Recurse, v.Reason)
		}
	}
	if rl != nil {
		m.Role = rl.Role
	}
	return m, nil
}
