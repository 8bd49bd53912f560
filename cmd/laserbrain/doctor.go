package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/doctor"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type doctorOptions struct {
	IO      *cli.IOStreams
	Tracker func() *agentrun.Tracker

	dir  string
	json bool
}

func newDoctorCmd(f *Factory, runF func(*doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{IO: f.IOStreams, Tracker: f.Tracker}
	cmd := &cobra.Command{
		Use:   "doctor [--dir DIR] [--json]",
		Short: "Check that every agent client here is supervised, and say how to fix what is not",
		Long: `doctor looks at every agent client found on PATH or configured in this
project (--dir, default the current directory) or the user's settings —
claude, codex, gemini, qwen, opencode, cline, copilot — and checks:

  hooks installed       every event laserbrain hooks has its hook
  hooks guarded         a moved binary makes the hook deny, not exit 127
  hook programs exist   the programs the hooks run are there and executable
  gate answers          the installed pre-tool-use hook, run as the client
                        runs it, denies a probe force push in the client's form
  hooks trusted         Codex (asked through codex app-server) trusts them
  MCP server registered our server is there, with the variables it needs
                        (Codex: env_vars; Gemini CLI: past its redaction)
  client sandbox        the client's own protection, as install sets it:
                        Claude Code's permissions.deny for the protected
                        paths; Codex's sandbox_mode (workspace-write, or the
                        user's own choice, named)
  client sandbox (Bash) Claude Code's Bash sandbox in this project, by its
                        settings layers: laserbrain's (install turns it on),
                        the user's own choice, or none; and whether bwrap
                        and socat, which it needs, are on PATH (without
                        them Claude Code runs Bash unconfined)
  client sandbox runs   Codex's own sandbox runs a harmless command
                        (/bin/true) in the mode it will use here; when it
                        cannot, Codex's words, the cause and what to do
  effects contained     whether the client's effects are held with the hooks
                        alone: "binding" (its own sandbox holds its shell's
                        writes) or "words only" (the gate reads commands,
                        not what a program the agent wrote does), and
                        whether laserbrain run's boundary binds here
  versions agree        the programs the hooks run are this laserbrain's build
  agents confined       laserbrain run and loop can confine an agent by the
                        kernel here; when not, what it would hold is named,
                        unprotected
  records witnessed     every authorization and release of this fleet is
                        one the journal witnesses (laserbrain supervise verify)
  store reachable       the store LASERBRAIN_STORE names answers

A client on PATH with laserbrain installed nowhere is a problem too: it
runs unsupervised. Each problem comes with the command that fixes it.
doctor changes nothing (the probe is recorded on no run).`,
		Example: "  laserbrain doctor\n  laserbrain doctor --json\n  laserbrain doctor --dir ~/src/shop",
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runDoctor),
	}
	cmd.Flags().StringVar(&opts.dir, "dir", "", "the project (default: the current directory)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the checks as JSON")
	cli.CompleteFlag(cmd, "dir", cli.Dirs)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitFinding, When: "a problem was found (each is printed with its fix)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "--dir is not a directory"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "this binary's path or the home directory cannot be found"})
	return cmd
}

func runDoctor(opts *doctorOptions) error {
	dir := opts.dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return cli.Usagef("--dir: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return cli.Usagef("--dir %s: not an existing directory", opts.dir)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return cli.Failure(err)
	}
	self, err := selfPath()
	if err != nil {
		return cli.Failure(err)
	}
	text := version.Get("laserbrain").Text()
	_, ver, _ := strings.Cut(text, " ")
	ctx := context.Background()
	r := doctor.Run(ctx, doctor.Options{
		Dir: dir, Home: home, Self: self, Version: ver, Getenv: os.Getenv, Environ: os.Environ(),
		Protect: protectedPaths(self, dir), Credentials: homeCredentials(home),
		Store: func(ctx context.Context) error {
			sup := opts.Tracker()
			defer sup.Close()
			st, err := sup.Fleet()
			if err != nil {
				return err
			}
			_, err = st.AnyHaltInForce(ctx)
			return err
		},
		Confinement: func() ([]string, error) {
			_, rep := confine.Plan(planOptions(self, dir, ""))
			var paths []string
			for _, h := range rep.Held {
				paths = append(paths, h.Path)
			}
			return paths, confine.Check(self)
		},
		Undo: undoUsage,
		Unwitnessed: func(ctx context.Context) ([]string, error) {
			sup := opts.Tracker()
			defer sup.Close()
			st, err := sup.Fleet()
			if err != nil {
				return nil, err
			}
			fid, err := fleet.ID(ctx, dir)
			if err != nil {
				return nil, err
			}
			bad, err := fleet.Unwitnessed(ctx, st, fid)
			if err != nil {
				return nil, err
			}
			// What this machine verified of the journal, held against it.
			mc, err := fleet.CheckMachine(ctx, st, fid)
			return append(bad, mc.Lines(fleet.JournalLocation(st, fid))...), err
		},
	})
	if opts.json {
		if err := cli.WriteJSON(opts.IO.Out, r); err != nil {
			return cli.Failure(err)
		}
	} else {
		printDoctor(opts.IO, r)
	}
	if !r.OK {
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

func printDoctor(streams *cli.IOStreams, r doctor.Report) {
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tCLIENT\tSCOPE\tCHECK\tDETAIL")
	for _, c := range r.Checks {
		mark := "ok"
		if !c.OK {
			mark = "PROBLEM"
		}
		client, scope := string(c.Client), c.Scope
		if client == "" {
			client = "-"
		}
		if scope == "" {
			scope = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, client, scope, c.What, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(tw, "\t\t\t  fix:\t%s\n", c.Fix)
		}
	}
	tw.Flush()
	clients := 0
	for _, c := range r.Checks {
		if c.Client != "" {
			clients++
		}
	}
	switch {
	case clients == 0 && r.OK:
		fmt.Fprintln(streams.Out, "no agent client found on PATH or configured here")
	case r.OK:
		fmt.Fprintln(streams.Out, "every client found is supervised")
	default:
		fmt.Fprintf(streams.Out, "%s found\n", text.Plural(int64(r.Problems), "problem"))
	}
}
