package shell

import (
	"slices"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// packRes are the pack rules' patterns, by index in packRules, each
// compiled on first use so a hook process pays only for the rules its
// command can meet. The rest of a rule is read from packRules itself, and
// this array starts zero, so package init builds nothing for the pack.
var packRes [len(packRules)]compiledOnce

// packRegexp is rule i's pattern with the given match timeout.
func packRegexp(i int, match time.Duration) *regexp2.Regexp {
	src := packRules[i].Source
	return packRes[i].get(match, func(match time.Duration) *regexp2.Regexp {
		re := regexp2.MustCompile(src, regexp2.None)
		re.MatchTimeout = match
		return re
	})
}

// appliesTo: the rule lists the command itself, or its name without trailing
// version digits (python3.11 is python) or without a .suffix (mkfs.ext4 is
// mkfs). gen checks examples the same way.
func (r *packRule) appliesTo(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	return slices.Contains(r.Commands, name) || slices.Contains(r.Commands, strings.TrimRight(name, "0123456789.")) || slices.Contains(r.Commands, base)
}
