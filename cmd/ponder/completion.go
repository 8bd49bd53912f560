package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

// completeSlugs offers the sessions under .ponder/, newest first, each
// with its status and subject. It reads the files only: no OCA.
var completeSlugs = cli.Dynamic(func(*cobra.Command) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	res, err := ponder.New(ponder.FindRoot(cwd), nil).List()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res.Sessions))
	for _, s := range res.Sessions {
		out = append(out, s.Slug+"\t"+s.Status+": "+ponder.Printable(s.Subject))
	}
	return out, nil
})

// completeUnits offers the current session's unit ids, each with its path.
var completeUnits = cli.Dynamic(func(cmd *cobra.Command) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	slug, _ := cmd.Flags().GetString("slug")
	res, err := ponder.New(ponder.FindRoot(cwd), nil).UnitList(slug)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range res.Units {
		if !u.Deleted {
			out = append(out, u.ID+"\t"+ponder.Printable(u.Path))
		}
	}
	return out, nil
})
