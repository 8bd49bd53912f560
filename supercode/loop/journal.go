package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

// Record kinds in steps.jsonl.
const (
	recRun    = "run"    // the run began: its id, SCRIPT and options
	recResume = "resume" // a --resume began replaying
	recShell  = "shell"  // an external command SCRIPT ran
	recCI     = "ci"     // a run of the verifier, ./ci
	recGate   = "gate"   // a command the operator gate refused
	recAgent  = "agent"  // an agent call (a start record, then the done record)
	recJudge  = "judge"  // a judge call (a start record, then the done record)
	recHalt   = "halt"   // the loop stopped SCRIPT, and why
	recEnd    = "end"    // the run ended: exit status and reason
)

// Record is one line of steps.jsonl. A step is one external command or one
// agent or judge call; agent and judge calls write a "start" record before
// the session starts (naming its checkpoint and session) and the done record
// after it. Done records carry what replay needs: the status, the recorded
// output (ops/), and the loop's state after the step.
type Record struct {
	Step  int       `json:"step"`
	Phase string    `json:"phase,omitempty"` // "start", or "" for a done record
	Kind  string    `json:"kind"`
	At    time.Time `json:"at"`
	// Key is where in SCRIPT the step ran (line:column#occurrence): replay
	// matches steps by it.
	Key    string   `json:"key,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Status *int     `json:"status,omitempty"`
	// Out and Err name the step's recorded output under the run directory
	// (kept only where SCRIPT reads it back: a pipe or $(…)); Combined: one
	// file for both (2>&1).
	Out      string `json:"out,omitempty"`
	Err      string `json:"err,omitempty"`
	Combined bool   `json:"combined,omitempty"`
	Cut      bool   `json:"cut,omitempty"` // the recording reached its cap

	Service    string   `json:"service,omitempty"`
	Iteration  int      `json:"iteration,omitempty"`
	Checkpoint string   `json:"checkpoint,omitempty"`
	ChildRun   string   `json:"child_run,omitempty"`
	Sessions   []string `json:"sessions,omitempty"`
	Spill      string   `json:"spill,omitempty"` // the full context, when it was capped
	Tokens     int64    `json:"tokens,omitempty"`
	Noop       bool     `json:"noop,omitempty"`

	Mode       string   `json:"mode,omitempty"` // judge: single, soak or jury
	Samples    []Sample `json:"samples,omitempty"`
	Passed     *bool    `json:"passed,omitempty"`
	Soak       *int     `json:"soak,omitempty"` // consecutive passes after this verdict
	SoakTarget int      `json:"soak_target,omitempty"`
	Jurors     int      `json:"jurors,omitempty"`
	Summary    string   `json:"summary,omitempty"`

	Reason string     `json:"reason,omitempty"`
	Drift  *DriftStep `json:"drift,omitempty"`
	State  *state     `json:"state,omitempty"`
	Meta   *Meta      `json:"meta,omitempty"`
}

// Sample is one judge session's answer within a judge call (one, or one
// per juror).
type Sample struct {
	Session   string           `json:"session,omitempty"`
	Attempts  int              `json:"attempts"`
	Verdict   *verdict.Verdict `json:"verdict,omitempty"`
	Passed    bool             `json:"passed"`
	Malformed []string         `json:"malformed,omitempty"`
	NoVerdict int              `json:"no_verdict,omitempty"` // turns that ended without a verdict
	// Reask is how the judge was asked again after a turn without a
	// verdict: ReaskToolChoice (the conversation sent again with the
	// verdict tool mandated) or ReaskWords (asked once more in words).
	Reask     string `json:"reask,omitempty"`
	Escalated string `json:"escalated,omitempty"`
	Error     string `json:"error,omitempty"`
	Tokens    int64  `json:"tokens,omitempty"`
}

// DriftStep is the reading the loop gave its own drift run for an
// iteration, and what laserbrain answered.
type DriftStep struct {
	Distance *int   `json:"distance"`
	Progress string `json:"progress"`
	Reason   string `json:"reason"`
	Drifting bool   `json:"drifting"`
}

// How a judge is asked again after a turn that ended without a verdict.
const (
	ReaskToolChoice = "tool_choice"
	ReaskWords      = "words"
)

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

// journal appends records to steps.jsonl, each line written whole and
// synced, so an interrupted run leaves a valid journal.
type journal struct {
	path string
	mu   sync.Mutex
}

func (j *journal) append(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := jsonl.Append(j.path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// readJournal reads steps.jsonl through the one JSON-lines reader: a torn
// last line (a crash mid-write) is not a record yet; a damaged line
// elsewhere is an error naming it.
func readJournal(path string) ([]Record, error) {
	return jsonl.ReadAll[Record](path)
}

// Meta is run.json: what the run is, how it was started, and how it ended.
type Meta struct {
	ID        string    `json:"id"`
	Script    string    `json:"script"`     // SCRIPT as given
	ScriptSum string    `json:"script_sum"` // sha256 of the copy in the run directory
	Dir       string    `json:"dir"`        // the working directory
	Args      []string  `json:"args,omitempty"`
	Settings  Settings  `json:"settings"`
	Created   time.Time `json:"created"`
	Status    string    `json:"status"` // running or ended
	ExitCode  *int      `json:"exit_code,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	// Resumable: the run was stopped by the loop (signal, timeout, a
	// budget) rather than ending on its own.
	Resumable bool      `json:"resumable,omitempty"`
	Ended     time.Time `json:"ended,omitzero"`
	// Process is the loop process running the run, while it runs.
	Process *Process `json:"process,omitempty"`
}

// Settings are the options a run keeps across --resume.
type Settings struct {
	Goal     string        `json:"goal,omitempty"`
	MaxIters int           `json:"max_iters"`
	Budget   int64         `json:"budget,omitempty"`
	Timeout  time.Duration `json:"timeout"`
	Soak     int           `json:"soak,omitempty"`
	Jury     int           `json:"jury,omitempty"`
	Goldfish bool          `json:"goldfish,omitempty"`
	Pedantic bool          `json:"pedantic,omitempty"`
	Seed     string        `json:"seed,omitempty"`
	Thread   string        `json:"thread,omitempty"`
	Agents   string        `json:"agents,omitempty"`
}

func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFile(filepath.Join(dir, "run.json"), append(b, '\n'), 0o644)
}

func readMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s is damaged: %w", filepath.Join(dir, "run.json"), err)
	}
	return m, nil
}
