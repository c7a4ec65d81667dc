// Command aibom is the command line of the AIBOM project: "aibom scan"
// computes, offline, from manifests or from a read-only snapshot of a
// cluster, exactly the CycloneDX documents the controller writes; "aibom
// tree" shows the ownership forest behind them; "aibom diff" compares two
// sets of documents; "aibom adapters" and "aibom version" describe the
// binary. The command line lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/aibom-dev/aibom/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
