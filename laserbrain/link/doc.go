// Package link is the shared log agents read and write: one JSONL file,
// one record per line {ts, agent, hub, kind, text, goal?, payload?}, in the
// Python reference's format (laserbrain-sdk link.py), so Python and Go
// agents on one machine share it both ways.
//
// Writers append one line with one write call on an O_APPEND file: records
// from many processes never interleave, and nobody can erase another's
// line, so no lock is taken. Readers skip blank and malformed lines (a torn
// last line, a foreign line) instead of failing. The file is
// $LASERBRAIN_LINK_LOG, else $LASERBRAIN_TANDEM_LOG, else link.jsonl in the
// laserbrain config directory (tandem.jsonl when only that older file
// exists).
//
// It lives beside laserbrain, not inside supercode, because its users are
// the agents and their hooks as much as the supervisor: an agent reading
// the link has no business importing the supervisor. supercode.Publish
// writes into it.
package link
