// Command flotilla joins Kubernetes clusters to a Flotilla hub and manages
// them; see package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/flotilla-io/flotilla/cli"
)

func main() {
	// Packages linked in may register flags on the global flag set, which
	// cobra would merge into ours.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.StdStreams(), os.Args[1:])
	stop()
	os.Exit(code)
}
