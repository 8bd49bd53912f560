// Package inittrace reads what a Go program prints under
// GODEBUG=inittrace=1: one line per package init, with what it allocated.
// The start-up tests hold laserkit's binaries to an allocation budget with
// it; the byte and allocation counts are exact, where the clock times are
// the machine's noise.
package inittrace
