package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

const versionDoc = `Print the crystallize version and the Go toolchain it was built with.

With --json it prints {"version": "...", "go": "..."}.`

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the crystallize version",
		Long:  versionDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				b, _ := json.Marshal(map[string]string{"version": toolVersion(), "go": runtime.Version()})
				_, err := fmt.Fprintln(e.stdout, string(b))
				return err
			}
			_, err := fmt.Fprintf(e.stdout, "crystallize %s (%s)\n", toolVersion(), runtime.Version())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}
