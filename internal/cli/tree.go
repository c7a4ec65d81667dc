package cli

import (
	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/internal/tree"
)

type treeFlags struct {
	input    inputFlags
	adapters adapterFlags
	output   string
	report   string
}

func newTreeCommand(s Streams) *cobra.Command {
	var f treeFlags
	cmd := &cobra.Command{
		Use:   "tree [PATH ...] [flags]",
		Short: "Show the ownership forest behind each document",
		Long: `tree shows the roll-up: every root workload with, under it, what its
document covers, as the ownership forest the controller walks (controller
ownerReferences, checked by UID): the tracked workloads it absorbed, the
walk-only objects in between (ReplicaSets, Grove PodCliques ...), the pods
with the digests they run, and for every object its role and why it is, or
is not, a root: a tracked owner found, a controller of a kind no adapter
tracks, a controller whose UID does not match, the depth cap. Objects of
the ownership graph under no root close the listing.

The input is read as by "aibom scan": manifests (paths, -f, "-") or a
cluster. Every root is shown (--report ai shows only those scan reports by
default). -o dot writes a Graphviz graph ("aibom tree -o dot | dot -Tsvg");
-o json one JSON object: {"roots": [...], "outside": [...]}, each node
with kind, group, namespace, name, uid, role, why, a pod's containers
(name, init, digest) and its children.

Exit codes as for scan.`,
		Example: `  aibom tree examples/40-dynamo-graph.yaml
  aibom tree -n team-a
  aibom tree -f deploy/ -o dot | dot -Tsvg > rollup.svg
  aibom tree -f deploy/ -o json | jq '.roots[].children[].name'`,
		ValidArgsFunction: manifestArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.input.files = append(f.input.files, args...)
			return runTree(cmd, s, &f)
		},
	}
	f.input.register(cmd)
	f.adapters.register(cmd.Flags())
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "Output: text (a tree), dot (Graphviz) or json.")
	cmd.Flags().StringVar(&f.report, "report", "all", "Which roots are shown: \"all\", or \"ai\" (those scan reports by default).")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "dot", "json"))
	_ = cmd.RegisterFlagCompletionFunc("report", fixed("ai", "all"))
	return cmd
}

func runTree(cmd *cobra.Command, s Streams, f *treeFlags) error {
	if f.output != "text" && f.output != "dot" && f.output != "json" {
		return fail(ExitUsage, "--output must be text, dot or json, not %q", f.output)
	}
	if err := checkReport(f.report, 0); err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	if err := f.input.check(); err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	reg, closeAdapters, err := f.adapters.registry()
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	defer closeAdapters()
	ev, err := f.input.evaluate(cmd.Context(), s, reg, evalOptions{report: f.report, maxDocBytes: DefaultMaxDocumentBytes})
	if err != nil {
		return err
	}
	forest := tree.Build(cmd.Context(), reg, ev.store, ev.snap.Objects, ev.roots)
	switch f.output {
	case "dot":
		err = tree.WriteDot(s.Out, forest)
	case "json":
		err = tree.WriteJSON(s.Out, forest)
	default:
		err = tree.WriteText(s.Out, forest)
	}
	if err != nil {
		return &exitError{code: ExitInput, err: err}
	}
	if ev.partial {
		return exit(ExitPartial)
	}
	return nil
}
