package cli

import (
	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/internal/adapterinfo"
)

func newAdaptersCommand(s Streams) *cobra.Command {
	var (
		f      adapterFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "adapters [flags]",
		Short: "List the adapters with their kinds, roles and versions",
		Long: `adapters builds the adapter registry exactly as scan and the controller do
(failing where they would fail: an adapter loaded twice, a kind claimed by
two adapters) and lists every adapter with where it comes from (core,
in-tree, plugin, profile, with its path), the kinds it declares, their roles
and the versions it reads (preferred first).`,
		Example: `  aibom adapters
  aibom adapters --adapters dynamo,grove
  aibom adapters --adapter-profile ./profiles -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if output != adapterinfo.FormatText && output != adapterinfo.FormatJSON {
				return fail(ExitUsage, "--output must be text or json, not %q", output)
			}
			loaded, closeAdapters, err := f.load()
			if err != nil {
				return fail(ExitUsage, "%v", err)
			}
			defer closeAdapters()
			reg, err := adapterinfo.Registry(loaded)
			if err != nil {
				return fail(ExitUsage, "adapters: %v", err)
			}
			if err := adapterinfo.Write(s.Out, adapterinfo.List(reg, loaded), output); err != nil {
				return &exitError{code: ExitInput, err: err}
			}
			return nil
		},
	}
	cmd.AddCommand(newAdaptersTestCommand(s))
	f.register(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", adapterinfo.FormatText, "Output: text or json.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed(adapterinfo.FormatText, adapterinfo.FormatJSON))
	return cmd
}
