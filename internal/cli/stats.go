package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstats"
)

const statsDoc = `stats reads the run records under --runs (default .crystallize/runs, what
crystallize run, resume and serve mcp write) and shows, per workflow: the
runs and their statuses, the deterministic steps executed (tool calls and
commands; not model calls or approvals), the model calls and tokens the
runs spent, the model calls, tokens, cost and time avoided compared to the
source traces (the candidate's per-run savings, from the bundle each run
ran, times the completed runs; unknown for a bare .star file), the runs
that waited for an approval, the failures by reason code
(capability_not_granted, mcp_call_failed, precondition_failed, step_error,
…), and the fallbacks per step: each failed precondition or step that
went to the run's fallback policy, as "step N name".

Per call, it sets what one call of the workflow spent (model calls, tokens
and dollars; the median over the runs that executed) against what the
agent spent on the same procedure in the sessions it was mined from (the
median over the candidate's examples that the bundle holds as fixtures:
the model calls and tokens recorded on the actions its steps matched).
Dollars are the log's own where it gives them, else the tokens priced by
their model from the price table (the built-in one, with the [prices]
section of --config over it); tokens of a model no table knows are listed
as unpriced, never counted as $0.

Dry runs are counted apart and nowhere else. A run directory that cannot be
read is listed and skipped.

--json prints {"runs_dir", "workflows": [{"workflow", "bundle", "runs",
"dry_runs", "statuses", "deterministic_steps", "model_calls",
"tokens_used", "avoided" ({"runs", "model_calls", "input_tokens",
"output_tokens", "cost_usd", "wall_ms"} or null), "approvals_waited",
"failures", "fallbacks_per_step", "per_call" ({"examples", "source":
{"model_calls", "tokens", "cost_usd"}, "calls", "served": {…},
"unpriced_models"} or null)}], "skipped": [{"dir", "error"}]}.

Without --runs, a project with no run yet shows no runs (exit 0).

Exit status: 0, 1 when --runs cannot be read, 2 on a usage error.`

func newStatsCmd(e *env) *cobra.Command {
	var runs, config string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "stats [--runs DIR] [--json]",
		Short:   "Show what crystallized workflows ran and saved",
		Long:    statsDoc,
		Example: `  crystallize stats --runs .crystallize/runs --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			prices, err := runconfig.PriceTable(config)
			if err != nil {
				return err
			}
			st, err := runstats.ReadStats(runs, prices)
			if errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("runs") {
				// No run yet in this project: nothing to show is an
				// answer, not a failure. A --runs that names a missing
				// directory is still a mistyped path.
				st, err = runstats.EmptyStats(runs), nil
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, st)
			}
			writeStats(e.stdout, st)
			return nil
		},
	}
	cmd.Flags().StringVar(&runs, "runs", filepath.Join(runner.DefaultStateDir, "runs"), "directory of run records")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON on stdout")
	cmd.Flags().StringVar(&config, "config", "", "project configuration whose [prices] section prices models the built-in table does not (default ./"+runconfig.ConfigFile+" when it exists)")
	return cmd
}

func writeStats(w io.Writer, st *runstats.Stats) {
	if len(st.Workflows) == 0 {
		fmt.Fprintf(w, "no runs in %s\n", st.Runs)
	}
	for _, s := range st.Workflows {
		fmt.Fprintf(w, "%s\n", s.Workflow)
		fmt.Fprintf(w, "  runs: %d (%s)", s.Runs, counts(s.Statuses))
		if s.DryRuns > 0 {
			fmt.Fprintf(w, ", %d dry", s.DryRuns)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  deterministic steps executed: %d\n", s.DeterministicSteps)
		fmt.Fprintf(w, "  model calls made: %d (%d tokens)\n", s.ModelCalls, s.TokensUsed)
		if a := s.Avoided; a != nil {
			fmt.Fprintf(w, "  avoided over %d completed runs: %.1f model calls, %.0f tokens, $%.4f, %.0f ms (from %s)\n",
				a.Runs, a.ModelCalls, a.InputTokens+a.OutputTokens, a.CostUSD, a.WallMS, s.Bundle)
		} else {
			fmt.Fprintln(w, "  avoided: unknown (no completed run of a bundle)")
		}
		if p := s.PerCall; p != nil {
			fmt.Fprintf(w, "  per call (median): source sessions spent %.1f model calls, %.0f tokens, $%.4f (%d examples); a call spent %.1f model calls, %.0f tokens, $%.4f (%d calls)\n",
				p.Source.ModelCalls, p.Source.Tokens, p.Source.CostUSD, p.Examples, p.Served.ModelCalls, p.Served.Tokens, p.Served.CostUSD, p.Calls)
			if len(p.UnpricedModels) > 0 {
				fmt.Fprintf(w, "  unpriced models (left out of the dollars): %s\n", strings.Join(p.UnpricedModels, ", "))
			}
		}
		fmt.Fprintf(w, "  approvals waited: %d\n", s.ApprovalsWaited)
		if len(s.Failures) > 0 {
			fmt.Fprintf(w, "  failures: %s\n", counts(s.Failures))
		}
		if len(s.Fallbacks) > 0 {
			fmt.Fprintf(w, "  fallbacks: %s\n", counts(s.Fallbacks))
		}
	}
	for _, sk := range st.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", sk.Dir, sk.Error)
	}
}

// counts renders a map of counts as "a 2, b 1", by key.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
