package oca

import "testing"

func TestParseSeverity(t *testing.T) {
	// The OCA bridge's severity scale, and numbers as they are.
	cases := map[string]float64{
		"none": 0.05, "trivial": 0.15, "info": 0.2, "low": 0.25, "minor": 0.25,
		"medium": 0.5, "moderate": 0.5, "warning": 0.6, "high": 0.8, "major": 0.8,
		"severe": 0.9, "critical": 0.95, "fatal": 1.0,
		"HIGH": 0.8, " Critical ": 0.95, "0.7": 0.7, "0.69": 0.69, "1.5": 1, "-2": 0,
		"": 0.5, "catastrophic": 0.5, "NaN": 0.5, "1e-1": 0.1,
	}
	for in, want := range cases {
		if got := ParseSeverity(in); got != want {
			t.Errorf("ParseSeverity(%q) = %v, want %v", in, got, want)
		}
	}
}
