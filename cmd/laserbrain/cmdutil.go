package main

import "github.com/spf13/cobra"

// changedFlags are those of names the call gave, in the order named.
func changedFlags(cmd *cobra.Command, names ...string) []string {
	var out []string
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			out = append(out, n)
		}
	}
	return out
}
