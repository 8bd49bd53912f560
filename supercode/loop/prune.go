package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// What a run's checkpoints are kept or removed for (PrunedRun.State).
const (
	RunFinished  = "finished"  // SCRIPT ended on its own: nothing will resume it
	RunResumable = "resumable" // stopped by the loop, or killed: --resume goes on
	RunBusy      = "running"   // a process holds the run now
	RunUnknown   = "unknown"   // no journal in this home (another home, or deleted)
)

// PruneOptions are one `laserbrain loop prune`.
type PruneOptions struct {
	Dir  string // a directory in the repository ("" = the current one)
	Home string // where runs live ("" = DefaultHome)
	// All removes the checkpoints of resumable runs and of runs with no
	// journal here too; a running loop's are always kept.
	All    bool
	DryRun bool
}

// PrunedRun is one run's checkpoints and what prune did with them.
type PrunedRun struct {
	Run     string `json:"run"`
	State   string `json:"state"` // finished, resumable, running, unknown
	Reason  string `json:"reason,omitempty"`
	Refs    int    `json:"refs"`
	Removed bool   `json:"removed"` // removed (with DryRun: would be)
}

// PruneResult is what prune found and did.
type PruneResult struct {
	Repo    string      `json:"repository"`
	DryRun  bool        `json:"dry_run"`
	Runs    []PrunedRun `json:"runs"`
	Removed int         `json:"refs_removed"` // with DryRun: would be
	Kept    int         `json:"refs_kept"`
}

// Prune removes the checkpoint refs (refs/laserkit/loop/<run>/<step>) of
// finished loop runs from the repository containing o.Dir. The refs of a
// run that can still be resumed (stopped by the loop, or killed) and of
// one with no journal in this home are kept unless o.All; those of a run
// a process holds now are always kept. The refs go in one git transaction
// that checks each still points where it was read, so a ref moved
// meanwhile fails the whole prune rather than losing a checkpoint. The
// journal is left as it is (it still names the removed refs).
// Outside a repository the error is an *Error with ExitUsage.
func Prune(ctx context.Context, o PruneOptions) (PruneResult, error) {
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	home := o.Home
	if home == "" {
		h, err := DefaultHome()
		if err != nil {
			return PruneResult{}, fail(KindFailure, "%v", err)
		}
		home = h
	}
	g := findRepo(ctx, dir)
	if g == nil {
		abs, _ := filepath.Abs(dir)
		return PruneResult{}, fail(KindUsage, "%s is not in a git repository: the loop's checkpoints live in one", abs)
	}
	res := PruneResult{Repo: g.top, DryRun: o.DryRun, Runs: []PrunedRun{}}
	out, err := gitOut(ctx, g.top, nil, "for-each-ref", "--format=%(objectname) %(refname)", RefPrefix)
	if err != nil {
		return res, fail(KindFailure, "%v", err)
	}
	type ref struct{ name, oid string }
	byRun := map[string][]ref{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		oid, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		run, _, ok := strings.Cut(strings.TrimPrefix(name, RefPrefix), "/")
		if !ok || fleet.ValidateRunID(run) != nil {
			continue // not one of ours
		}
		byRun[run] = append(byRun[run], ref{name, oid})
	}
	runs := make([]string, 0, len(byRun))
	for r := range byRun {
		runs = append(runs, r)
	}
	sort.Strings(runs)
	var del strings.Builder
	for _, run := range runs {
		state, reason := runState(filepath.Join(home, run))
		pr := PrunedRun{Run: run, State: state, Reason: reason, Refs: len(byRun[run])}
		pr.Removed = state == RunFinished || o.All && state != RunBusy
		if pr.Removed {
			res.Removed += pr.Refs
			for _, r := range byRun[run] {
				fmt.Fprintf(&del, "delete %s %s\n", r.name, r.oid)
			}
		} else {
			res.Kept += pr.Refs
		}
		res.Runs = append(res.Runs, pr)
	}
	if o.DryRun || del.Len() == 0 {
		return res, nil
	}
	if err := gitStdin(ctx, g.top, del.String(), "update-ref", "--stdin"); err != nil {
		return res, fail(KindFailure, "removing checkpoints: %v", err)
	}
	return res, nil
}

// runState reads a run's state off its directory: run.json, and whether a
// process holds the run's lock.
func runState(dir string) (state, reason string) {
	m, err := readMeta(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return RunUnknown, "no journal at " + dir
	case err != nil:
		return RunUnknown, err.Error()
	}
	lk, err := fsx.LockFile(filepath.Join(dir, "lock"), 20*time.Millisecond)
	if err != nil {
		return RunBusy, "a process is running it now"
	}
	lk.Unlock()
	switch {
	case m.Status == "ended" && !m.Resumable:
		return RunFinished, m.Reason
	case m.Status == "ended":
		return RunResumable, m.Reason
	}
	return RunResumable, "it stopped without ending (killed); --resume goes on"
}

func gitStdin(ctx context.Context, dir, stdin string, args ...string) error {
	cmd := gitCmd(ctx, dir, nil, args...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return nil
}
