package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

type authorizeOptions struct {
	IO      *cli.IOStreams
	Tracker func() *agentrun.Tracker
	// args are the command to authorize; dashAt is where -- was among
	// the arguments (cobra's ArgsLenAtDash: -1 without one).
	args   []string
	dashAt int

	run, agent, fleetDir string
	write                string
	connect              string
	forDur               time.Duration
	uses                 int
	reason               string
	list, json           bool
	revoke               string
}

func newAuthorizeCmd(f *Factory, runF func(*authorizeOptions) error) *cobra.Command {
	opts := &authorizeOptions{IO: f.IOStreams, Tracker: f.Tracker}
	cmd := &cobra.Command{
		Use:   "authorize [--run ID | --agent NAME] [--for DURATION] [--uses N] [--reason TEXT] (-- COMMAND... | --write PATH | --connect HOST:PORT)",
		Short: "Let an agent take one irreversible or outward action",
		Long: `authorize records a person's permission for one action the gate refuses
without it: a shell command (given after --, matched with its white space
collapsed) or a write into a protected path (--write PATH). It is held as
data in the fleet store: scoped to this fleet (the repository containing
--fleet DIR, default the current directory) and optionally to one run or
one agent, dated, expiring (--for, default 15m), and good for --uses actions
(default 1). The hook looks it up afresh for every action and spends one use
each time it lets one through. It never lets a drifting run act: the drift
and judgment refusals come first.

A command the gate never refuses (ls), a person's command (authorize,
supervise release, install, …) and a write into the supervisor's records
or .ponder/ are refused with exit 2: no authorization would ever be used.
A --for longer than a day is written, with a warning. --revoke of an
authorization revoked already says so and changes nothing.

--list shows the fleet's authorizations with their state (live, spent,
expired, revoked) and the journal's word on each, which is the gate's:
honoured, or ignored with why — a file no journal record witnesses (not
written by laserbrain authorize) or one whose terms changed since.

Under laserbrain run an agent's tree reaches only the endpoints the project
policy allows; --connect HOST:PORT lets it connect to one more, one
connection per use (an attended run's refusal names this command). A
command authorized after -- for a run or an agent is also what laserbrain
act, run inside the boundary, carries out for the agent outside it, once
per use, whether the gate refuses it or not.`,
		Example: `  laserbrain authorize --run 9d14c2e07a11 --reason "release 1.4" -- npm publish
  laserbrain authorize --agent reviewer --for 1h --uses 3 -- git push origin main
  laserbrain authorize --write .claude/settings.json --reason "add a hook"
  laserbrain authorize --run 9d14c2e07a11 --uses 5 --connect api.github.com:443
  laserbrain authorize --list
  laserbrain authorize --revoke 01J9Z2QK3T`,
		Args: cli.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.args, opts.dashAt = args, cmd.ArgsLenAtDash()
			if runF != nil {
				return runF(opts)
			}
			return runAuthorize(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.run, "run", "", "only for this run")
	fl.StringVar(&opts.agent, "agent", "", "only for this agent")
	fl.StringVar(&opts.fleetDir, "fleet", "", "the fleet: the repository containing DIR (default: the current directory)")
	fl.StringVar(&opts.write, "write", "", "authorize writing this protected path instead of a command")
	fl.StringVar(&opts.connect, "connect", "", "authorize connections from inside laserbrain run's boundary to this HOST:PORT (one per use)")
	fl.DurationVar(&opts.forDur, "for", 15*time.Minute, "how long it holds")
	fl.IntVar(&opts.uses, "uses", 1, "how many actions it allows")
	fl.StringVar(&opts.reason, "reason", "", "why (kept with it)")
	fl.BoolVar(&opts.list, "list", false, "list the fleet's authorizations")
	fl.BoolVar(&opts.json, "json", false, "print JSON")
	fl.StringVar(&opts.revoke, "revoke", "", "revoke the authorization with this id")
	cli.CompleteFlag(cmd, "revoke", completeAuthorizations(f))
	cli.CompleteFlag(cmd, "run", completeAgentRuns(f))
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.CompleteFlags(cmd, cli.NoValue, "agent", "reason", "for", "uses")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "nothing to authorize, a bad flag value, or a run or authorization that does not exist"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runAuthorize(opts *authorizeOptions) error {
	if !opts.list {
		if err := personOnly("laserbrain authorize"); err != nil {
			return err
		}
	}
	ctx := context.Background()
	sup := opts.Tracker()
	defer sup.Close()
	st, err := sup.Fleet()
	if err != nil {
		return cli.Failure(err)
	}
	now := time.Now().UTC()
	switch {
	case opts.revoke != "":
		return revokeAuthorization(ctx, opts.IO, st, opts.revoke, now)
	case opts.list:
		return listAuthorizations(ctx, opts.IO, st, opts, now)
	}
	action, err := authorizedAction(opts)
	if err != nil {
		return err
	}
	if opts.uses < 1 {
		return cli.Usagef("--uses must be at least 1")
	}
	if opts.forDur <= 0 {
		return cli.Usagef("--for must be a positive duration, e.g. 15m")
	}
	if opts.forDur > longAuthorization {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain: warning: --for %s: this authorization holds until %s; one meant for an action now is better short (minutes), and --revoke ends it early\n",
			opts.forDur, now.Add(opts.forDur).Format(time.RFC3339))
	}
	fid, err := fleetFlag(ctx, opts.fleetDir)
	if err != nil {
		return err
	}
	if opts.run != "" {
		r, err := st.Run(ctx, opts.run)
		if err != nil { // the store's error names the run
			return storeError(err, "laserbrain runs lists this fleet's runs")
		}
		fid = r.Fleet
	}
	by := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		by = u.Username
	}
	a := fleet.Authorization{ID: fleet.NewID(), Fleet: fid, Run: opts.run, Agent: opts.agent, Action: action,
		Reason: opts.reason, By: by, Created: now, Expires: now.Add(opts.forDur), Uses: opts.uses}
	if err := supervise.Authorize(ctx, st, a); err != nil {
		return cli.Failure(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, a)
	}
	fmt.Fprintf(opts.IO.Out, "authorization %s: %q, %s, until %s\n", a.ID, a.Action, text.Plural(int64(a.Uses), "use"), a.Expires.Format(time.RFC3339))
	return nil
}

// authorizedAction is the action opts authorize, keyed as the gate keys it:
// a connection, a write or a command after --.
func authorizedAction(opts *authorizeOptions) (string, error) {
	switch {
	case opts.write != "" && len(opts.args) > 0, opts.connect != "" && (len(opts.args) > 0 || opts.write != ""):
		return "", cli.Usagef("give one of a command after --, --write PATH or --connect HOST:PORT")
	case opts.connect != "":
		h, port, err := confine.ParseEndpoint(opts.connect)
		if err != nil {
			return "", cli.Usagef("--connect %v", err)
		}
		return connectAction(confine.Endpoint(h, port)), nil
	case opts.write != "":
		abs, err := filepath.Abs(opts.write)
		if err != nil {
			return "", cli.Usagef("--write: %v", err)
		}
		return operator.ActionKey("write " + abs), nil
	case len(opts.args) > 0:
		if opts.dashAt != 0 {
			return "", cli.Usagef("put the command after --: laserbrain authorize [flags] -- %s", strings.Join(opts.args, " "))
		}
		action := operator.CommandKey(opts.args...)
		dir := opts.fleetDir
		if dir == "" {
			dir = "."
		}
		ok, why, err := agentrun.Authorizable(action, dir, policyschema.Validate)
		if err != nil {
			return "", cli.Failure(err)
		}
		if !ok && (opts.run != "" || opts.agent != "") {
			// For an agent's laserbrain act, which carries out outside
			// laserbrain run's boundary only what is authorized, whether
			// the gate refuses it or not.
			if ok, why, err = agentrun.ActAuthorizable(action, dir, policyschema.Validate); err != nil {
				return "", cli.Failure(err)
			}
			if ok {
				fmt.Fprintf(opts.IO.ErrOut, "laserbrain authorize: the gate does not refuse %q on its own; this authorizes laserbrain act to carry it out outside laserbrain run's boundary\n", action)
			}
		}
		if !ok {
			return "", cli.Usagef("nothing authorized: %s", why)
		}
		return action, nil
	}
	return "", cli.Usagef("nothing to authorize: give a command after --, --write PATH or --connect HOST:PORT")
}

// longAuthorization is the --for beyond which authorize warns: an
// authorization is a person's yes to an action about to happen.
const longAuthorization = 24 * time.Hour

// revokeAuthorization ends authorization id now, or says it had ended.
func revokeAuthorization(ctx context.Context, streams *cli.IOStreams, st fleet.Store, id string, now time.Time) error {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return cli.Usagef("--revoke %q: not an authorization id (laserbrain authorize --list shows them)", id)
	}
	all, err := st.ListAuthorizations(ctx, "")
	if err != nil {
		return cli.Failure(err)
	}
	for _, a := range all {
		if a.ID != id {
			continue
		}
		if !a.Revoked.IsZero() {
			fmt.Fprintf(streams.Out, "%s was revoked already, at %s\n", id, a.Revoked.Format(time.RFC3339))
			return nil
		}
		// Revoking only takes away: it is done even when the journal
		// cannot take its record (the gate honours the file's revocation
		// too), and said.
		data, _ := json.Marshal(map[string]string{"id": id})
		jerr := supervise.Journal(ctx, st, a.Fleet, fleet.JournalRecord{At: fleet.JournalTime(now), Kind: fleet.JournalRevoke, Agent: a.Agent,
			Text: "revoked " + id + ": " + a.Action, Data: data})
		if err := st.RevokeAuthorization(ctx, id, now); err != nil {
			return storeError(err, "laserbrain authorize --list shows the fleet's authorizations")
		}
		if jerr != nil {
			fmt.Fprintf(streams.ErrOut, "laserbrain authorize: the revocation is not journaled: %v\n", jerr)
		}
		fmt.Fprintf(streams.Out, "revoked %s\n", id)
		return nil
	}
	return cli.Usagef("authorization %s: not found (laserbrain authorize --list shows the fleet's authorizations)", id)
}

// listedAuthorization is one authorization as authorize --list shows it:
// the record, its state, and the journal's word on it — the gate's own
// decision (fleet.Witness.Standing): a file no journal record witnesses,
// or one changed since, is listed as ignored, never as live.
type listedAuthorization struct {
	fleet.Authorization
	// State is live, spent, expired or revoked, as the record says.
	State string `json:"state"`
	// Witnessed: honoured (the gate spends it while it is live) or ignored.
	Witnessed string `json:"witnessed"`
	// Ignored says why the gate ignores it.
	Ignored string `json:"ignored,omitempty"`
}

func listAuthorizations(ctx context.Context, streams *cli.IOStreams, st fleet.Store, opts *authorizeOptions, now time.Time) error {
	fid, err := fleetFlag(ctx, opts.fleetDir)
	if err != nil {
		return err
	}
	all, err := st.ListAuthorizations(ctx, fid)
	if err != nil {
		return cli.Failure(err)
	}
	w, err := fleet.ReadWitness(ctx, st, fid, nil)
	if err != nil {
		return cli.Failure(fmt.Errorf("reading the fleet's journal, which says which authorizations are honoured: %w", err))
	}
	rows := make([]listedAuthorization, 0, len(all))
	for _, a := range all {
		row := listedAuthorization{Authorization: a, State: "live", Witnessed: "honoured"}
		switch {
		case !a.Revoked.IsZero():
			row.State = "revoked"
		case !now.Before(a.Expires):
			row.State = "expired"
		case len(a.Used) >= a.Uses:
			row.State = "spent"
		}
		if ok, why := w.Standing(a); !ok {
			row.Witnessed, row.Ignored = "ignored", why
		}
		rows = append(rows, row)
	}
	if opts.json {
		return cli.WriteJSON(streams.Out, rows)
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTION\tSCOPE\tUSED\tSTATE\tEXPIRES\tWITNESSED")
	for _, r := range rows {
		scope := "fleet"
		if r.Run != "" {
			scope = "run " + r.Run
		} else if r.Agent != "" {
			scope = "agent " + r.Agent
		}
		witnessed := r.Witnessed
		if r.Ignored != "" {
			witnessed += ": " + r.Ignored
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", r.ID, r.Action, scope, len(r.Used), r.Uses, r.State, r.Expires.Format(time.RFC3339), witnessed)
	}
	return tw.Flush()
}

// fleetFlag is the id of the fleet --fleet DIR names ("" is the current
// directory); one it cannot name is a usage error.
func fleetFlag(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	fid, err := fleet.ID(ctx, dir)
	if err != nil {
		return "", cli.Usagef("--fleet %s: %v", dir, err)
	}
	return fid, nil
}
