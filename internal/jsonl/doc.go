// Package jsonl is the one reader (and appender) of the append-only
// JSON-lines files laserkit keeps: run histories, a run's events, the
// supervisor's journal, the hooks' queue, a loop's steps and verdicts,
// contexts.log and the link. Each had its own reader, each handling a
// crash's leftovers its own way; here there is one rule for all of them.
//
// The rule. A record is a line that ends in a line feed. A last line
// without one is an unfinished write (its writer died, or is still
// writing): readers leave it out, and the next writer, holding the file's
// lock, cuts it off before it appends (Append), so a record never follows
// a torn one. A complete line in the middle of a file that does not decode
// is corruption: Decode reports it as a *LineError naming the file and the
// line, never passes over it. Blank lines are nobody's records and are
// skipped.
//
// Scan hands out lines without copying the file into memory (a bounded
// buffer, however long the file), from any position a previous Scan
// returned, so a reader that polls a growing file reads only what is new.
package jsonl
