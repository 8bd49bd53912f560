package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// CompletionFunc completes a flag's value or an argument.
type CompletionFunc = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// Values completes from a fixed list ("value" or "value\tdescription"),
// never with file names.
func Values(values ...string) CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Dynamic completes from what list returns when it is asked (run ids,
// session slugs), never with file names; a list that fails offers nothing.
func Dynamic(list func(cmd *cobra.Command) ([]string, error)) CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		all, err := list(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return Values(all...)(cmd, nil, toComplete)
	}
}

// NoValue offers nothing: free text (a goal, a reason).
func NoValue(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// Files completes file names with one of the extensions (all files
// without any).
func Files(ext ...string) CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		if len(ext) == 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return ext, cobra.ShellCompDirectiveFilterFileExt
	}
}

// Dirs completes directory names.
func Dirs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// CompleteFlag registers fn for cmd's flag name; a flag that does not
// exist is a programming error.
func CompleteFlag(cmd *cobra.Command, name string, fn CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(name, fn); err != nil {
		panic(err)
	}
}

// CompleteFlags registers fn for several flags of cmd.
func CompleteFlags(cmd *cobra.Command, fn CompletionFunc, names ...string) {
	for _, n := range names {
		CompleteFlag(cmd, n, fn)
	}
}
