// Package cli is the aibom command line, on cobra and pflag: "aibom scan"
// (the documents the controller writes, computed offline from manifests or
// from a read-only snapshot of a cluster), "aibom tree" (the ownership
// forest behind the roll-up), "aibom diff" (what changed between two sets
// of documents), "aibom adapters" and "aibom version". The work is done by
// internal/scan, internal/tree and internal/bomdiff; this package parses
// flags, wires them and maps outcomes to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// Exit codes of the command line ("aibom diff" has its own, see there).
const (
	// ExitOK: every root was reported.
	ExitOK = 0
	// ExitInput: an input could not be read at all (a path that does not
	// exist, input over --max-input-bytes, every file given skipped, a
	// cluster that cannot be reached or whose namespaces cannot be read),
	// or the output could not be written (-o cyclonedx-json with several
	// roots and no --out-dir). Nothing is printed on stdout.
	ExitInput = 1
	// ExitUsage: the command line is wrong (unknown command or flag, bad
	// flag value, conflicting flags, unknown adapter).
	ExitUsage = 2
	// ExitDuplicate: the same object (group, kind, namespace, name) was read
	// twice from one file (without --allow-duplicates), or from two files
	// with --strict. Nothing is printed on stdout; the message names every
	// position.
	ExitDuplicate = 3
	// ExitPartial: the results are printed (and written), but are partial:
	// a file was skipped (malformed, over --max-file-bytes), some root could
	// not be scraped or its document not built, or the cluster refused to
	// list a kind. Each is named on stderr.
	ExitPartial = 4
	// "aibom scan --exit-code N" exits N when a --fail-on condition holds
	// (scan.Condition), after printing its output; N wins over
	// ExitPartial.
)

// exitError ends a command with an exit code; its message, if any, was
// printed or is printed by Run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// exit ends a command with code, printing nothing more.
func exit(code int) error { return &exitError{code: code} }

// fail ends a command with code and a message for stderr.
func fail(code int, format string, a ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, a...)}
}

// Streams are the command's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run is the command line: args without the program name, with the
// process's standard input. It returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunStreams(ctx, args, Streams{In: os.Stdin, Out: stdout, Err: stderr})
}

// RunStreams is Run with the given standard input.
func RunStreams(ctx context.Context, args []string, s Streams) int {
	root := newRoot(s)
	root.SetArgs(longFlagsWithOneDash(root, args))
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(s.Err, "%s: %v\n", cmd.CommandPath(), ee.err)
		}
		return ee.code
	}
	// Everything else is cobra's: an unknown command or flag, a wrong
	// number of arguments.
	fmt.Fprintf(s.Err, "%s: %v\nRun \"%s --help\" for help.\n", cmd.CommandPath(), err, cmd.CommandPath())
	return ExitUsage
}

// VersionLine is what "aibom version" and "aibom --version" print.
func VersionLine() string {
	return fmt.Sprintf("aibom %s (CycloneDX %s, adapter contract v%d)", version.Version, document.SpecVersion, adapter.ContractVersion)
}

func newRoot(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "aibom",
		Short: "An AI Bill of Materials (CycloneDX 1.6) for every AI workload",
		Long: `aibom computes, for every root AI workload (a tracked workload no other
tracked workload controls), the CycloneDX 1.6 document the aibom controller
writes into its AIBOM, offline from manifests or from a read-only snapshot
of a cluster; shows the ownership forest behind each document; and compares
two sets of documents.`,
		Example: `  aibom scan examples/
  aibom scan -f deploy.yaml -o cyclonedx-json > bom.cdx.json
  aibom tree -n team-a
  aibom diff boms/ -n team-a`,
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(s.Err)
			_ = cmd.Help()
			return exit(ExitUsage)
		},
	}
	root.SetVersionTemplate(VersionLine() + "\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(newScanCommand(s), newTreeCommand(s), newDiffCommand(s), newExportCommand(s), newAdaptersCommand(s), newVersionCommand(s))
	return root
}

func newVersionCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(s.Out, VersionLine())
			return nil
		},
	}
}

// longFlagsWithOneDash rewrites "-namespace x" to "--namespace x" for every
// long flag name of the command tree: the command line used to take Go's
// single-dash flags, and scripts written for it keep working. A shorthand
// cluster ("-ojson", "-An") names no long flag and is left alone, and so is
// everything after "--".
func longFlagsWithOneDash(root *cobra.Command, args []string) []string {
	long := map[string]bool{"help": true, "version": true}
	var collect func(c *cobra.Command)
	collect = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		}
		for _, sub := range c.Commands() {
			collect(sub)
		}
	}
	collect(root)
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && long[name] {
			out[i] = "-" + a
		}
	}
	return out
}
