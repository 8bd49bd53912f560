package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// The hash chain. Every record carries, as "prev", the SHA-256 (hex) of the
// exact bytes of the line before it, newline excluded; the first record
// carries the session's genesis, a hash of the session's identity made at
// start. The session also keeps an anchor — how many records the ledger held
// after the last acknowledged append and the hash of the last one — which
// covers the end of the file, where no later line would notice an edit.
//
// The chain has no secret: it makes tampering evident, it cannot stop a
// forger who rewrites every hash after the forged line and the anchor too.

// Chain is what a ledger is checked against.
type Chain struct {
	Genesis string  // prev of the first record
	Anchor  *Anchor // the last acknowledged append; nil when none was recorded
	// Heads asks for the chain's head after each of these record counts
	// (Log.Heads): a reader checking that something stored elsewhere — a
	// judgement's ledger prefix — is a prefix of this ledger.
	Heads []int
}

// Anchor is the session's record of the ledger after its last acknowledged
// append.
type Anchor struct {
	Records int    `json:"records"`
	Head    string `json:"head"` // hash of record Records (the genesis when 0)
}

// Genesis is the chain's start for a session: a hash of its slug and its
// creation time, so a ledger cannot be moved under another session.
func Genesis(slug, createdAt string) string {
	h := sha256.New()
	fmt.Fprintf(h, "ponder ledger v1\x00%s\x00%s", slug, createdAt)
	return hex.EncodeToString(h.Sum(nil))
}

// HashLine is the chain hash of one line (without its newline).
func HashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Tamper kinds a forged ledger is reported with.
const (
	Edited    = "edited"
	Inserted  = "inserted"
	Deleted   = "deleted"
	Reordered = "reordered"
)

// chainLine is one whole line as the diagnosis sees it.
type chainLine struct {
	off  int64
	hash string
	seq  int
	prev string
}

// diagnose names what was done to a ledger whose check first failed at line
// index x (0-based), by reading every whole line's seq and prev and placing
// line x in the chain. It handles one edit, insertion, deletion or move at a
// time precisely; for anything more tangled it names the first line where
// the chain breaks. why is what the fast check saw.
func diagnose(data []byte, x int, genesis, why string) *Damage {
	var lines []chainLine
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			break // an unfinished last line is not part of the chain
		}
		raw := data[off : off+end]
		var f struct {
			Seq  int    `json:"seq"`
			Prev string `json:"prev"`
		}
		_ = json.Unmarshal(raw, &f)
		lines = append(lines, chainLine{off: int64(off), hash: HashLine(raw), seq: f.Seq, prev: f.Prev})
		off += end + 1
	}
	if x >= len(lines) {
		x = len(lines) - 1
	}
	forged := func(i int, seq int, tamper, format string, a ...any) *Damage {
		d := &Damage{Forged: true, Tamper: tamper, Line: i + 1, Seq: seq, Detail: fmt.Sprintf(format, a...)}
		if i < len(lines) {
			d.Offset = lines[i].off
		} else {
			d.Offset = int64(len(data))
		}
		return d
	}
	if x < 0 {
		return forged(0, 1, Edited, "%s", why)
	}
	n := len(lines)
	expect := func(i int) string {
		if i == 0 {
			return genesis
		}
		return lines[i-1].hash
	}
	at := map[string]int{genesis: -1}
	for i := n - 1; i >= 0; i-- {
		at[lines[i].hash] = i
	}
	cur := lines[x]
	if k := at[cur.hash]; k >= 0 && k < x {
		return forged(x, cur.seq, Inserted, "line %d (seq %d) was inserted: it is a copy of line %d", x+1, cur.seq, k+1)
	}
	if cur.prev == expect(x) {
		// The chain holds at x: x's own fields were changed.
		return forged(x, cur.seq, Edited, "line %d (seq %d) was edited after it was written: %s", x+1, cur.seq, why)
	}
	j, found := at[cur.prev]
	switch {
	case found && j > x:
		return forged(x, cur.seq, Reordered, "line %d (seq %d) is out of order: its chain places it after line %d", x+1, cur.seq, j+1)
	case found && j < 0:
		return forged(0, lines[0].seq, Inserted, "line 1 (seq %d) was inserted: line %d starts this session's chain, so lines 1–%d are not part of it",
			lines[0].seq, x+1, x)
	case found && j < x-1:
		first := lines[j+1]
		return forged(j+1, first.seq, Inserted, "line %d (seq %d) was inserted: line %d chains directly to line %d, so lines %d–%d are not part of the chain",
			j+2, first.seq, x+1, j+1, j+2, x)
	case found:
		return forged(x, cur.seq, Edited, "line %d (seq %d) was edited after it was written: %s", x+1, cur.seq, why)
	}
	switch {
	case x+1 < n && lines[x+1].prev == expect(x):
		return forged(x, cur.seq, Inserted, "line %d (seq %d) was inserted: line %d chains directly to line %d", x+1, cur.seq, x+2, x)
	case cur.seq > x+1:
		return forged(x, x+1, Deleted, "record(s) seq %d–%d were deleted before line %d (seq %d follows seq %d, and its chain names a line that is gone)",
			x+1, cur.seq-1, x+1, cur.seq, x)
	case x+1 < n && lines[x+1].prev != cur.hash:
		return forged(x, cur.seq, Edited, "line %d (seq %d) was edited after it was written: neither its chain hash nor line %d's hash of it holds", x+1, cur.seq, x+2)
	case x == 0:
		return forged(0, cur.seq, Edited, "line 1 (seq %d) does not start this session's chain: it was edited, or session.json's slug or createdAt were", cur.seq)
	}
	prev := lines[x-1]
	return forged(x-1, prev.seq, Edited, "line %d (seq %d) was edited after it was written: line %d records a different hash of it", x, prev.seq, x+1)
}
