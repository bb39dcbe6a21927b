package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
)

var statusDoc = `status prints one line for a shell prompt or a tmux status bar: the
active sessions of the state directory's registry, numbered as
crystallize sessions numbers them, each as BRANCH/WHO (the git branch of
its workspace, then its agent, else its model, else the workflow it
runs), then the number of unanswered inbox items and where to list the
sessions:

  [1] main/claude  [2] feat/auth/ollama  |  2  /sessions

A workflow run's model is the model of [models.default] in its
crystallize.toml; without a branch (outside git, a detached HEAD) WHO
stands alone.

At most ` + fmt.Sprint(registry.MaxShown) + ` sessions are named; the others are counted ("+3 more").
With no active session it prints "no active sessions  |  N  /sessions". A
directory without a registry reads as empty, and status creates nothing
there. It reads two indexed queries, so it stays fast with thousands of
sessions registered.

With --temporal ADDR the line ends with the number of runs on that
Temporal server that wait at an approval or decision ("| 1 temporal
pending"; see crystallize runs).

--json prints {"sessions": [...], "inbox": N, "temporal_pending"?: N,
"line": "..."}, each session as sessions --json prints it.

Exit status: 0 on success, 1 on error, 2 on a usage error.`

func newStatusCmd(e *env) *cobra.Command {
	var stateDir string
	var asJSON bool
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "status [--json] [--state-dir DIR] [--temporal ADDR]",
		Short: "Print one status line: active sessions and the inbox count",
		Long:  statusDoc,
		Example: `  PS1='$(crystallize status 2>/dev/null) \$ '
  set -g status-right '#(crystallize status)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var line registry.Line
			db, ok, err := registry.OpenExisting(ctx, stateDir)
			if err != nil {
				return err
			}
			if ok {
				defer db.Close()
				if line, err = registry.Status(ctx, db, registry.Options{}); err != nil {
					return err
				}
			}
			text := line.String()
			var pending *int
			if tf.address != "" {
				waiting, err := temporalPending(cmd, e, &tf)
				if err != nil {
					return err
				}
				n := len(waiting)
				pending = &n
				text += fmt.Sprintf("  |  %d temporal pending", n)
			}
			if asJSON {
				sum := line.Summary()
				sum.Temporal, sum.Line = pending, text
				return writeJSON(e.stdout, sum)
			}
			_, err = fmt.Fprintln(e.stdout, text)
			return err
		},
	}
	registryStateDirFlag(cmd.Flags(), &stateDir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	tf.register(cmd.Flags(), false)
	return cmd
}
