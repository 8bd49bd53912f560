package verdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
)

// A call directory is where one agent or judge session hands its answer to
// the loop: the loop creates it, passes it to `laserbrain mcp --loop-call
// DIR`, and reads it when the session ends. The MCP server and the loop are
// different processes, so everything goes through files, under a lock.
const (
	fileVerdict   = "verdict.json"
	fileEscalate  = "escalate.json"
	fileMalformed = "malformed.jsonl"
	fileLock      = "call.lock"
)

// MaxMalformed is how many malformed verdicts a judge may give in one
// call: the first bounces with its error, the second ends the call as a
// malfunction.
const MaxMalformed = 2

// ErrAlreadyRecorded: the call already has its verdict; the first valid one
// stands.
var ErrAlreadyRecorded = errors.New("a verdict is already recorded for this call; end your turn")

// Call is what one session answered through its tools.
type Call struct {
	Verdict   *Verdict `json:"verdict,omitempty"`
	Raw       string   `json:"raw,omitempty"`
	Escalated string   `json:"escalated,omitempty"`
	Malformed []string `json:"malformed,omitempty"`
}

type malformedLine struct {
	At    time.Time       `json:"at"`
	Error string          `json:"error"`
	Input json.RawMessage `json:"input,omitempty"`
}

func lock(dir string) (*fsx.Lock, error) {
	return fsx.LockFile(filepath.Join(dir, fileLock), 10*time.Second)
}

// Submit validates raw as the call's verdict. A valid verdict is recorded
// (the first one stands); a malformed one is counted, and its error is
// returned with how many malformed verdicts the call has had.
func Submit(dir string, raw []byte) (v Verdict, malformed int, err error) {
	lk, err := lock(dir)
	if err != nil {
		return Verdict{}, 0, err
	}
	defer lk.Unlock()
	if _, err := os.Stat(filepath.Join(dir, fileVerdict)); err == nil {
		return Verdict{}, 0, ErrAlreadyRecorded
	}
	prior, err := readMalformed(dir)
	if err != nil {
		return Verdict{}, 0, err
	}
	v, perr := Parse(raw)
	if perr != nil {
		input := json.RawMessage(raw)
		if !json.Valid(raw) {
			input, _ = json.Marshal(string(raw))
		}
		line, _ := json.Marshal(malformedLine{At: time.Now().UTC(), Error: perr.Error(), Input: input})
		if _, err := jsonl.Append(filepath.Join(dir, fileMalformed), append(line, '\n'), 0o644); err != nil {
			return Verdict{}, 0, err
		}
		return Verdict{}, len(prior) + 1, perr
	}
	if err := fsx.WriteFile(filepath.Join(dir, fileVerdict), raw, 0o644); err != nil {
		return Verdict{}, len(prior), err
	}
	return v, len(prior), nil
}

// Escalate records that the session wants a person, and why.
func Escalate(dir, reason string) error {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return errors.New("escalate needs a reason: what a person must decide or do")
	}
	lk, err := lock(dir)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	b, _ := json.Marshal(map[string]any{"reason": reason, "at": time.Now().UTC()})
	return fsx.WriteFile(filepath.Join(dir, fileEscalate), b, 0o644)
}

// Read returns what the call's session answered so far.
func Read(dir string) (Call, error) {
	var c Call
	raw, err := os.ReadFile(filepath.Join(dir, fileVerdict))
	switch {
	case err == nil:
		v, perr := Parse(raw)
		if perr != nil {
			return c, fmt.Errorf("%s: %w", filepath.Join(dir, fileVerdict), perr)
		}
		c.Verdict, c.Raw = &v, string(raw)
	case !errors.Is(err, fs.ErrNotExist):
		return c, err
	}
	b, err := os.ReadFile(filepath.Join(dir, fileEscalate))
	switch {
	case err == nil:
		var e struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(b, &e) != nil || strings.TrimSpace(e.Reason) == "" {
			e.Reason = "(no reason given)"
		}
		c.Escalated = e.Reason
	case !errors.Is(err, fs.ErrNotExist):
		return c, err
	}
	lines, err := readMalformed(dir)
	if err != nil {
		return c, err
	}
	for _, l := range lines {
		c.Malformed = append(c.Malformed, l.Error)
	}
	return c, nil
}

func readMalformed(dir string) ([]malformedLine, error) {
	return jsonl.ReadAll[malformedLine](filepath.Join(dir, fileMalformed))
}
