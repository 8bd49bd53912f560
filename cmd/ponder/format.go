package main

import "strconv"

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
