package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/ponder"
)

// fnum prints a metric exactly, or null.
func fnum(f *float64) string {
	if f == nil {
		return "null"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// fcol prints a metric for a table column: three decimals, or "—" for null.
func fcol(f *float64) string {
	if f == nil {
		return "—"
	}
	return strconv.FormatFloat(*f, 'f', 3, 64)
}

func sval(s *string) string {
	if s == nil {
		return "—"
	}
	return *s
}

// term makes text safe to print for a person (ponder.Printable).
func term(s string) string { return ponder.Printable(s) }

// maxListed is how many entries of a long list text output shows.
const maxListed = 20

// capped is the first maxListed entries of list, and a line counting the
// rest: a refusal over 20,000 ungraded units should not scroll a terminal
// away (--json has them all).
func capped(list []string) []string {
	if len(list) <= maxListed {
		return list
	}
	out := append([]string{}, list[:maxListed]...)
	return append(out, fmt.Sprintf("… and %d more (%d in all; --json lists every one)", len(list)-maxListed, len(list)))
}

// joinCapped joins a list on one line, capped like capped.
func joinCapped(list []string, sep string) string {
	if len(list) <= maxListed {
		return strings.Join(list, sep)
	}
	return strings.Join(list[:maxListed], sep) + fmt.Sprintf("%s… and %d more", sep, len(list)-maxListed)
}
