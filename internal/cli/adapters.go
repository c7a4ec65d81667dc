package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aibom-dev/aibom/adapters/intree"
)

func newAdaptersCommand(s Streams) *cobra.Command {
	var list string
	cmd := &cobra.Command{
		Use:   "adapters [flags]",
		Short: "List the compiled-in adapters with their kinds, roles and versions",
		Long: `adapters lists the in-tree adapters compiled in, with the kinds each
declares, their roles and the versions they read (preferred first).`,
		Example: `  aibom adapters
  aibom adapters --adapters dynamo,grove`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			enabled, err := intree.Select(list)
			if err != nil {
				return fail(ExitUsage, "--adapters: %v", err)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ADAPTER\tKIND\tROLE\tVERSIONS")
			for _, a := range enabled {
				for _, k := range a.Kinds() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name(), k.String(), k.Role, strings.Join(k.Versions, ","))
				}
			}
			if err := tw.Flush(); err != nil {
				return &exitError{code: ExitInput, err: err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&list, "adapters", "all", "Comma-separated adapters to list ("+strings.Join(intree.Names(), ", ")+"), or \"all\".")
	return cmd
}
