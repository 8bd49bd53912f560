package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/broker"
)

// relayed hands the command to the supervisor's broker when this process
// runs inside a confined agent (supercode/broker.EnvSocket is set): the
// store's records are read-only in here, and the broker records them
// outside, on the agent's own run. handled is false outside a confined
// run. argv is the operation (the subcommand and the flags given).
func relayed(cmd *cobra.Command, streams *cli.IOStreams, name string) (handled bool, err error) {
	sock := os.Getenv(broker.EnvSocket)
	if sock == "" {
		return false, nil
	}
	argv := []string{name}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		argv = append(argv, "--"+f.Name+"="+f.Value.String())
	})
	ctx := context.Background()
	dir, _ := os.Getwd()
	code, err := broker.Relay(ctx, sock, argv, os.Getenv, dir, streams.In, streams.Out, streams.ErrOut)
	if err != nil {
		return true, cli.Failure(err)
	}
	if code != 0 {
		return true, cli.PassThrough(code)
	}
	return true, nil
}
