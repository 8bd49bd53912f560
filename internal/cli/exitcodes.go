package cli

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// exitCode is an exit status of laserbrain, laserbrain-gate or ponder, as
// the table below gives it. It is this package's own: a command returns an
// error, CodeOf (the one place) chooses its code, and only a binary's main
// hands it to os.Exit. Libraries declare no numbers: their typed errors
// name their kind (ExitKind), and the table says its code.
type exitCode int

// The project's exit codes. One number means one thing in every command of
// both binaries; a number a domain gave its own meaning before this map
// existed (ponder's 3, the loop's 3 to 8, laserbrain run's 125 to 127)
// keeps it, scoped to the commands that return it. ExitCodes is the table
// `help exit-codes` prints.
const (
	ExitOK      exitCode = 0
	ExitFinding exitCode = 1 // the command worked; the answer is the one the caller asked to be told about
	ExitUsage   exitCode = 2 // the call could not be acted on; nothing changed
	ExitFailure exitCode = 8 // a store, file system, database or journal failed

	ExitOCA         exitCode = 3  // ponder: PONDER_OCA=on and OCA unusable
	ExitEscalated   exitCode = 3  // laserbrain loop
	ExitExhausted   exitCode = 4  // laserbrain loop, laserbrain run
	ExitTransport   exitCode = 5  // laserbrain loop
	ExitMalformed   exitCode = 6  // laserbrain loop
	ExitConfig      exitCode = 7  // laserbrain loop
	ExitAnswered    exitCode = 86 // laserbrain hook pre-tool-use, laserbrain-gate: --ok-status 86, the call goes on
	ExitSetup       exitCode = 125
	ExitNotRunnable exitCode = 126 // found, but not run: laserbrain run's COMMAND, or a command the gate refused in the loop's SCRIPT
	ExitNotFound    exitCode = 127
	ExitSignal      exitCode = 128 // 128+N: stopped by signal N

	// ExitPassThrough documents a command that exits with another
	// program's status (laserbrain run: the agent's; loop: SCRIPT's).
	ExitPassThrough exitCode = -1
)

// ExitCode is one row of the project's exit-code table.
type ExitCode struct {
	Code    exitCode
	Name    string
	Scope   string // "" for every command; else the binary or commands it is limited to
	Meaning string
	// Also are the kinds of error (ExitKind) that take this row's code
	// besides its Name: ponder's own names for them.
	Also []string
}

// ExitCodes is the table, by code.
var ExitCodes = []ExitCode{
	{ExitOK, "ok", "", "the command did what was asked", nil},
	{ExitFinding, "finding", "", "the command worked, and its answer is the one the caller asked to be told about: a drifting state (check), a command that needs authorization (classify), lint findings, failing vectors, a grammar or a journal that does not verify, an escalation not delivered (supervise), a store that cannot be used now (store status), problems (ponder doctor, laserbrain doctor)", []string{"problems"}},
	{ExitUsage, "usage", "", "the call could not be acted on, and nothing was changed: an unknown command or flag, a value out of range, an input file missing or unreadable, a run or session that does not exist; in ponder also a command the session's state refuses (stateError)", []string{"stateError"}},
	{ExitUsage, "deny", "laserbrain hook pre-tool-use, laserbrain-gate", "the tool call is blocked and the reason goes to the model; without --ok-status these exit only 0 or 2, as Claude Code treats any other status as not blocking", nil},
	{ExitAnswered, "answered", "laserbrain hook pre-tool-use, laserbrain-gate", "with --ok-status 86, as install writes the hook command: the tool call goes on (the installed command takes only this status for an answer, so a program put in the gate's place denies)", nil},
	{ExitOCA, "ocaRequired", "ponder", "PONDER_OCA=on and OCA is unusable (nothing was written), or an OCA write failed after the local work was done", nil},
	{ExitEscalated, "escalated", "laserbrain loop", "an agent or judge escalated to a person", nil},
	{ExitExhausted, "exhausted", "laserbrain loop", "--max-iters, --budget or --timeout ran out, or two agent calls in a row changed nothing (resumable)", nil},
	{ExitExhausted, "exhausted", "laserbrain run", "a runaway limit stopped the agent: --timeout, --max-tool-calls, --max-checks-off-ground or --halt-on-loss (journaled on the run, named in the summary)", nil},
	{ExitTransport, "transport", "laserbrain loop", "a service failed, could not start, or crashed (the reference loop passes a builtin's 5, 6 and 7 on as they are)", nil},
	{ExitMalformed, "malformed", "laserbrain loop", "a judge gave no valid verdict after the one bounce allowed", nil},
	{ExitConfig, "config", "laserbrain loop", "agents.conf or SCRIPT is invalid; a service unknown, disabled, or its program not found; ./ci missing or not executable; a --resume that cannot go on", nil},
	{ExitFailure, "failure", "", "the command could not finish for a reason outside the call: a store, the file system, a database, the loop's journal or a checkpoint failed", nil},
	{ExitSetup, "setup", "laserbrain run", "the run could not be set up; the agent did not start", nil},
	{ExitNotRunnable, "not-runnable", "laserbrain run", "COMMAND exists but could not be started", nil},
	{ExitNotRunnable, "refused", "laserbrain loop", "a command SCRIPT ran was refused by the operator gate (SCRIPT sees the status and may pass it on)", nil},
	{ExitNotRunnable, "refused", "laserbrain act", "neither the project policy nor a person's authorization allows exactly this command; nothing ran", nil},
	{ExitNotFound, "not-found", "laserbrain run, laserbrain act", "COMMAND was not found", nil},
	{ExitSignal, "signal", "laserbrain run, laserbrain loop, laserbrain act", "128+N: stopped by signal N (130 SIGINT, 143 SIGTERM)", nil},
}

// codeOfKind is the code of an error of the named kind: the row it names,
// or lists in Also.
func codeOfKind(kind string) (exitCode, bool) {
	for _, e := range ExitCodes {
		if e.Name == kind || slices.Contains(e.Also, kind) {
			return e.Code, true
		}
	}
	return 0, false
}

// ExitName is the table's name for code as the named command returns it
// ("" when the table has no such code).
func ExitName(code exitCode, commandPath string) string {
	e := entry(code, commandPath)
	if e.Name == "" && code > ExitSignal && code < ExitSignal+65 {
		return "signal"
	}
	return e.Name
}

// entry is the table's row for code as the named command returns it: the
// row scoped to the command, else the general one (the zero row: none).
func entry(code exitCode, commandPath string) ExitCode {
	var general ExitCode
	for _, e := range ExitCodes {
		if e.Code != code {
			continue
		}
		if e.Scope == "" {
			general = e
		} else if inScope(e.Scope, commandPath) {
			return e
		}
	}
	return general
}

// inScope reports whether a scope ("ponder", "laserbrain loop, ...")
// covers the command path.
func inScope(scope, path string) bool {
	for _, s := range strings.Split(scope, ", ") {
		if path == s || strings.HasPrefix(path, s+" ") {
			return true
		}
	}
	return false
}

// ExitDoc is one exit status a command documents: its code and, where the
// table's meaning is general, what it means for this command.
type ExitDoc struct {
	Code exitCode
	When string // "" for the table's meaning
}

const exitAnnotation = "laserkit:exit-codes"

// SetExits records the exit statuses cmd returns besides 0; its help
// prints them, and the binaries' tests hold cmd to them.
func SetExits(cmd *cobra.Command, docs ...ExitDoc) {
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "%d\t%s\n", d.Code, d.When)
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[exitAnnotation] = b.String()
}

// Exits returns what cmd documents, 0 first, and 2 for a flag or argument
// mistake unless cmd says more about it; nil when it documents none.
func Exits(cmd *cobra.Command) []ExitDoc {
	raw, ok := cmd.Annotations[exitAnnotation]
	if !ok {
		return nil
	}
	if !strings.HasPrefix(raw, "2\t") && !strings.Contains(raw, "\n2\t") {
		raw += "2\ta flag or argument mistake\n"
	}
	docs := []ExitDoc{{Code: ExitOK}}
	for _, line := range strings.Split(strings.TrimSuffix(raw, "\n"), "\n") {
		if line == "" {
			continue
		}
		code, when, _ := strings.Cut(line, "\t")
		n, _ := strconv.Atoi(code)
		if exitCode(n) == ExitOK {
			docs[0].When = when
			continue
		}
		docs = append(docs, ExitDoc{Code: exitCode(n), When: when})
	}
	sort.SliceStable(docs, func(i, j int) bool { return sortKey(docs[i].Code) < sortKey(docs[j].Code) })
	return docs
}

// sortKey puts "any" (a pass-through) after every number.
func sortKey(code exitCode) int {
	if code == ExitPassThrough {
		return 1 << 30
	}
	return int(code)
}

// Documents reports whether cmd documents code (a pass-through command
// documents every code).
func Documents(cmd *cobra.Command, status int) bool {
	code := exitCode(status)
	for _, d := range Exits(cmd) {
		if d.Code == code || d.Code == ExitPassThrough ||
			d.Code == ExitSignal && code > ExitSignal && code < ExitSignal+65 {
			return true
		}
	}
	return false
}

// meaning is the table's meaning of code for the command path.
func meaning(code exitCode, path string) string { return entry(code, path).Meaning }

// exitStatusHelp renders cmd's exit statuses for its help ("" for none).
func exitStatusHelp(cmd *cobra.Command) string {
	docs := Exits(cmd)
	if docs == nil {
		return ""
	}
	var b strings.Builder
	for _, d := range docs {
		code := strconv.Itoa(int(d.Code))
		switch d.Code {
		case ExitPassThrough:
			code = "any"
		case ExitSignal:
			code = "128+N"
		}
		when := d.When
		if when == "" {
			when = meaning(d.Code, cmd.CommandPath())
		}
		fmt.Fprintf(&b, "  %-5s %s\n", code, when)
	}
	fmt.Fprintf(&b, "  (%s help exit-codes: the table both binaries share)", cmd.Root().Name())
	return b.String()
}

// exitCodesTable renders the table for `help exit-codes`, with the
// commands of this binary that return each code.
func exitCodesTable(root *cobra.Command) string {
	users := map[exitCode][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, d := range Exits(c) {
			if d.Code != ExitOK && d.Code != ExitUsage && d.Code != ExitFailure && d.Code != ExitPassThrough {
				users[d.Code] = append(users[d.Code], strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	var b strings.Builder
	b.WriteString(`Exit codes of laserbrain, laserbrain-gate and ponder: one table, one
meaning for each number. A number some commands gave a meaning of their own
before the table existed keeps it, in those commands only (the scope).
Each command's help lists the codes it returns.

`)
	for _, e := range ExitCodes {
		code := strconv.Itoa(int(e.Code))
		if e.Code == ExitSignal {
			code = "128+N"
		}
		fmt.Fprintf(&b, "%-6s %s", code, e.Name)
		if e.Scope != "" {
			fmt.Fprintf(&b, " (%s)", e.Scope)
		}
		b.WriteString("\n")
		b.WriteString(indentWrap(e.Meaning, "       ", 78))
		if e.Scope == "" {
			if cmds := users[e.Code]; len(cmds) > 0 {
				sort.Strings(cmds)
				b.WriteString(indentWrap(root.Name()+": "+strings.Join(cmds, ", "), "       ", 78))
			}
		}
	}
	b.WriteString(`
laserbrain run and laserbrain loop otherwise exit with the status of the
program they ran: the agent's, or SCRIPT's.
`)
	return b.String()
}

// indentWrap wraps text at width, each line indented.
func indentWrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// newExitCodesTopic is `help exit-codes`: a help topic (not a command).
func newExitCodesTopic(root *cobra.Command) *cobra.Command {
	topic := &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes both binaries share, and what each means",
	}
	topic.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), exitCodesTable(root))
	})
	SetExits(topic)
	return topic
}
