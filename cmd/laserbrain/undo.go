package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
	"github.com/laserkit/laserkit/supercode/undo"
)

type undoOptions struct {
	IO *cli.IOStreams
	// Store is where the checkpoints live (the laserbrain home's).
	Store func() (*undo.Store, error)

	run   string
	last  bool
	to    string
	list  bool
	force bool
	json  bool
}

func newUndoCmd(f *Factory, runF func(*undoOptions) error) *cobra.Command {
	opts := &undoOptions{IO: f.IOStreams, Store: undo.Default}
	cmd := &cobra.Command{
		Use:   "undo [--run RUN] (--last | --to CALL | --list) [--force]",
		Short: "Go back to before an agent's call: files, named data, refs and stash, byte for byte",
		Long: `undo goes back to a checkpoint of an agent's run. The hooks take one before
every call that may write (anything but a read), whatever the gate answered,
and laserbrain run one at the start and the end of the run. Each records the
work tree — tracked files with their uncommitted changes, untracked files that
are not ignored — the ignored data the project policy names
(.laserbrain/policy.json "undo": {"include": ["data/app.db"]}), the staged
changes, and the repository's refs, HEAD and stash list, in a store of its
own in the laserbrain home that nothing done to the repository can prune.

  --list    each checkpoint of the run: the call it stands before and what
            that call changed (files added, modified, deleted; refs moved;
            named data changed; the stash; the staged changes), with the
            command that undoes it
  --last    back to before the last call that changed something
  --to CALL back to before the call (its id as --list shows it, or #N)

An undo brings back the files, the named data, the staged changes, the refs,
HEAD and the stash list byte for byte, and removes what the call added. It
refuses when the run has not ended or the work tree changed since it did
(undoing would throw that away too), unless --force. An undo is recorded like
a call: undo --last again takes it back.

--run defaults to the run of this work tree whose checkpoint is the newest.
undo (but --list) is a person's command: an agent cannot run it.`,
		Example: `  laserbrain undo --list
  laserbrain undo --run 3f1c9a2b7d0e --last
  laserbrain undo --run 3f1c9a2b7d0e --to toolu_01ABC
  laserbrain undo prune --keep 5`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{opts.last, opts.to != "", opts.list} {
				if set {
					n++
				}
			}
			if n != 1 {
				return cli.Usagef("say which: --last, --to CALL or --list")
			}
			if runF != nil {
				return runF(opts)
			}
			return runUndo(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.run, "run", "", "the run (default: this work tree's newest)")
	cmd.Flags().BoolVar(&opts.last, "last", false, "go back to before the last call that changed something")
	cmd.Flags().StringVar(&opts.to, "to", "", "go back to before this call (its id, or #N)")
	cmd.Flags().BoolVar(&opts.list, "list", false, "list the run's checkpoints and what each call changed")
	cmd.Flags().BoolVar(&opts.force, "force", false, "undo even when the run has not ended or the work tree changed since")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the list or the result as JSON")
	cli.CompleteFlags(cmd, cli.NoValue, "run", "to")
	cmd.AddCommand(newUndoPruneCmd(f, nil))
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "no such run or call; the run has not ended or its work tree changed since (without --force); an agent ran it; nothing was changed"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the store or git failed"})
	return cmd
}

func runUndo(ctx context.Context, opts *undoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !opts.list {
		if err := personOnly("laserbrain undo"); err != nil {
			return err
		}
	}
	st, err := opts.Store()
	if err != nil {
		return err
	}
	run := opts.run
	if run == "" {
		if run, err = newestRun(st); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain undo: run %s (this work tree's newest; --run to choose)\n", run)
	}
	recs, err := st.Records(run)
	if errors.Is(err, undo.ErrNoCheckpoints) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return cli.Failure(err)
	}
	if opts.list {
		return listUndo(ctx, opts, st, run, recs)
	}
	i, err := undo.Select(recs, opts.to)
	if err != nil {
		return cli.Usagef("run %s: %v", run, err)
	}
	what := "laserbrain undo --run " + run + " --to " + undo.CallName(recs[i])
	res, err := st.Undo(ctx, undo.UndoInput{Run: run, To: i, Force: opts.force, What: what})
	var ce *undo.ChangedError
	if errors.As(err, &ce) {
		return cli.Usagef("%v; nothing was changed (--force to undo anyway; laserbrain undo --list shows the checkpoints)", err)
	}
	if err != nil {
		return cli.Failure(err)
	}
	return printUndone(opts, run, recs[i], res)
}

// printUndone says what an undo did and how to take it back.
func printUndone(opts *undoOptions, run string, target undo.Record, res undo.UndoResult) error {
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, struct {
			Run     string      `json:"run"`
			To      undo.Record `json:"to"`
			Changed undo.Change `json:"changed"`
			Differs string      `json:"differs,omitempty"`
			Again   string      `json:"undo_this"`
		}{run, target, res.Change, res.Differs, "laserbrain undo --run " + run + " --last"})
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "undone: back to before %s (checkpoint #%d of run %s, %s)\n", stoodBefore(target), target.Seq, run, target.At.Local().Format(time.DateTime))
	fmt.Fprintf(w, "changed: %s\n", res.Change.Summary())
	fmt.Fprintf(w, "to take this undo back: laserbrain undo --run %s --last\n", run)
	if res.Differs != "" {
		return cli.Failure(fmt.Errorf("the work tree still differs from the checkpoint: %s", res.Differs))
	}
	return nil
}

// stoodBefore names what a checkpoint stands before.
func stoodBefore(r undo.Record) string {
	switch r.Kind {
	case undo.KindStart:
		return "the run's first call"
	case undo.KindEnd:
		return "the end of the run"
	case undo.KindUndo:
		return "an undo (" + text.Clip(text.OneLine(r.What), 60) + ")"
	}
	s := "call " + undo.CallName(r)
	if r.Tool != "" {
		s += " (" + r.Tool
		if r.What != "" {
			s += ": " + text.Clip(text.OneLine(r.What), 60)
		}
		s += ")"
	}
	return s
}

// undoRow is one checkpoint as undo --list shows it.
type undoRow struct {
	Seq    int         `json:"seq"`
	Kind   undo.Kind   `json:"kind"`
	At     time.Time   `json:"at"`
	Call   string      `json:"call,omitempty"`
	Tool   string      `json:"tool,omitempty"`
	What   string      `json:"what,omitempty"`
	Repo   string      `json:"repo"`
	Change undo.Change `json:"changed"`
	Undo   string      `json:"undo,omitempty"`
	Note   string      `json:"note,omitempty"`
}

func listUndo(ctx context.Context, opts *undoOptions, st *undo.Store, run string, recs []undo.Record) error {
	rows := make([]undoRow, len(recs))
	for i, r := range recs {
		ch, err := st.Changes(ctx, recs, i)
		if err != nil {
			return cli.Failure(err)
		}
		rows[i] = undoRow{Seq: r.Seq, Kind: r.Kind, At: r.At, Call: r.Call, Tool: r.Tool, What: r.What, Repo: r.Repo, Change: ch, Note: r.Note}
		if !ch.Empty() && r.Kind != undo.KindEnd {
			rows[i].Undo = undo.Command(run, r)
		}
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, rows)
	}
	fmt.Fprintf(opts.IO.Out, "run %s, %s: %d checkpoints\n", run, recs[0].Repo, len(recs))
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tAT\tBEFORE\tCHANGED\tUNDO")
	for _, r := range rows {
		before := stoodBefore(recs[r.Seq-1])
		changed := r.Change.Summary()
		if r.Kind == undo.KindEnd {
			changed = "-"
		}
		undoCmd := r.Undo
		if undoCmd == "" {
			undoCmd = "-"
		}
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s\n", r.Seq, r.At.Local().Format(time.TimeOnly), before, changed, undoCmd)
	}
	return tw.Flush()
}

// newestRun is the run whose newest checkpoint is of the work tree this
// command runs in.
func newestRun(st *undo.Store) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", cli.Failure(err)
	}
	repo, err := undo.FindRepo(cwd)
	if err != nil {
		return "", cli.Usagef("no --run, and %v: say which run (laserbrain runs lists them)", err)
	}
	runs, err := st.Runs()
	if err != nil {
		return "", cli.Failure(err)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Last.At.After(runs[j].Last.At) })
	for _, r := range runs {
		if r.Last.Repo == repo.Top {
			return r.Run, nil
		}
	}
	return "", cli.Usagef("no run has checkpoints of %s in %s: say which run with --run", repo.Top, filepath.Dir(st.Dir))
}

type undoPruneOptions struct {
	IO    *cli.IOStreams
	Store func() (*undo.Store, error)

	keep   int
	age    time.Duration
	dryRun bool
}

func newUndoPruneCmd(f *Factory, runF func(*undoPruneOptions) error) *cobra.Command {
	opts := &undoPruneOptions{IO: f.IOStreams, Store: undo.Default}
	cmd := &cobra.Command{
		Use:   "prune [--keep N] [--older-than D] [--dry-run]",
		Short: "Remove the checkpoints of old runs, and what only they needed",
		Long: `prune keeps the checkpoints of the newest --keep runs of each work tree
(default 20) and removes the rest, and those of any run whose last checkpoint
is older than --older-than (default 720h, 30 days; 0: no bound by age); then
the objects, ref sets and stash lists no kept checkpoint needs. A run that has
not ended is kept until it is older than --older-than. laserbrain run prunes
its work tree at its start with the project policy's bounds (undo.keep_runs,
undo.keep_days). laserbrain doctor shows what the checkpoints take on disk.`,
		Example: `  laserbrain undo prune --dry-run
  laserbrain undo prune --keep 5 --older-than 168h`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.keep < 1 || opts.age < 0 {
				return cli.Usagef("--keep must be at least 1 and --older-than not negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return runUndoPrune(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.keep, "keep", undo.DefaultKeepRuns, "runs whose checkpoints are kept, per work tree")
	cmd.Flags().DurationVar(&opts.age, "older-than", undo.DefaultKeepDays*24*time.Hour, "remove the checkpoints of runs older than this (0: no bound)")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "say what would be removed, removing nothing")
	cli.CompleteFlags(cmd, cli.NoValue, "keep", "older-than")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runUndoPrune(ctx context.Context, opts *undoPruneOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !opts.dryRun {
		if err := personOnly("laserbrain undo prune"); err != nil {
			return err
		}
	}
	st, err := opts.Store()
	if err != nil {
		return err
	}
	res, err := st.Prune(ctx, undo.PruneInput{KeepRuns: opts.keep, MaxAge: opts.age, DryRun: opts.dryRun})
	if err != nil {
		return cli.Failure(err)
	}
	verb := "removed"
	if opts.dryRun {
		verb = "would remove"
	}
	for _, r := range res.Removed {
		fmt.Fprintf(opts.IO.Out, "%s run %s (%d checkpoints of %s, the last %s)\n", verb, r.Run, r.Count, r.Last.Repo, r.Last.At.Local().Format(time.DateTime))
	}
	fmt.Fprintf(opts.IO.Out, "%s the checkpoints of %s, kept %d", verb, text.Plural(len(res.Removed), "run"), res.Kept)
	if !opts.dryRun {
		fmt.Fprintf(opts.IO.Out, ", %s freed", undo.SizeText(res.Freed))
	}
	fmt.Fprintln(opts.IO.Out)
	return nil
}

// runCheckpoint is laserbrain run's undo checkpoints, taken in the
// supervisor, outside the agent's boundary: at the start, before the agent
// runs (after pruning the work tree's old checkpoints to the project
// policy's bounds; a work tree's first checkpoint copies it whole, so the
// agent's hooks then pay only for what changes), and at the end, where
// a loss of the agent's last call is recorded on the run. From the start
// to the end this process watches the work tree (undo.Watch), so the
// checkpoints of the agent's hooks, which this process answers, read only
// what changed. A checkpoint that cannot be taken is said on w; the run
// goes on.
func runCheckpoint(w io.Writer, sup *agentrun.Tracker) func(context.Context, fleet.Run, bool) {
	var watch *undo.Watch
	return func(ctx context.Context, r fleet.Run, end bool) {
		if undo.Off(os.Getenv) {
			return
		}
		st, err := undo.Default()
		if err != nil {
			fmt.Fprintf(w, "laserbrain run: no undo checkpoints: %v\n", err)
			return
		}
		if !end && watch == nil {
			// Without it every checkpoint compares the whole tree.
			watch, _ = st.Watch(r.Dir)
		} else if end && watch != nil {
			defer watch.Close()
		}
		pol, _ := agentrun.LoadPolicy(r.Dir, policyschema.Validate)
		set := undo.SettingsOf(pol.Undo)
		in := undo.Input{Run: r.ID, Kind: undo.KindStart, Include: set.Include}
		if end {
			in.Kind = undo.KindEnd
		} else if repo, err := undo.FindRepo(r.Dir); err == nil {
			if _, err := st.Prune(ctx, undo.PruneInput{KeepRuns: set.KeepRuns, MaxAge: time.Duration(set.KeepDays) * 24 * time.Hour, Only: repo.Top}); err != nil {
				fmt.Fprintf(w, "laserbrain run: pruning old undo checkpoints: %v\n", err)
			}
		}
		got, err := st.Capture(ctx, r.Dir, in)
		if errors.Is(err, undo.ErrNoRepo) {
			return
		}
		if err != nil {
			fmt.Fprintf(w, "laserbrain run: no undo checkpoint at the run's %s: %v\n", in.Kind, err)
			return
		}
		if !end || got.Record.Changed == nil {
			return
		}
		if loss, lost := set.Loss(*got.Record.Changed); lost {
			c := agentrun.Caller{Run: r.ID, Agent: r.Agent, Dir: r.Dir}
			if err := hook.RecordLoss(ctx, sup, c, r.ID, got.Before, *got.Record.Changed, loss); err != nil {
				fmt.Fprintf(w, "laserbrain run: the loss of the last call could not be recorded on the run: %v\n", err)
			}
		}
	}
}

// undoUsage is what the undo checkpoints take on disk, for doctor.
func undoUsage() (string, error) {
	st, err := undo.Default()
	if err != nil {
		return "", err
	}
	u, err := st.DiskUsage()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s of checkpoints of %s of %s in %s (bounded by laserbrain undo prune; laserbrain run prunes its work tree at its start)",
		undo.SizeText(u.Bytes), text.Plural(u.Runs, "run"), text.Plural(u.Repos, "work tree"), st.Dir), nil
}
