package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// completeAgentRuns offers the runs of this directory's fleet (laserbrain
// run's agents), newest first, each with its agent's name.
func completeAgentRuns(f *Factory) cli.CompletionFunc {
	return completeFromFleet(f, func(ctx context.Context, st fleet.Store, fid string) ([]string, error) {
		runs, err := st.ListRuns(ctx, fleet.RunFilter{Fleet: fid})
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(runs))
		for i := len(runs) - 1; i >= 0; i-- {
			out = append(out, runs[i].ID+"\t"+runs[i].Agent)
		}
		return out, nil
	})
}

// completeAuthorizations offers this fleet's authorizations, each with its
// action.
func completeAuthorizations(f *Factory) cli.CompletionFunc {
	return completeFromFleet(f, func(ctx context.Context, st fleet.Store, fid string) ([]string, error) {
		all, err := st.ListAuthorizations(ctx, fid)
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(all))
		for _, a := range all {
			if a.Revoked.IsZero() {
				out = append(out, a.ID+"\t"+a.Action)
			}
		}
		return out, nil
	})
}

// completeFromFleet offers what list reads from this directory's fleet
// store, opened read-only for the one completion.
func completeFromFleet(f *Factory, list func(ctx context.Context, st fleet.Store, fid string) ([]string, error)) cli.CompletionFunc {
	return cli.Dynamic(func(*cobra.Command) ([]string, error) {
		ctx := context.Background()
		st, fid, err := f.FleetOf(ctx, ".", true)
		if err != nil {
			return nil, err
		}
		defer func() { _ = st.Close() }()
		return list(ctx, st, fid)
	})
}

// completeLoopRuns offers the loop runs journaled under the laserbrain
// home, newest first.
var completeLoopRuns = cli.Dynamic(func(*cobra.Command) ([]string, error) {
	paths, err := localstore.DefaultPaths()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(paths.Home, "loop"))
	if err != nil {
		return nil, err
	}
	type run struct {
		id  string
		mod int64
	}
	var runs []run
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() {
			runs = append(runs, run{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].mod > runs[j].mod })
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.id
	}
	return out, nil
})
