// Command aibom is the command line of the AIBOM project: "aibom scan"
// computes, offline, from manifests or from a read-only snapshot of a
// cluster, exactly the CycloneDX documents the controller writes; "aibom
// adapters" and "aibom version" describe the binary; "aibom export" writes
// the documents the cluster's AIBOMs hold (internal/export). The logic lives in
// internal/scan.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/aibom-dev/aibom/internal/scan"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if len(os.Args) > 1 && os.Args[1] == "export" {
		code = runExport(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else {
		code = scan.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	stop()
	os.Exit(code)
}
