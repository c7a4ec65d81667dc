package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/adapter/profile/profiletest"
)

func newAdaptersTestCommand(s Streams) *cobra.Command {
	var (
		profileFile string
		pluginArg   string
		verbose     bool
	)
	cmd := &cobra.Command{
		Use:   "test (--adapter-profile FILE | --adapter-plugin PATH[@sha256:<hex>]) DIR",
		Short: "Run the adapter conformance suite on a profile or a plugin with the fixtures in DIR",
		Long: `test runs the conformance suite the Go adapters run in their tests
(pkg/adapter/conformance) on one declarative adapter (--adapter-profile) or
one plugin binary (--adapter-plugin), with the fixtures in DIR: each
<name>.yaml holds the object to scrape as its first document (and, after
"---", the referenced objects that exist when it is scraped), and
DIR/expect.yaml says what each fixture must give (the profiletest format,
docs/profiles.md "Testing a profile"). It prints every check that fails with
what differs, and exits 0 only when every check and every expectation holds
(1 when one does not, 2 for a wrong command line or fixture folder).`,
		Example: `  aibom adapters test --adapter-profile acme.yaml ./testdata/acme
  aibom adapters test --adapter-plugin ./bin/acme-adapter@sha256:9f86d0... ./testdata/acme`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if (profileFile == "") == (pluginArg == "") {
				return fail(ExitUsage, "give exactly one of --adapter-profile and --adapter-plugin")
			}
			fixtures, opts, err := profiletest.Load(args[0])
			if err != nil {
				return fail(ExitUsage, "%v", err)
			}
			rec := &conformance.Recorder{}
			subject := ""
			if profileFile != "" {
				adapters, err := profile.Load(profileFile)
				if err != nil {
					return fail(ExitUsage, "--adapter-profile: %v", err)
				}
				if len(adapters) != 1 {
					return fail(ExitUsage, "--adapter-profile: %s holds %d profiles; test one file at a time", profileFile, len(adapters))
				}
				subject = fmt.Sprintf("profile %s (%s)", adapters[0].Name(), profileFile)
				conformance.RunTB(rec, conformance.NewHarness(adapters[0], fixtures...), opts...)
			} else {
				path, sum, err := plugin.SplitChecksum(pluginArg)
				if err != nil {
					return fail(ExitUsage, "--adapter-plugin: %v", err)
				}
				subject = "plugin " + path
				if !conformance.RunPluginTB(rec, path, fixtures, append(opts, conformance.PluginChecksum(sum))...) {
					fmt.Fprint(s.Out, rec.Report())
					return fail(ExitUsage, "--adapter-plugin: the plugin could not be started")
				}
			}
			tests := rec.Tests()
			if verbose {
				for _, t := range tests {
					fmt.Fprintln(s.Out, "=== RUN", t)
				}
			}
			if rec.Failed() {
				fmt.Fprint(s.Out, rec.Report())
				return fail(ExitInput, "%s: %d of %d checks failed over %d fixtures",
					subject, countFailed(rec), len(tests), len(fixtures))
			}
			fmt.Fprintf(s.Out, "ok  %s: %d checks over %d fixtures\n", subject, len(tests), len(fixtures))
			return nil
		},
	}
	cmd.Flags().StringVar(&profileFile, "adapter-profile", "", "The AIBOMAdapterProfile file to test.")
	cmd.Flags().StringVar(&pluginArg, "adapter-plugin", "", "The adapter plugin binary to test (PATH@sha256:<hex> pins its SHA-256).")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "List every check that ran.")
	_ = cmd.MarkFlagFilename("adapter-profile", "yaml", "yml", "json")
	return cmd
}

// countFailed counts the distinct checks with a failure.
func countFailed(rec *conformance.Recorder) int {
	seen := map[string]bool{}
	for _, f := range rec.Failures() {
		seen[strings.TrimSpace(f.Test)] = true
	}
	return len(seen)
}
