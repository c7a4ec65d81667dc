package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// scanOutputs are the values of scan's --output, but for jsonpath=TEMPLATE.
var scanOutputs = []string{"table", "wide", "name", "json", "yaml", "cyclonedx-json", "cyclonedx-xml"}

type scanFlags struct {
	input       inputFlags
	adapters    adapterFlags
	output      string
	outDir      string
	report      string
	maxDocBytes int
	unused      bool
	exitCode    int
	failOn      []string
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
group, image count, confidence and AIBOM name), name (one
<kind>.<group>/<name> per root, as kubectl prints), json (always a JSON
array of the documents, [] for none), yaml (the same as YAML),
jsonpath=TEMPLATE (a kubectl JSONPath template over the documents as a
list: {.items[*].metadata.component.name}; strings escaped for the
terminal), cyclonedx-json and cyclonedx-xml (exactly one BOM: the root's
document when there is one root; otherwise an error, use --out-dir).
--out-dir DIR also writes one <aibom-name>.cdx.json per root
(<aibom-name>.cdx.xml with -o cyclonedx-xml; with several roots, these
two outputs then print nothing on stdout).

CI gates (--exit-code N, --fail-on): with --exit-code N, the scan exits N
when any of the --fail-on conditions holds for a root (default: all of
them), after printing its output; each finding is a "finding:" line on
stderr. Conditions: model-unresolved (no model, or an unresolved model
claim), runtime-unresolved (no serving runtime, or an unresolved runtime
claim), image-unpinned (a container image not pinned by digest in the
spec), no-ai-signal (a root of the input with no AI signal at all), all.
Referenced objects no root uses are not checked. Without --exit-code,
findings change nothing (as with trivy's --exit-code 0).

Out-of-tree adapters (--adapter-plugin, --adapter-plugin-dir) are started
and spoken to exactly as the controller does.

Exit codes: 0 success; 1 unreadable input (a missing path, input over
--max-input-bytes, every input skipped, an unreachable cluster) or output;
2 usage error; 3 duplicate objects (twice in one file, or in two files
with --strict); 4 partial results (printed, but a file was skipped, some
root has no document or some kind could not be listed); N (of --exit-code)
a --fail-on condition holds, which wins over 4. Notes (kinds no adapter
knows, owners not in the input, synthetic names) and warnings go to stderr
and do not change the exit code.`,
		Example: `  # Manifests: files, folders (-R: recursively), standard input
  aibom scan examples/
  aibom scan -R -f deploy/ -o wide
  helm template charts/llm | aibom scan -f -

  # One BOM for one workload; a folder of BOMs for many
  aibom scan -f vllm.yaml -o cyclonedx-json > vllm.cdx.json
  aibom scan -f deploy/ --out-dir boms/

  # A read-only snapshot of a cluster
  aibom scan -n team-a
  aibom scan -A -ojson

  # Names, and fields of the documents, for scripts
  aibom scan -f deploy/ -o name
  aibom scan -f deploy/ -o jsonpath='{range .items[*]}{.metadata.component.name}{"\n"}{end}'

  # A CI gate: exit 5 when a model is not known or an image is not pinned
  aibom scan -f deploy/ --exit-code 5 --fail-on model-unresolved,image-unpinned`,
		ValidArgsFunction: manifestArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.input.files = append(f.input.files, args...)
			return runScan(cmd, s, &f)
		},
	}
	f.input.register(cmd)
	f.adapters.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVarP(&f.output, "output", "o", "table", "Output on stdout: table, wide, name, json, yaml, jsonpath=TEMPLATE, cyclonedx-json or cyclonedx-xml.")
	fs.StringVar(&f.outDir, "out-dir", "", "Also write one <aibom-name>.cdx.json per root into this directory (.cdx.xml with -o cyclonedx-xml).")
	fs.IntVar(&f.exitCode, "exit-code", 0, "Exit code (1-125) when a --fail-on condition holds for a root; 0: findings do not change the exit code.")
	fs.StringSliceVar(&f.failOn, "fail-on", nil, "With --exit-code: conditions that fail the scan, comma-separated or repeated: model-unresolved, runtime-unresolved, image-unpinned, no-ai-signal, all (default all).")
	fs.StringVar(&f.report, "report", "ai", "Which roots are reported, as on the controller: \"ai\" (those with an AI signal: a runtime, a model, model storage, an evaluation or training framework, or an accelerator) or \"all\".")
	fs.IntVar(&f.maxDocBytes, "max-document-bytes", DefaultMaxDocumentBytes, "Inline cap of a document, as on the controller; larger documents drop their lowest-value components and say so.")
	fs.BoolVar(&f.unused, "unused-references", true, "Also report objects of referenced kinds (serving runtimes, model catalogue entries) that no root of the input refers to, marked as such: what they define, though nothing runs them. The controller never reports them.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed(slices.Concat(scanOutputs, []string{jsonPathPrefix})...))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", failOnCompletion)
	_ = cmd.RegisterFlagCompletionFunc("report", fixed("ai", "all"))
	_ = cmd.MarkFlagDirname("out-dir")
	return cmd
}

func checkReport(report string, maxDocBytes int) error {
	if report != "ai" && report != "all" {
		return fmt.Errorf("--report must be ai or all, not %q", report)
	}
	if maxDocBytes < 0 || (maxDocBytes > 0 && maxDocBytes < document.MinMaxBytes) {
		return fmt.Errorf("--max-document-bytes=%d: must be 0 (no cap) or at least %d, the smallest cap every workload's document fits", maxDocBytes, document.MinMaxBytes)
	}
	return nil
}

// failOnCompletion completes --fail-on, one condition after another.
func failOnCompletion(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, _ := splitLast(typed)
	var out []cobra.Completion
	for _, c := range scan.Conditions {
		out = append(out, done+string(c))
	}
	out = append(out, done+"all")
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// splitLast splits "a,b,c" into "a,b," and "c".
func splitLast(s string) (done, last string) {
	i := strings.LastIndexByte(s, ',')
	return s[:i+1], s[i+1:]
}

// gate reads --exit-code and --fail-on: the conditions to check, none
// when no gate is asked for.
func (f *scanFlags) gate(cmd *cobra.Command) ([]scan.Condition, error) {
	if f.exitCode < 0 || f.exitCode > 125 {
		return nil, fmt.Errorf("--exit-code must be between 0 and 125, not %d", f.exitCode)
	}
	if f.exitCode == 0 {
		if cmd.Flags().Changed("fail-on") {
			return nil, errors.New("--fail-on needs --exit-code N, the exit code when a condition holds (e.g. --exit-code 5)")
		}
		return nil, nil
	}
	names := f.failOn
	if len(names) == 0 {
		names = []string{"all"}
	}
	conds, err := scan.ParseConditions(names)
	if err != nil {
		return nil, fmt.Errorf("--fail-on: %w", err)
	}
	return conds, nil
}

func runScan(cmd *cobra.Command, s Streams, f *scanFlags) error {
	jp, isJSONPath, err := parseJSONPath(f.output)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	if !isJSONPath && !contains(scanOutputs, f.output) {
		return fail(ExitUsage, "--output must be one of table, wide, name, json, yaml, jsonpath=TEMPLATE, cyclonedx-json, cyclonedx-xml, not %q", f.output)
	}
	conds, err := f.gate(cmd)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
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
		write := scan.WriteDir
		if f.output == "cyclonedx-xml" {
			write = scan.WriteDirXML
		}
		if _, err := write(f.outDir, ev.roots); err != nil {
			return fail(ExitInput, "--out-dir: %v", err)
		}
	}
	switch f.output {
	case "name":
		err = writeNames(s.Out, ev.roots)
	case "json":
		err = scan.WriteJSON(s.Out, ev.roots)
	case "yaml":
		err = scan.WriteYAML(s.Out, ev.roots)
	case "cyclonedx-json", "cyclonedx-xml":
		err = scan.WriteCycloneDX(s.Out, ev.roots, f.output == "cyclonedx-xml")
		if f.outDir != "" && errors.Is(err, scan.ErrNotOneDocument) {
			// The files are what was asked for; -o chose their format.
			fmt.Fprintf(s.Err, "note: -o %s with --out-dir: one file per root in %s, nothing on stdout (it takes one BOM)\n", f.output, scan.Printable(f.outDir))
			err = nil
		}
	case "wide":
		err = scan.WriteWide(s.Out, ev.roots)
	default:
		if isJSONPath {
			err = writeJSONPath(s.Out, jp, ev.roots)
		} else {
			err = scan.WriteTable(s.Out, ev.roots)
		}
	}
	if err != nil {
		return &exitError{code: ExitInput, err: err}
	}
	if findings := scan.Check(checked(slices.Concat(ev.roots, ev.unmatched)), conds); len(findings) > 0 {
		for _, fd := range findings {
			fmt.Fprintf(s.Err, "finding: %s: %s %s: %s\n", fd.Condition, fd.Root.Entry.Kind.String(), objectName(fd.Root), scan.Printable(fd.Detail))
		}
		return fail(f.exitCode, "%d finding(s) of --fail-on %s", len(findings), joinConditions(conds))
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

// checked are the roots a CI gate checks: those something runs (not the
// referenced objects no root uses).
func checked(roots []scan.Root) []scan.Root {
	var out []scan.Root
	for _, r := range roots {
		if !r.Unused {
			out = append(out, r)
		}
	}
	return out
}

func joinConditions(conds []scan.Condition) string {
	names := make([]string, len(conds))
	for i, c := range conds {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}
