package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/internal/scan"
)

// scanOutputs are the values of scan's --output.
var scanOutputs = []string{"table", "wide", "json", "yaml", "cyclonedx-json", "cyclonedx-xml"}

type scanFlags struct {
	input       inputFlags
	adapters    adapterFlags
	output      string
	outDir      string
	report      string
	maxDocBytes int
	unused      bool
}

func newScanCommand(s Streams) *cobra.Command {
	var f scanFlags
	cmd := &cobra.Command{
		Use:   "scan [PATH ...] [flags]",
		Short: "Compute the documents the controller writes, from manifests or a cluster",
		Long: `scan computes, for every root workload (a tracked workload no other tracked
workload controls), exactly the CycloneDX document the controller writes
into its AIBOM's status.document.

From manifests (paths as arguments or -f, "-" for standard input):
multi-document YAML and JSON (a stream of objects), "kind: List" too; a
directory gives its *.yaml, *.yml and *.json files (all of its tree with
-R). Objects without a namespace go to "default" (or -n); objects with only
metadata.generateName get a stable name derived from their content; objects
without a UID get a stable synthetic one; ownerReferences may name their
owner by kind and name only (no uid) and are resolved within the input.
Namespaces need not opt in unless --require-opt-in. A file that cannot be
read is named with its line and skipped, the rest is reported (exit code
4). The same object in two files: the later one is kept, with a warning
(--strict makes it exit code 3).

From a cluster (no paths): every registered kind the cluster serves is
listed (pages of 500), in the namespace of -n (default: the context's) or
in every namespace with -A; only namespaces labelled aibom.dev/enabled=true
are read unless --ignore-opt-in. Nothing is written to the cluster.

Output (-o): table (default: one line per root), wide (the table with
group, image count, confidence and AIBOM name), json (always a JSON array
of the documents, [] for none), yaml (the same as YAML), cyclonedx-json
and cyclonedx-xml (exactly one BOM: the root's document when there is one
root; otherwise an error, use --out-dir). --out-dir DIR also writes one
<aibom-name>.cdx.json per root.

Out-of-tree adapters (--adapter-plugin, --adapter-plugin-dir) are started
and spoken to exactly as the controller does.

Exit codes: 0 success; 1 unreadable input (a missing path, input over
--max-input-bytes, an unreachable cluster) or output; 2 usage error; 3
duplicate objects (twice in one file, or in two files with --strict); 4
partial results (printed, but a file was skipped, some root has no
document or some kind could not be listed). Notes (kinds no adapter knows,
owners not in the input, synthetic names) and warnings go to stderr and do
not change the exit code.`,
		Example: `  # Manifests: files, folders (-R: recursively), standard input
  aibom scan examples/
  aibom scan -R -f deploy/ -o wide
  helm template charts/llm | aibom scan -f -

  # One BOM for one workload; a folder of BOMs for many
  aibom scan -f vllm.yaml -o cyclonedx-json > vllm.cdx.json
  aibom scan -f deploy/ --out-dir boms/

  # A read-only snapshot of a cluster
  aibom scan -n team-a
  aibom scan -A -ojson`,
		ValidArgsFunction: manifestArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.input.files = append(f.input.files, args...)
			return runScan(cmd, s, &f)
		},
	}
	f.input.register(cmd)
	f.adapters.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVarP(&f.output, "output", "o", "table", "Output on stdout: table, wide, json, yaml, cyclonedx-json or cyclonedx-xml.")
	fs.StringVar(&f.outDir, "out-dir", "", "Also write one <aibom-name>.cdx.json per root into this directory.")
	fs.StringVar(&f.report, "report", "ai", "Which roots are reported, as on the controller: \"ai\" (those with an AI signal: a runtime, a model, model storage, an evaluation or training framework, or an accelerator) or \"all\".")
	fs.IntVar(&f.maxDocBytes, "max-document-bytes", DefaultMaxDocumentBytes, "Inline cap of a document, as on the controller; larger documents drop their lowest-value components and say so.")
	fs.BoolVar(&f.unused, "unused-references", true, "Also report objects of referenced kinds (serving runtimes, model catalogue entries) that no root of the input refers to, marked as such: what they define, though nothing runs them. The controller never reports them.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed(scanOutputs...))
	_ = cmd.RegisterFlagCompletionFunc("report", fixed("ai", "all"))
	_ = cmd.MarkFlagDirname("out-dir")
	return cmd
}

func checkReport(report string, maxDocBytes int) error {
	if report != "ai" && report != "all" {
		return fmt.Errorf("--report must be ai or all, not %q", report)
	}
	if maxDocBytes < 0 {
		return errors.New("--max-document-bytes must not be negative")
	}
	return nil
}

func runScan(cmd *cobra.Command, s Streams, f *scanFlags) error {
	if !contains(scanOutputs, f.output) {
		return fail(ExitUsage, "--output must be one of table, wide, json, yaml, cyclonedx-json, cyclonedx-xml, not %q", f.output)
	}
	if err := checkReport(f.report, f.maxDocBytes); err != nil {
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
	ev, err := f.input.evaluate(cmd.Context(), s, reg, evalOptions{report: f.report, maxDocBytes: f.maxDocBytes, unused: f.unused})
	if err != nil {
		return err
	}
	if f.outDir != "" {
		if _, err := scan.WriteDir(f.outDir, ev.roots); err != nil {
			return fail(ExitInput, "--out-dir: %v", err)
		}
	}
	switch f.output {
	case "json":
		err = scan.WriteJSON(s.Out, ev.roots)
	case "yaml":
		err = scan.WriteYAML(s.Out, ev.roots)
	case "cyclonedx-json", "cyclonedx-xml":
		err = scan.WriteCycloneDX(s.Out, ev.roots, f.output == "cyclonedx-xml")
	case "wide":
		err = scan.WriteWide(s.Out, ev.roots)
	default:
		err = scan.WriteTable(s.Out, ev.roots)
	}
	if err != nil {
		return &exitError{code: ExitInput, err: err}
	}
	if ev.partial {
		return exit(ExitPartial)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
