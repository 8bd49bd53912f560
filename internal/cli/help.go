package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/laserkit/laserkit/internal/editdist"
)

// usageTemplate is cobra's, with the command's exit statuses after its
// flags.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{with laserkitExitStatus .}}

Exit status:
{{.}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

var templateFuncs sync.Once

// GroupMore is the group of the commands every binary has: version,
// completion, help.
const GroupMore = "more"

// AddToGroup adds cmds to root under the help group group.
func AddToGroup(root *cobra.Command, group string, cmds ...*cobra.Command) {
	for _, c := range cmds {
		c.GroupID = group
		root.AddCommand(c)
	}
}

func prepareRoot(root *cobra.Command) {
	templateFuncs.Do(func() { cobra.AddTemplateFunc("laserkitExitStatus", exitStatusHelp) })
	root.SetUsageTemplate(usageTemplate)
	if !hasCommand(root, "exit-codes") {
		root.AddCommand(newExitCodesTopic(root))
	}
	if root.ContainsGroup(GroupMore) {
		root.SetHelpCommandGroupID(GroupMore)
		root.SetCompletionCommandGroupID(GroupMore)
	}
	// cobra's own help and completion commands, made now rather than when
	// they run, so that they document their exit codes like every other.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" && c.RunE == nil && c.Run == nil {
			// `completion bogus` names no shell: refuse it rather than
			// print help and exit 0.
			c.Args = ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return unknownCommand(cmd, args[0])
				}
				return cmd.Help()
			}
		}
		if c.Name() == "help" && c.Run != nil {
			// cobra's help prints "Unknown help topic" and exits 0.
			show := c.Run
			c.Run = nil
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					if found, rest, err := root.Find(args); err != nil || found == nil || len(rest) > 0 {
						parent := root
						if found != nil {
							parent = found
						}
						word := args[len(args)-1]
						if len(rest) > 0 {
							word = rest[0]
						}
						return unknownCommand(parent, word)
					}
				}
				show(cmd, args)
				return nil
			}
		}
		if c.Name() == "help" || c.Name() == "completion" {
			for _, sub := range append([]*cobra.Command{c}, c.Commands()...) {
				if _, ok := sub.Annotations[exitAnnotation]; !ok {
					SetExits(sub, ExitDoc{Code: ExitUsage, When: "an unknown topic or shell"})
				}
			}
		}
	}
}

func hasCommand(c *cobra.Command, name string) bool {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return true
		}
	}
	return false
}

// unknownCommand is the usage error for a word that names no subcommand of
// cmd, with cobra's suggestions.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if cmd.Name() == "completion" {
		// A shell's name is not a typo to correct: say which shells.
		var shells []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				shells = append(shells, c.Name())
			}
		}
		return &UsageError{Err: fmt.Errorf("%s — it completes %s", msg, quoteOr(shells))}
	}
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += " — did you mean " + quoteOr(s) + "?"
	}
	return &UsageError{Err: fmt.Errorf("%s", msg)}
}

// flagError turns a flag mistake into a usage error. A flag that fails on
// a command with subcommands usually follows a mistyped subcommand
// (`laserbrain chek --goal x`): that is reported as the unknown command.
// An unknown flag gets the command's flags that are spelled closest.
//
// A command that has subcommands and also takes words of its own
// (`laserbrain loop SCRIPT`) is not taken for a mistyped subcommand unless
// the word is spelled near one, or the command takes no such words: its
// flag mistake is reported as one.
func flagError(cmd *cobra.Command, err error) error {
	if cmd.HasAvailableSubCommands() {
		if args := cmd.Flags().Args(); len(args) > 0 &&
			(len(cmd.SuggestionsFor(args[0])) > 0 || cmd.ValidateArgs(args[:1]) != nil) {
			return unknownCommand(cmd, args[0])
		}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if s := closestFlags(cmd, name); len(s) > 0 {
			return &UsageError{Err: fmt.Errorf("unknown flag --%s for %q — did you mean %s?", name, cmd.CommandPath(), quoteOr(s))}
		}
		return &UsageError{Err: fmt.Errorf("unknown flag --%s for %q", name, cmd.CommandPath())}
	}
	return &UsageError{Err: err}
}

// flagAsValue reports a flag that took another of cmd's flags as its value
// (`check --run --goal x`: --run read "--goal", and x was left over): the
// value was forgotten, and the error names the flag that lacks it rather
// than what the leftover word became.
func flagAsValue(cmd *cobra.Command) error {
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if bad != nil || f.NoOptDefVal != "" {
			return
		}
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		for _, v := range values {
			if other := flagNamed(cmd, v); other != "" {
				bad = &UsageError{Err: fmt.Errorf("--%s needs a value, and got the flag %s instead: give --%s VALUE", f.Name, other, f.Name)}
				return
			}
		}
	})
	return bad
}

// flagNamed is word as one of cmd's flags ("--goal", "-h"), or "" when
// it names none.
func flagNamed(cmd *cobra.Command, word string) string {
	name, _, _ := strings.Cut(word, "=")
	switch {
	case strings.HasPrefix(name, "--") && len(name) > 2:
		if cmd.Flags().Lookup(name[2:]) != nil {
			return name
		}
	case strings.HasPrefix(name, "-") && len(name) == 2:
		if cmd.Flags().ShorthandLookup(name[1:]) != nil {
			return name
		}
	}
	return ""
}

// closestFlags are cmd's flags within two edits of name, or that name
// starts or ends.
func closestFlags(cmd *cobra.Command, name string) []string {
	var out []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		if editdist.Within(name, f.Name, 3) <= 2 || len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			out = append(out, "--"+f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return out
}

func quoteOr(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
		if strings.HasPrefix(w, "--") {
			q[i] = w
		}
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
