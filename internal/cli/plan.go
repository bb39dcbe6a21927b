package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/plan"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

const planDoc = `A task plan is a small JSON graph of typed steps (read_fact, search,
context_pack, agent_loop, sub_agent, workflow_map, verify, human_gate,
deterministic_command, join, compact) with edges, budgets, capabilities and
policies. "plan schema" prints its JSON Schema; "plan validate" checks every
rule with a stable code and JSON path; "plan compile" lowers a valid plan to
the workflow graph the runtime executes; "plan mermaid" draws it.`

// newPlanCmd is "crystallize plan": the typed task-plan IR.
func newPlanCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Validate, compile and render typed task plans",
		Long:  planDoc,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPlanValidateCmd(e), newPlanCompileCmd(e), newPlanMermaidCmd(e), newPlanSchemaCmd(e), newPlanFromBundleCmd(e), newPlanRunCmd(e))
	return cmd
}

const planValidateDoc = `validate checks FILE as a task plan: its shape against the JSON Schema
("crystallize plan schema"), then references, the contract of each kind,
cycles without a branch edge, and every budget (max_nodes 32, max_depth 8,
max_tool_calls 128, max_model_calls 64 and max_steps 32 unless the plan sets
them). Every problem has a stable code and the JSON path of the value at
fault. It never fails on bad input: a file that is not JSON is one error.

Exit status: 0 when the plan has no errors (warnings allowed), 1 when it has
errors or FILE cannot be read, 2 on a usage error.

--json prints {"valid", "schema_version", "errors": [{"code", "path",
"message"}], "warnings": [...], "graph_stats": {"node_count", "edge_count",
"reachable_count", "max_depth", "kind_counts"}, "capability_summary",
"budget_summary", "promotion_summary"}.`

func newPlanValidateCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a task plan and list every problem",
		Long:  planValidateDoc,
		Example: `  crystallize plan validate plan.json
  crystallize plan validate plan.json --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readPlan(args[0])
			if err != nil {
				return err
			}
			v := plan.Validate(data)
			if err := printResult(e, asJSON, v, func(w io.Writer) { writeValidation(w, args[0], v) }); err != nil {
				return err
			}
			if !v.Valid {
				return failuref("%s: invalid task plan: %d errors", args[0], len(v.Errors))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the validation as JSON")
	return cmd
}

const planCompileDoc = `compile validates FILE and lowers it to the workflow graph the runtime
executes, as the IR's lowering table says (kind, mode and the metadata
each kind carries; lowering_overrides merged last; capability and model
policies; budgets and policies under metadata.task_plan). The graph is
printed as JSON with sorted keys: the same plan always gives the same bytes.

Warnings are printed on stderr. On an invalid plan it prints the validation
as JSON (as "plan validate --json" does) and exits 1.`

func newPlanCompileCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "compile FILE",
		Short:   "Lower a task plan to a workflow graph (JSON)",
		Long:    planCompileDoc,
		Example: `  crystallize plan compile plan.json > workflow.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := parsePlan(e, args[0])
			if err != nil {
				return err
			}
			g, err := plan.Compile(p)
			if err != nil {
				return err
			}
			return writeJSON(e.stdout, g)
		},
	}
	return cmd
}

const planMermaidDoc = `mermaid validates FILE and prints it as a Mermaid "flowchart TD" for review:
nodes in file order, shaped by kind (verify {{ }}, human_gate (( )), join
([ ]), deterministic_command [/ /], others [ ]), edges labelled with their
branch, the entry outlined. Labels are quoted and escaped, so no purpose can
break the chart.

Warnings are printed on stderr. On an invalid plan it prints the validation
as JSON and exits 1.`

func newPlanMermaidCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mermaid FILE",
		Short:   "Render a task plan as a Mermaid flowchart",
		Long:    planMermaidDoc,
		Example: `  crystallize plan mermaid plan.json > plan.mmd`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := parsePlan(e, args[0])
			if err != nil {
				return err
			}
			_, err = io.WriteString(e.stdout, plan.Mermaid(p))
			return err
		},
	}
	return cmd
}

const planSchemaDoc = `schema prints the JSON Schema (draft 2020-12) of a task plan, the same bytes
as schemas/task-plan.v1.json. The schema checks shape only; "plan validate"
applies it and every rule it cannot express.`

func newPlanSchemaCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the task-plan JSON Schema (draft 2020-12)",
		Long:  planSchemaDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := e.stdout.Write(plan.Schema())
			return err
		},
	}
}

const planFromBundleDoc = `from-bundle writes the candidate of the bundle in BUNDLE as a task plan, so
the same candidate can be reviewed as a graph ("plan mermaid") and run
("plan run"). Steps are lowered in order: a deterministic step becomes a
deterministic_command of its tool with args "KEY=VALUE" (a constant as its
value, a parameter as the placeholder {{name}}, a binding as
{{steps.N.FIELD:PATH}}, a secret as {{secret:ID}}); a fuzzy step becomes a
read_fact when it is read-only, else an agent_loop; an approval boundary
becomes a human_gate; the bundle's shadow gate is a final verify node
running "crystallize shadow BUNDLE". The parameters are listed under
"x-crystallize" in the plan. The plan always validates with no errors.

The plan is printed as JSON with sorted keys, or written to --out: the same
bundle always gives the same bytes.`

func newPlanFromBundleCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "from-bundle BUNDLE [--out FILE]",
		Short: "Write a bundle's candidate as a task plan",
		Long:  planFromBundleDoc,
		Example: `  crystallize plan from-bundle bundle > plan.json
  crystallize plan from-bundle bundle --out plan.json && crystallize plan mermaid plan.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := pipeline.PlanFromBundle(args[0])
			if err != nil {
				return err
			}
			if out == "" {
				_, err = e.stdout.Write(data)
				return err
			}
			if err := atomicfile.WriteAll(map[string][]byte{out: data}, 0o644); err != nil {
				return fmt.Errorf("writing task plan: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the plan to FILE instead of stdout")
	return cmd
}

// readPlan reads a plan file; a file that cannot be read is a failure
// (exit 1), named by its path.
func readPlan(file string) ([]byte, error) {
	data, err := plan.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading task plan %s: %w", file, unwrapPathError(err))
	}
	return data, nil
}

// parsePlan reads and parses a plan for compile and mermaid. An invalid
// plan prints its validation as JSON on stdout, so a tool driving the
// command reads the same record as from "plan validate --json", and
// exits 1; warnings of a valid plan go to stderr.
func parsePlan(e *env, file string) (*plan.Plan, error) {
	data, err := readPlan(file)
	if err != nil {
		return nil, err
	}
	p, err := plan.Parse(data, file)
	var inv *plan.InvalidError
	if errors.As(err, &inv) {
		if werr := writeJSON(e.stdout, inv.Validation); werr != nil {
			return nil, werr
		}
		return nil, failuref("%s: invalid task plan: %d errors", file, len(inv.Validation.Errors))
	}
	if err != nil {
		return nil, err
	}
	for _, w := range p.Validation.Warnings {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", file, w)
	}
	return p, nil
}

// writeValidation prints a validation for people: a summary line, then
// each problem as "FILE: path: code: message", which editors and grep can
// use.
func writeValidation(w io.Writer, file string, v *plan.Validation) {
	s := v.GraphStats
	status := "valid"
	if !v.Valid {
		status = "invalid"
	}
	fmt.Fprintf(w, "%s: %s task plan: %d nodes, %d edges, %d reachable, depth %d; %d errors, %d warnings\n",
		file, status, s.NodeCount, s.EdgeCount, s.ReachableCount, s.MaxDepth, len(v.Errors), len(v.Warnings))
	for _, p := range v.Errors {
		fmt.Fprintf(w, "  error: %s: %s\n", file, p)
	}
	for _, p := range v.Warnings {
		fmt.Fprintf(w, "  warning: %s: %s\n", file, p)
	}
	if v.Valid {
		b := v.BudgetSummary
		fmt.Fprintf(w, "Budgets: steps %d/%d, tool calls %d/%d, model calls %d/%d\n",
			b.MaxSteps.Used, b.MaxSteps.Limit, b.MaxToolCalls.Used, b.MaxToolCalls.Limit, b.MaxModelCalls.Used, b.MaxModelCalls.Limit)
	}
}

const planRunDoc = `run validates FILE, lowers it to a Starlark workflow and runs that with the
runtime of "crystallize run": the same tool bindings (crystallize.toml),
capability policy, model providers, approvals, receipts, trace.json and
session.md. The generated workflow is written to
<state-dir>/plans/<name>-<hash>.star and recorded as the run's workflow, so
it can be read, and resumed, like any other.

The workflow schedules the graph from the entry: after a node runs, every
edge from it that is unlabelled or labelled with the branch it reported is
followed. Nodes report "pass", or "fail" when they failed, and a failed node
follows only its "fail" edges (with none, the run fails), so a verify that
fails can loop through a fix and back. A join waits for every node with an
edge into it. Each kind runs as what it is:

  deterministic_command  its tool with its KEY=VALUE args; no model
  verify                 its command (sh -c, in the config's directory),
                         checked against expect_status, expect_text and
                         assert_text; no model; needs "plan.verify" granted
  human_gate             an approval of its approval id
  read_fact, search,     a read-only model turn that may call the node's
  context_pack           tools (a tool with side effects is refused)
  agent_loop             model turns calling the node's tools until a reply
                         contains done_sentinel, at most max_iterations
  sub_agent              the same, as the worker preset [workers.<name>] of
                         the config (sub_agent.preset, else worker_name):
                         its prompt, model, tools and max_iterations
  workflow_map           one model turn per item of map.items (or of the
                         upstream output it names), max_concurrency at once
  join                   waits
  compact                shortens the transcript of node outputs given to
                         model nodes to threshold_tokens, keeping
                         preserve_recent turns; no model

A model calls a tool by answering {"tool": NAME, "args": {...}}; its tools
are bound in crystallize.toml like any other. The plan's budgets hold at
run time: max_steps node runs, max_tool_calls, max_model_calls,
wall_clock_ms and total_cost_usd; consecutive_failures stops the run after
that many failed nodes of its kinds in a row, or with pause asks for the
approval "consecutive_failures" to go on.

--param NAME=VALUE replaces {{NAME}} in deterministic_command arguments.
A human gate not approved with --approve ID, nor on the terminal, suspends
the run in state pending_approval (exit status 1); continue it with
crystallize resume RUN-ID --approve ID, which replays what already ran.
--dry-run executes nothing: tools and models return nothing, gates pass and
verify nodes take their pass branch.

Before the first node runs, the plan's workflow is checked as "crystallize
run" checks any: every tool bound, every model answered, and every
capability a node may need (plan.verify for a verify node, each tool's
declared capabilities) declared by the plan and granted by the config, so
a run is not refused after a human already approved a gate on the way.
--check does only that, and runs nothing.

Exit status: 0 when the plan completed, 1 when it is invalid, failed or is
pending, 2 on a usage error. --json prints the summary of "crystallize run
--json"; its output holds each node's output, branch and visit count.`

func newPlanRunCmd(e *env) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run FILE [--approve ID]... [--config crystallize.toml] [--dry-run | --check] [--param k=v]...",
		Short: "Run a task plan on the workflow runtime",
		Long:  planRunDoc,
		Example: `  crystallize plan run plan.json
  crystallize resume 20260101T120000Z-0123456789ab --approve ship
  crystallize plan run plan.json --approve ship --param rev=v1.2.0
  crystallize plan run plan.json --dry-run --json
  crystallize plan run plan.json --check`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd, e, f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.params, "param", nil, "replace {{NAME}} in command arguments, as NAME=VALUE (repeatable)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "execute nothing; tool and model calls return None and approvals pass")
	fs.BoolVar(&f.check, "check", false, "only check that every tool the plan calls is bound and every capability it needs is granted")
	fs.StringArrayVar(&f.approve, "approve", nil, "approve the human gate ID in advance (repeatable)")
	configFlag(fs, &f.config)
	runStateDirFlag(fs, &f.stateDir)
	fs.Uint64Var(&f.maxSteps, "max-steps", runner.DefaultMaxSteps, "Starlark step budget of the run")
	summaryJSONFlag(fs, &f.asJSON)
	return cmd
}

// runPlan lowers a plan to Starlark, saves it under the state directory
// (plan.SaveStarlark) and runs it.
func runPlan(cmd *cobra.Command, e *env, f *runFlags, file string) error {
	p, err := parsePlan(e, file)
	if err != nil {
		return err
	}
	params, err := paramPairs(f.params)
	if err != nil {
		return err
	}
	cfg, err := f.loadConfig()
	if err != nil {
		return err
	}
	name := plan.WorkflowName(file)
	star, err := plan.SaveStarlark(p, params, f.stateDir, name)
	if err != nil {
		return err
	}
	w, err := runner.Load(star)
	if err != nil {
		return err
	}
	if f.check {
		return runCheck(cmd.Context(), e, f, w, cfg)
	}
	live := newLive(e, f.stateDir, registry.TypePlan, name).As("", liveModel(cfg))
	opts := runOptions(cmd, e, cfg, f.stateDir, live)
	opts.DryRun, opts.Approve, opts.MaxSteps = f.dryRun, f.approve, f.maxSteps
	res, err := runner.Run(cmd.Context(), w, nil, opts)
	live.End(res.Outcome())
	return printRunResult(e, res, err, f.asJSON)
}
