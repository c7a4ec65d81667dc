package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/export"
	"github.com/aibom-dev/aibom/internal/scan"
)

const exportUsage = `Usage: aibom export [-n NAMESPACE | -A] [--out-dir DIR] [-o json|cyclonedx-xml] [--kubeconfig FILE] [--context NAME]

Writes the documents the cluster's AIBOMs hold, as stored (not recomputed),
each checked against its stored SHA-256. A document held by a sink (over the
inline cap) is not in the cluster: export says where it is.

`

// runExport is "aibom export" (internal/export); a thin flag layer, to be
// ported with the rest of the command line.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o export.Options
	var kubeconfig, kubeContext string
	fs.StringVar(&o.Namespace, "n", "", "Namespace (default: the kubeconfig context's).")
	fs.BoolVar(&o.AllNamespaces, "A", false, "Every namespace.")
	fs.StringVar(&o.OutDir, "out-dir", "", "Directory to write <namespace>_<aibom>.cdx.json (or .cdx.xml) into; default: stdout.")
	fs.StringVar(&o.Format, "o", export.FormatJSON, "Format: json or cyclonedx-xml.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
	fs.StringVar(&kubeContext, "context", "", "Kubeconfig context.")
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	cfg, ctxNS, err := scan.RESTConfig(kubeconfig, kubeContext)
	if err != nil {
		fmt.Fprintln(stderr, "aibom export: kubeconfig:", err)
		return 2
	}
	if o.Namespace == "" && !o.AllNamespaces {
		o.Namespace = ctxNS
	}
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(stderr, "aibom export:", err)
		return 1
	}
	o.Reader, o.Stdout, o.Stderr = c, stdout, stderr
	if _, err := export.Run(ctx, o); err != nil {
		fmt.Fprintln(stderr, "aibom export:", err)
		return 1
	}
	return 0
}
