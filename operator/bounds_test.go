package operator

import (
	"strings"
	"testing"
	"time"
)

// hostileInputs are the shapes that once kept the hook busy: deep command
// substitution (the printer re-printed each level), deep subshells, and
// sheer size.
func hostileInputs() []struct {
	name  string
	cmd   string
	bound time.Duration
} {
	return []struct {
		name  string
		cmd   string
		bound time.Duration
	}{
		{"cmdsubst-1000", strings.Repeat("echo $(", 1000) + "rm -rf x" + strings.Repeat(")", 1000), 250 * time.Millisecond},
		{"cmdsubst-unknown-1000", strings.Repeat("$(", 1000) + "x" + strings.Repeat(")", 1000), 250 * time.Millisecond},
		{"cmdsubst-190", strings.Repeat("echo $(", 190) + "rm -rf x" + strings.Repeat(")", 190), 250 * time.Millisecond},
		{"subshell-190", strings.Repeat("( ", 190) + "rm -rf x" + strings.Repeat(" )", 190), 250 * time.Millisecond},
		{"subshell-50000", strings.Repeat("( ", 50000) + "ls" + strings.Repeat(" )", 50000), 250 * time.Millisecond},
		{"1MB-words", strings.Repeat("echo hello world; ", 1<<20/18), 250 * time.Millisecond},
		{"1MB-one-word", "echo " + strings.Repeat("a", 1<<20), 250 * time.Millisecond},
		{"1MB-pipes", strings.Repeat("cat | ", 1<<20/6) + "cat", 250 * time.Millisecond},
		{"8MB-words", strings.Repeat("git status && ", 8<<20/14), time.Second},
	}
}

func BenchmarkHostile(b *testing.B) {
	for _, h := range hostileInputs() {
		b.Run(h.name, func(b *testing.B) {
			for b.Loop() {
				classify(h.cmd)
			}
		})
	}
}

// TestHostileInputsAnswer checks the answers (fail closed where the
// analysis stops) and, loosely, that no shape is pathologically slow: the
// bound the issue sets is measured by BenchmarkHostile and bench-hook; this
// test only fails past ten times it.
func TestHostileInputsAnswer(t *testing.T) {
	for _, h := range hostileInputs() {
		start := time.Now()
		r := classify(h.cmd)
		took := time.Since(start)
		t.Logf("%s: %s in %v (%s)", h.name, r.Decision, took, trim(r.Why))
		if took > 10*h.bound {
			t.Errorf("%s took %v (bound %v)", h.name, took, h.bound)
		}
		if strings.Contains(h.cmd, "rm -rf") && r.Decision == Allow {
			t.Errorf("%s: allowed", h.name)
		}
		// Within the nesting limit the analysis follows every level.
		if strings.HasSuffix(h.name, "-190") && r.Decision != Deny {
			t.Errorf("%s: %s, want deny (%s)", h.name, r.Decision, trim(r.Why))
		}
	}
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
