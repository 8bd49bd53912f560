package localstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/laserkit/laserkit/laserbrain"
)

// OpenReader opens the store at paths for a command that only reads: it
// creates nothing. A home without a runs directory is a store with no runs
// (every run is missing, as in a fresh home), and its writes are refused
// with laserbrain.ErrReadOnly; a home that has one opens as Open does.
func OpenReader(paths Paths) (laserbrain.Store, error) {
	runs := filepath.Join(paths.Home, "runs")
	if _, err := os.Stat(runs); errors.Is(err, fs.ErrNotExist) {
		return &noRuns{runsDir: runs, evidence: OpenEvidence(paths.Config), contexts: laserbrain.NewMemContexts()}, nil
	}
	return Open(paths)
}

// noRuns is a home nothing was saved in yet, opened for reading.
type noRuns struct {
	runsDir  string
	evidence *Evidence
	contexts *laserbrain.MemContexts
}

func (n *noRuns) readOnly() error {
	return fmt.Errorf("the store at %s: %w", filepath.Dir(n.runsDir), laserbrain.ErrReadOnly)
}

func (n *noRuns) OpenRun(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	return nil, n.readOnly()
}

func (n *noRuns) ReadRun(ctx context.Context, id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("run %s: %w (in %s)", id, laserbrain.ErrNoRun, n.runsDir)
}

func (n *noRuns) Contexts() laserbrain.ContextStore              { return n.contexts }
func (n *noRuns) Evidence() laserbrain.EvidenceSource            { return n.evidence }
func (n *noRuns) Flush(ctx context.Context) error                { return nil }
func (n *noRuns) Close() error                                   { return nil }
func (n *noRuns) RecentRunIDs(context.Context) ([]string, error) { return nil, nil }

func (n *noRuns) RecordToolEvent(ctx context.Context, ev laserbrain.Event) error {
	return n.readOnly()
}
