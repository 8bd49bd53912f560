package oca

import (
	"strconv"
	"strings"
)

// severityNames is the bridge's name → value scale.
var severityNames = map[string]float64{
	"none": 0.05, "trivial": 0.15, "info": 0.2, "low": 0.25, "minor": 0.25,
	"medium": 0.5, "moderate": 0.5, "warning": 0.6, "high": 0.8, "major": 0.8,
	"severe": 0.9, "critical": 0.95, "fatal": 1.0,
}

// ObservationTypes are the five metacognitive observation types,
// the only ones metacognize and the store accept.
var ObservationTypes = []string{"stuck_state", "perseveration", "thrash", "low_confidence", "deliberation_skipped"}

// defaultSeverity is what anything unrecognised maps to.
const defaultSeverity = 0.5

// ParseSeverity maps a severity given as a number or a name onto [0,1]:
// names case-insensitively, numeric strings parsed and clamped, anything
// else 0.5.
func ParseSeverity(s string) float64 {
	t := strings.TrimSpace(s)
	if v, ok := severityNames[strings.ToLower(t)]; ok {
		return v
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && f == f {
		return min(1, max(0, f))
	}
	return defaultSeverity
}
