package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/internal/bomdiff"
)

// Exit codes of "aibom diff", as diff(1) and kubectl diff have them.
const (
	// DiffSame: no workload differs.
	DiffSame = 0
	// DiffDifferent: some workload differs (printed on stdout).
	DiffDifferent = 1
	// DiffError: the command line is wrong or a side cannot be read.
	DiffError = 2
	// DiffPartial: the scanned side is partial (a file skipped, a root
	// without a document, a kind not listed): the differences printed may
	// be incomplete.
	DiffPartial = 4
)

type diffFlags struct {
	input       inputFlags
	adapters    adapterFlags
	output      string
	report      string
	maxDocBytes int
}

func newDiffCommand(s Streams) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff BEFORE [AFTER] [flags]",
		Short: "Compare two sets of documents: models, runtimes, images and digests per workload",
		Long: `diff compares two sets of AIBOM documents workload by workload (a
workload is a document's subject) and prints, for each workload added,
removed or changed, the models, runtimes, images and digests added, removed
or changed. Other differences (evidence, properties) are not differences.

BEFORE and AFTER are each a document file (one CycloneDX JSON document, or
the array "aibom scan -o json" prints, in JSON or YAML), a folder of them
(as "aibom scan --out-dir" writes), or "-" for standard input. Without
AFTER, the other side is scanned now, as "aibom scan" does: from the
manifests of -f, or else from the cluster (-n, -A, --kubeconfig, ...). A
drift check in CI: keep the folder of "aibom scan --out-dir" in git and run
"aibom diff boms/ -n team-a".

Exit codes: 0 no difference; 1 differences (printed); 2 usage error or
unreadable input; 4 the scanned side is partial (its errors on stderr).`,
		Example: `  aibom diff before.cdx.json after.cdx.json
  aibom diff boms-v1/ boms-v2/ -o json
  aibom diff boms/ -n team-a
  aibom diff boms/ -f deploy/`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, s, &f, args)
		},
	}
	f.input.register(cmd)
	f.adapters.register(cmd.Flags())
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "Output: text or json.")
	cmd.Flags().StringVar(&f.report, "report", "ai", "For the scanned side: which roots get a document, as for scan.")
	cmd.Flags().IntVar(&f.maxDocBytes, "max-document-bytes", DefaultMaxDocumentBytes, "For the scanned side: the inline cap of a document, as for scan.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	return cmd
}

func runDiff(cmd *cobra.Command, s Streams, f *diffFlags, args []string) error {
	if f.output != "text" && f.output != "json" {
		return fail(DiffError, "--output must be text or json, not %q", f.output)
	}
	if err := checkReport(f.report, f.maxDocBytes); err != nil {
		return &exitError{code: DiffError, err: err}
	}
	if len(args) == 2 && (cmd.Flags().NFlag() > countFlags(cmd, "output")) {
		return fail(DiffError, "with two sides to compare, only -o applies: the flags of a scan are for \"aibom diff BEFORE\" against a scan")
	}
	before, err := bomdiff.Load(args[0], s.In)
	if err != nil {
		return &exitError{code: DiffError, err: err}
	}
	partial := false
	var after []bomdiff.Workload
	if len(args) == 2 {
		if args[0] == "-" && args[1] == "-" {
			return fail(DiffError, "standard input is one side only")
		}
		if after, err = bomdiff.Load(args[1], s.In); err != nil {
			return &exitError{code: DiffError, err: err}
		}
	} else {
		if err := f.input.check(); err != nil {
			return &exitError{code: DiffError, err: err}
		}
		reg, closeAdapters, err := f.adapters.registry()
		if err != nil {
			return &exitError{code: DiffError, err: err}
		}
		defer closeAdapters()
		ev, err := f.input.evaluate(cmd.Context(), s, reg, evalOptions{report: f.report, maxDocBytes: f.maxDocBytes})
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				ee.code = DiffError
			}
			return err
		}
		partial = ev.partial
		for _, r := range ev.roots {
			if d := r.Document(); d != "" {
				ws, err := bomdiff.Parse("scan of "+r.AIBOMName, []byte(d))
				if err != nil {
					return &exitError{code: DiffError, err: err}
				}
				after = append(after, ws...)
			}
		}
	}
	res := bomdiff.Diff(before, after)
	if f.output == "json" {
		err = bomdiff.WriteJSON(s.Out, res)
	} else {
		err = bomdiff.WriteText(s.Out, res)
	}
	switch {
	case err != nil:
		return &exitError{code: DiffError, err: err}
	case partial:
		return exit(DiffPartial)
	case res.Different:
		return exit(DiffDifferent)
	}
	return nil
}

// countFlags counts how many of the named flags were set.
func countFlags(cmd *cobra.Command, names ...string) int {
	n := 0
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			n++
		}
	}
	return n
}
