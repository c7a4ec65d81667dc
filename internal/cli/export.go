package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/export"
	"github.com/aibom-dev/aibom/internal/scan"
)

func newExportCommand(s Streams) *cobra.Command {
	var (
		o                       export.Options
		kubeconfig, kubeContext string
	)
	cmd := &cobra.Command{
		Use:   "export [flags]",
		Short: "Write the documents the cluster's AIBOMs hold, as stored",
		Long: `export writes the documents the cluster's AIBOMs hold, as the controller
stored them (not recomputed), each checked against its stored SHA-256. A
document held by a sink (over the inline cap) is not in the cluster: export
says where it is.`,
		Example: `  aibom export -n team-a
  aibom export -A --out-dir ./aiboms
  aibom export -n team-a -o cyclonedx-xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Namespace != "" && o.AllNamespaces {
				return fail(ExitUsage, "give -n or --all-namespaces, not both")
			}
			cfg, ctxNS, err := scan.RESTConfig(kubeconfig, kubeContext)
			if err != nil {
				return fail(ExitInput, "kubeconfig: %v", err)
			}
			if o.Namespace == "" && !o.AllNamespaces {
				o.Namespace = ctxNS
			}
			scheme := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				return fail(ExitInput, "%v", err)
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			o.Reader, o.Stdout, o.Stderr = c, s.Out, s.Err
			if _, err := export.Run(cmd.Context(), o); err != nil {
				return fail(ExitInput, "%v", err)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace to export (default: the kubeconfig context's).")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Export every namespace.")
	fs.StringVar(&o.OutDir, "out-dir", "", "Write <namespace>_<aibom>.cdx.json (or .cdx.xml) files into this directory instead of stdout.")
	fs.StringVarP(&o.Format, "output", "o", export.FormatJSON, "Format: json or cyclonedx-xml.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster to read (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
	fs.StringVar(&kubeContext, "context", "", "Kubeconfig context to use.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed(export.FormatJSON, export.FormatXML))
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(&kubeconfig, &kubeContext))
	_ = cmd.MarkFlagDirname("out-dir")
	return cmd
}
