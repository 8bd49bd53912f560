package ledger

// Record types of the ledger (SPEC.md §4).
const (
	UnitSeed   = "unit-seed"
	UnitAdd    = "unit-add"
	UnitEdit   = "unit-edit"
	UnitDelete = "unit-delete"
	UnitGrade  = "unit-grade"
	Finding    = "finding"
)

// Finding operations and the voices bound to them.
const (
	OpAdd    = "add"
	OpEdit   = "edit"
	OpChange = "change"
	OpDelete = "delete"

	Dreamer = "dreamer"
	Builder = "builder"
	Empath  = "empath"
	Skeptic = "skeptic"
)

// Voices in their canonical order.
var Voices = []string{Skeptic, Builder, Dreamer, Empath}

// Record is one line of ledger.jsonl. Seq, TS, Pass, Batch, BatchSize and
// Prev are assigned by the engine: Batch is the seq of the batch's first
// record and BatchSize its length, so a batch cut short by a crash is
// recognisable even when the cut fell on a line boundary; Prev is the
// SHA-256 of the previous line (the session's genesis for the first), so a
// line edited, inserted, deleted or moved breaks the chain where it happened.
// Path is a name in ponder's stored form (see EncodeName).
type Record struct {
	Seq            int      `json:"seq"`
	TS             string   `json:"ts"`
	Pass           int      `json:"pass"`
	Batch          int      `json:"batch"`
	BatchSize      int      `json:"batchSize"`
	Type           string   `json:"type"`
	Voice          string   `json:"voice,omitempty"`
	Op             string   `json:"op,omitempty"`
	FindingID      string   `json:"findingId,omitempty"`
	UnitID         string   `json:"unitId,omitempty"`
	Path           string   `json:"path,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	Grade          *string  `json:"grade,omitempty"`
	Severity       string   `json:"severity,omitempty"`
	Confidence     *float64 `json:"confidence,omitempty"`
	Text           *string  `json:"text,omitempty"`
	Recommendation *string  `json:"recommendation,omitempty"`
	Evidence       *string  `json:"evidence,omitempty"`
	Reason         *string  `json:"reason,omitempty"`
	Phantom        bool     `json:"phantom,omitempty"`
	Prev           string   `json:"prev"`
}

// Severities of a finding, most severe first.
var Severities = []string{"must", "should", "could"}

// SeverityRank orders severities for reports: must 0, should 1, could 2.
func SeverityRank(s string) int {
	for i, v := range Severities {
		if v == s {
			return i
		}
	}
	return len(Severities)
}

// VoiceFor is the bijection: the one voice allowed to perform a finding op
// or a unit record type ("" when no voice may).
func VoiceFor(typ, op string) string {
	switch typ {
	case Finding:
		switch op {
		case OpAdd:
			return Dreamer
		case OpEdit:
			return Builder
		case OpChange:
			return Empath
		case OpDelete:
			return Skeptic
		}
	case UnitAdd:
		return Dreamer
	case UnitEdit:
		return Builder
	case UnitDelete:
		return Skeptic
	}
	return ""
}

// OpOf names what a voice does, for messages: "delete (unit-delete)".
func OpOf(voice string) string {
	switch voice {
	case Dreamer:
		return "add (unit-add)"
	case Builder:
		return "edit (unit-edit)"
	case Empath:
		return "change"
	case Skeptic:
		return "delete (unit-delete)"
	}
	return "nothing"
}
