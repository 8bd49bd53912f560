package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
)

// ocaInitTimeout is longer: creating tables may wait on another init.
const ocaInitTimeout = 30 * time.Second

type ocaOptions struct {
	dsn       string
	json      bool
	slug      string
	subject   string
	arguments bool
}

func newOCACmd(a *app) *cobra.Command {
	streams := a.streams
	cmd := &cobra.Command{
		Use:   "oca",
		Short: "Create ponder's tables in an OCA database, and read sessions back out of it",
		Long: `oca works on the OCA PostgreSQL database directly, whatever PONDER_OCA says.
The database is --dsn, else PONDER_OCA_DSN, else ` + oca.DefaultDSN + `.
Exit 3 means the database is unreachable or its schema incomplete.`,
		Example: `  ponder oca init --dsn postgres://ponder@db.internal/oca
  ponder oca sessions
  ponder oca ledger --slug ui-2026-08-24 --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newOCAInitCmd(streams),
		newOCASyncCmd(a),
		ocaQueryCmd(streams, "sessions", "List every ponder session in the database, newest first", false, runSessions),
		ocaQueryCmd(streams, "session", "Print a session's episodic rows in order", true, runTimeline),
		ocaQueryCmd(streams, "ledger", "Print a session's prediction ledger: forecasts, outcomes, surprise", true, runLedger),
		ocaQueryCmd(streams, "self-model", "Score every session's forecasts: held, missed, mean surprise", false, runSelfModel),
		ocaQueryCmd(streams, "perspectives", "Print a session's deliberations pass by pass", true, runPerspectives),
		ocaQueryCmd(streams, "observations", "Print what the loop noticed about itself in a session", true, runObservations),
		ocaQueryCmd(streams, "events", "Print a session's OCA event stream (OCA keeps a day of events)", true, runEvents),
		ocaQueryCmd(streams, "prior", "Print what ponder start would list as Prior pondering for --subject", false, runPrior),
	)
	return cmd
}

func addDSNFlags(cmd *cobra.Command, o *ocaOptions) {
	cmd.Flags().StringVar(&o.dsn, "dsn", "", "OCA connection string (default $PONDER_OCA_DSN, else "+oca.DefaultDSN+")")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	cli.CompleteFlag(cmd, "dsn", cli.NoValue)
}

// ocaExampleArgs are the flags each read-back command's example needs.
var ocaExampleArgs = map[string]string{
	"session": " --slug ui-2026-08-24", "ledger": " --slug ui-2026-08-24", "perspectives": " --slug ui-2026-08-24",
	"observations": " --slug ui-2026-08-24", "events": " --slug ui-2026-08-24", "prior": ` --subject "the UI"`,
}

func (o *ocaOptions) resolvedDSN() string {
	if o.dsn != "" {
		return o.dsn
	}
	return oca.New(oca.Config{}).DSN() // $PONDER_OCA_DSN, read as the bridge reads it
}

func newOCAInitCmd(streams *cli.IOStreams) *cobra.Command {
	o := &ocaOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the part of the OCA schema ponder uses, where it is missing",
		Long: `init creates what ponder needs and the database lacks: the cognitive_event_type
enum (or the labels ponder uses, added to an existing one) and the tables
episodic_memory, hypotheses, deliberations, metacognitive_observations and
cognitive_events, without pgvector. It never drops or alters an existing table,
so it is safe on a real OCA database and safe to run twice. If an existing
table lacks a column ponder writes, it says which and exits 3.`,
		Example: `  ponder oca init
  PONDER_OCA_DSN=postgres://ponder@db.internal/oca ponder oca init --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), ocaInitTimeout)
			defer cancel()
			rep, err := pgstore.InitSchema(ctx, o.resolvedDSN())
			if err != nil && rep.Missing == nil && !rep.CreatedEnum && rep.CreatedTables == nil {
				return cli.Exit(cli.ExitOCA, fmt.Errorf("oca init: %w", err))
			}
			if o.json {
				if jerr := emitJSON(streams.Out, rep); jerr != nil {
					return jerr
				}
			} else {
				printInitReport(streams.Out, rep)
			}
			if err != nil {
				return cli.Exit(cli.ExitOCA, fmt.Errorf("oca init: %w", err))
			}
			return nil
		},
	}
	addDSNFlags(cmd, o)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOCA, When: "the database is unreachable, or an existing table lacks a column ponder writes"})
	return cmd
}

func newOCASyncCmd(a *app) *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "sync [--slug S] [--dsn DSN]",
		Short: "Write the OCA rows a session is missing (the recovery after a lost row)",
		Long: `sync writes into OCA the rows the session's commands would have written had
OCA been there — its start episode, each pass's deliberation and, once judged,
its episode and forecast, the closing and apply episodes, its observations —
and nothing OCA already holds, so running it twice writes nothing twice. It is
what the writing commands name under PONDER_OCA=on when a row was lost after
their local work was done (re-running them would be refused, or start a second
session). A closed session's pending forecasts are expired. It needs OCA
whatever PONDER_OCA says (--dsn, else PONDER_OCA_DSN).`,
		Example: `  ponder oca sync
  ponder oca sync --slug ui-2026-08-24 --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.engWith(func(k string) string {
				switch k {
				case "PONDER_OCA":
					return string(oca.ModeOn) // the rows are the point
				case "PONDER_OCA_DSN":
					if dsn != "" {
						return dsn
					}
				}
				return os.Getenv(k)
			})
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.SyncOCA(a.slug)
			return a.finish(res, err, func(w io.Writer) { printSync(w, res) })
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "OCA connection string (default $PONDER_OCA_DSN, else "+oca.DefaultDSN+")")
	cli.CompleteFlag(cmd, "dsn", cli.NoValue)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no such session (usage); a damaged ledger (stateError)"},
		cli.ExitDoc{Code: cli.ExitOCA, When: "OCA is unreachable, or a write failed (what was written is kept: run it again)"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "a local write failed (disk full, EIO)"})
	return cmd
}

func printSync(w io.Writer, r *ponder.SyncResult) {
	var parts []string
	wr := r.Written
	if wr.Start {
		parts = append(parts, "the start episode")
	}
	add := func(what string, passes []int) {
		if len(passes) > 0 {
			ns := make([]string, len(passes))
			for i, p := range passes {
				ns[i] = strconv.Itoa(p)
			}
			parts = append(parts, what+" of pass "+strings.Join(ns, ", "))
		}
	}
	add("the deliberation", wr.Deliberations)
	add("the resolution", wr.Resolved)
	add("the episode and forecast", wr.Passes)
	if wr.End {
		parts = append(parts, "the closing episode")
	}
	if wr.Apply {
		parts = append(parts, "the apply episode")
	}
	if len(wr.Observations) > 0 {
		parts = append(parts, "observation(s) "+strings.Join(wr.Observations, ", "))
	}
	if len(parts) == 0 {
		fmt.Fprintf(w, "%s: OCA already holds every row of this session; nothing written\n", r.Slug)
	} else {
		fmt.Fprintf(w, "%s: wrote %s\n", r.Slug, strings.Join(parts, "; "))
	}
	if r.ExpiredHypotheses > 0 {
		fmt.Fprintf(w, "%s: expired %d pending forecast(s) of the closed session\n", r.Slug, r.ExpiredHypotheses)
	}
}

func printInitReport(w io.Writer, rep pgstore.InitReport) {
	if rep.CreatedEnum {
		fmt.Fprintln(w, "created enum cognitive_event_type")
	}
	for _, l := range rep.AddedLabels {
		fmt.Fprintf(w, "added enum label %s\n", l)
	}
	for _, t := range rep.CreatedTables {
		fmt.Fprintf(w, "created table %s\n", t)
	}
	if !rep.CreatedEnum && len(rep.AddedLabels) == 0 && len(rep.CreatedTables) == 0 && len(rep.Missing) == 0 {
		fmt.Fprintln(w, "schema already complete; nothing to do")
	}
}

// ocaQuery runs one read-back query against an open store and prints it.
type ocaQuery func(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error

func ocaQueryCmd(streams *cli.IOStreams, name, short string, needsSlug bool, run ocaQuery) *cobra.Command {
	o := &ocaOptions{}
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Long: `oca ` + name + ` reads the OCA database directly (--dsn, else PONDER_OCA_DSN),
whatever PONDER_OCA says, and prints a table, or the rows as JSON with
--json. Exit 3 when the database is unreachable or its schema incomplete.`,
		Example: "  ponder oca " + name + ocaExampleArgs[name] + "\n  ponder oca " + name + ocaExampleArgs[name] + " --json",
		Args:    cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if needsSlug {
				if err := o.resolveSlug(); err != nil {
					return err
				}
			}
			if name == "prior" && o.subject == "" {
				return cli.Usagef("prior needs --subject")
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), oca.CallTimeout)
			s, err := pgstore.OpenStore(ctx, o.resolvedDSN())
			cancel()
			if err != nil {
				return cli.Exit(cli.ExitOCA, fmt.Errorf("oca %s: %w", name, err))
			}
			defer s.Close()
			ctx, cancel = context.WithTimeout(cmd.Context(), oca.CallTimeout)
			defer cancel()
			if err := run(ctx, s, o, streams.Out); err != nil {
				return cli.Exit(cli.ExitOCA, fmt.Errorf("oca %s: %w", name, err))
			}
			return nil
		},
	}
	addDSNFlags(cmd, o)
	if needsSlug {
		cmd.Flags().StringVar(&o.slug, "slug", "", "session slug (default: $PONDER_SLUG, else .ponder/current)")
	}
	switch name {
	case "prior":
		cmd.Flags().StringVar(&o.subject, "subject", "", "the subject a new session would ponder")
		cli.CompleteFlag(cmd, "subject", cli.NoValue)
	case "perspectives":
		cmd.Flags().BoolVar(&o.arguments, "arguments", false, "print the four arguments instead of the confidences")
	}
	if needsSlug {
		cli.CompleteFlag(cmd, "slug", completeSlugs)
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no --slug and no current session, or prior without --subject"},
		cli.ExitDoc{Code: cli.ExitOCA, When: "the database is unreachable or its schema incomplete"})
	return cmd
}

// resolveSlug picks the session as every ponder command does: --slug,
// else PONDER_SLUG, else .ponder/current while only one session is active.
func (o *ocaOptions) resolveSlug() error {
	if o.slug != "" {
		return nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	e := ponder.NewReader(cwd)
	e.Selected = strings.TrimSpace(os.Getenv("PONDER_SLUG"))
	slug, _, err := e.Resolve("")
	if err != nil {
		return cli.Usagef("%v", err)
	}
	o.slug = slug
	return nil
}

var cellEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// ocaTable prints rows under a header, tab-aligned; cells are made single-line.
func ocaTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		for i, c := range r {
			r[i] = cellEscaper.Replace(c)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

const ocaNull = "NULL"

func ocaTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func ocaNum(v *float64) string {
	if v == nil {
		return ocaNull
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func ocaInt(v *int) string {
	if v == nil {
		return ocaNull
	}
	return strconv.Itoa(*v)
}

func ocaStr(v *string) string {
	if v == nil {
		return ocaNull
	}
	return *v
}

func runSessions(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Sessions(ctx)
	return ocaRows(out, o, rows, err, []string{"SLUG", "STARTED", "LAST_TOUCHED", "PASSES", "CONVERGED", "APPLIED"}, func(r pgstore.SessionSummary) []string {
		return []string{r.Slug, ocaTime(r.Started), ocaTime(r.LastTouched), strconv.Itoa(r.Passes),
			strconv.FormatBool(r.Converged), strconv.FormatBool(r.Applied)}
	})
}

func runTimeline(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Timeline(ctx, o.slug)
	return ocaRows(out, o, rows, err, []string{"TIMESTAMP", "EVENT_TYPE", "PREDICTION", "ACTUAL_OUTCOME", "SURPRISE", "CONTENT"}, func(r pgstore.TimelineRow) []string {
		return []string{ocaTime(r.Timestamp), r.EventType, ocaStr(r.Prediction), ocaStr(r.ActualOutcome),
			ocaNum(r.Surprise), r.Content}
	})
}

func runLedger(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Ledger(ctx, o.slug)
	return ocaRows(out, o, rows, err, []string{"MADE_IN_PASS", "ABOUT_PASS", "FORECAST", "CONFIDENCE", "STATUS", "SURPRISE",
		"CONFIDENCE_DELTA", "MODEL_UPDATE"}, func(r pgstore.LedgerRow) []string {
		return []string{ocaInt(r.ForecastMadeInPass), ocaInt(r.AboutPass), ocaNum(r.Forecast),
			ocaNum(&r.Confidence), ocaStr(r.Status), ocaNum(r.Surprise), ocaNum(r.ConfidenceDelta), ocaStr(r.ModelUpdate)}
	})
}

func runSelfModel(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.SelfModel(ctx)
	return ocaRows(out, o, rows, err, []string{"DOMAIN", "HELD", "MISSED", "MEAN_SURPRISE"}, func(r pgstore.SelfModelRow) []string {
		return []string{r.Domain, strconv.Itoa(r.Held), strconv.Itoa(r.Missed), ocaNum(r.MeanSurprise)}
	})
}

func runPerspectives(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Perspectives(ctx, o.slug)
	return ocaRows(out, o, rows, err, []string{"STARTED_AT", "DECISION", "STAKES", "SKEPTIC", "BUILDER", "DREAMER", "EMPATH",
		"VOICES", "RESOLUTION"}, func(r pgstore.PerspectiveRow) []string {
		voices := []string{ocaNum(r.SkepticConfidence), ocaNum(r.BuilderConfidence), ocaNum(r.DreamerConfidence), ocaNum(r.EmpathConfidence)}
		if o.arguments {
			voices = []string{ocaStr(r.SkepticArgument), ocaStr(r.BuilderArgument), ocaStr(r.DreamerArgument), ocaStr(r.EmpathArgument)}
		}
		return append(append([]string{ocaTime(r.StartedAt), r.Decision, ocaStr(r.Stakes)}, voices...),
			strconv.Itoa(r.Voices), ocaStr(r.Resolution))
	})
}

func runObservations(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Observations(ctx, o.slug)
	return ocaRows(out, o, rows, err, []string{"TIMESTAMP", "TYPE", "SEVERITY", "DESCRIPTION", "RECOMMENDED_INTERVENTION",
		"APPLIED", "EVIDENCE"}, func(r pgstore.ObservationRow) []string {
		applied := ocaNull
		if r.InterventionApplied != nil {
			applied = strconv.FormatBool(*r.InterventionApplied)
		}
		return []string{ocaTime(r.Timestamp), r.Type, ocaNum(r.Severity), r.Description, ocaStr(r.Intervention),
			applied, string(r.Evidence)}
	})
}

func runEvents(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.Events(ctx, o.slug)
	return ocaRows(out, o, rows, err, []string{"TIMESTAMP", "EVENT_TYPE", "PRIORITY", "PAYLOAD"}, func(r pgstore.EventRow) []string {
		return []string{ocaTime(r.Timestamp), r.EventType, ocaNum(r.Priority), string(r.Payload)}
	})
}

func runPrior(ctx context.Context, s *pgstore.Store, o *ocaOptions, out io.Writer) error {
	rows, err := s.PriorPondering(ctx, o.subject)
	return ocaRows(out, o, rows, err, []string{"TIMESTAMP", "CONTENT", "ACTUAL_OUTCOME"}, func(r oca.Episode) []string {
		return []string{ocaTime(r.Timestamp), r.Content, ocaStr(r.ActualOutcome)}
	})
}

// ocaRows returns err, or prints rows: as JSON with --json, else as a
// table under header, each row's cells made by cells.
func ocaRows[T any](out io.Writer, o *ocaOptions, rows []T, err error, header []string, cells func(T) []string) error {
	if err != nil || o.json {
		return ocaJSONOr(out, rows, err)
	}
	table := make([][]string, len(rows))
	for i, r := range rows {
		table[i] = cells(r)
	}
	return ocaTable(out, header, table)
}

// ocaJSONOr returns err, or prints rows as JSON ([] for no rows).
func ocaJSONOr(out io.Writer, rows any, err error) error {
	if err != nil {
		return err
	}
	if v := reflect.ValueOf(rows); v.Kind() == reflect.Slice && v.IsNil() {
		rows = reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	return emitJSON(out, rows)
}
