package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

type runFlags struct {
	params          []string
	paramsFile      string
	dryRun          bool
	approve         []string
	allowUnapproved bool
	verify          bool
	config          string
	check           bool
	stateDir        string
	maxSteps        uint64
	asJSON          bool
	fallback        string
	// temporal, with its address set, starts the run on Temporal.
	temporal temporalFlags
	wait     bool
}

const runDoc = `run loads the workflow TARGET (a bundle directory or a .star file), checks that
every parameter is given and every tool it calls is bound, and calls the
workflow function with a ctx host object. Tools are bound in crystallize.toml
(--config, default ./crystallize.toml when it exists): command templates run
without a shell, one argument per {param} and one per item of a list for
{param...}; fs.read, fs.write and fs.edit (exact old → new replacements,
all or none) are built in and confined to [workspace] roots. A call
needing a capability outside the workflow's declared capabilities
intersected with [grants] capabilities is refused. http bindings make one request per call:
  http = { method = "POST", url = "https://host/x/{param}",
           headers = { Authorization = "Bearer {secret:TOKEN}" }, body = "json" }
with URL parameters escaped, the other arguments as a JSON body (or query),
and a JSON response parsed. Secrets are logical ids, written {secret:ID} in
headers and command templates and ctx.secret("ID") in workflows, resolved
from the environment variable ID, then from the file [secrets] file names
(KEY=VALUE lines, which must not be readable by group or others). A
workflow's ctx.secret reads the environment only for ids [secrets] env
lists, and the file otherwise. Their values (as they are, and reversed,
case-folded, base64-encoded or split by spaces) never appear in anything
the run writes.

A bundle whose promotion status is not ready runs only with --dry-run, or
with --allow-unapproved, which the run records.

--dry-run executes nothing: every call is recorded with its resolved
arguments and answered with the candidate's expected output when the
traces agreed on one, otherwise with a placeholder of the recorded shape
(the bundle's fixtures, else the members the workflow reads from the
result) whose leaves say they are placeholders ("<dry-run: step 1
branch>"), or None when nothing was recorded and nothing reads the
result; so a workflow with data flow goes through every step, and the
summary lists what each step would have received. Approvals pass. --approve NAME approves the boundary NAME in advance; without
it ctx.approve asks on the terminal when stdin is one, and otherwise
suspends the run in state pending_approval (exit status 1), to be continued
with "crystallize resume RUN-ID --approve NAME" (or --reject NAME).
--check only checks that every tool is bound and that the capabilities the
workflow's commands, built-in file tools and bound tools need are declared
and granted; a run makes the same check before its first step.

Steps mined from shell commands call ctx.exec, which runs the step's argv
template without a shell and needs no binding: each {param} becomes one
argument, and each {param...} (a command's operands, such as the files of
git add {paths...}) one argument per item of a list parameter. A list is
given as a JSON array of strings, --param paths='["a.go","b.go"]' (or in
--params FILE.json); --dry-run prints the exact argv. A value starting with
"-" is refused where a whole argument is one placeholder or a list item,
unless a literal "--" comes before it. Running a program needs exec:<program> (or shell.exec)
declared by the workflow and granted in crystallize.toml:
  [grants]
  capabilities = ["exec:git", "exec:go"]
A real run without the grants is refused before its first step, naming the
line to add. Commands run in the first [workspace] root with an environment
reduced to PATH, HOME, LANG, TMPDIR and a few more, and return {"stdout",
"stderr", "exit_code"}; a [tools."git checkout"] binding, when present, runs
the step instead. Without a config (no --config and no ./crystallize.toml)
a run has no bindings and no grants, and runs in the current directory: a
--dry-run then works and prints the argv each command would run.

--verify compares the run's receipts with the expected receipts of the
bundle's candidate through the replay oracle, masking what the candidate's
examples allowlist; drift exits 1 naming the first divergent JSON path, and
is recorded in the run. It needs a bundle whose candidate expects receipts
and a run that executes (not --dry-run).

Model steps (ctx.model) use [models.<step>] or [models.default]: provider
openai (any OpenAI-compatible chat-completions server), anthropic, or replay
(the bundle's recorded outputs), with base_url, model, api_key (a logical
secret id), max_tokens, timeout and optional prices input_usd_per_mtok and
output_usd_per_mtok; tokens and cost are recorded per call. A model step
with a schema (mined fuzzy steps carry the shape the next steps read) is
sent it as the provider's structured output; an answer that does not fit
is asked for again once with the reason, then the step fails and the
fallback policy below handles it.

Before a step the workflow's ctx.check calls evaluate its preconditions
(capability, inputs_bound, file_exists, branch_absent, program_on_path,
output_shape), which mining derives from what the traces show. When one
fails, or a deterministic step fails, the run follows its fallback policy
(--fallback, else crystallize.toml [fallback] policy, else fail): fail ends
the run there (reason precondition_failed, or the step's), agent hands the
rest of the run to the model [fallback] model names (a [models.*] key; else
[models.fallback] or [models.default]) with the workflow's tools and
commands, and ask suspends the run for a person like an approval, at the
boundary precondition-<step>-<kind> or step-<step>-failed. Every fallback
is recorded in trace.json and session.md, and counted by mine and stats.
  [fallback]
  policy = "agent"
  model = "local"

Every run is recorded in <state-dir>/runs/<run-id>/: trace.json (the trace
format, readable by crystallize mine) and session.md.

Exit status: 0 when the workflow completed, 1 when it failed, was refused or
was cancelled (SIGINT), 2 on a usage error (including missing parameters).

--json prints {"run_id", "workflow", "status", "steps", "tool_calls",
"model_calls", "approvals", "receipts", "refusals", "duration_ms",
"tokens_used", "cost_usd", "pending" ({"step", "boundary", "prompt"} or
null), "dir",
"dry_run", "allow_unapproved", "error", "output", "verification"
({"candidate_id", "passed", "expected_receipts", "receipts", "divergence"
({"path", "left", "right", "message"} or null), "warnings"} or null),
"commands" ([{"step", "name", "argv", "dir", "exit_code"}], the programs
ctx.exec ran or, in a dry run, would run), "fallbacks" ([{"step", "check",
"tool", "reason", "policy", "boundary"}], the failed checks and steps the
run handed to its fallback policy), "dry_run_calls" ([{"step",
"tool", "arguments", "answer", "source"}], source expected_output,
placeholder, nothing_recorded or, for a model step, recorded; empty unless --dry-run)}; with --check,
{"workflow", "tools", "unbound", "commands" ([{"name", "argv",
"capability", "binding", "declared", "granted"}]), "grants" (the exec
capabilities needed), "missing_grants", "undeclared", "option_positions"
([{"tool", "binding", "index", "element", "parameter"}], the command
template elements where a parameter could be read as an option: a value
starting with "-" is refused there unless the binding lists it in
allow_options or the element follows a literal "--")}.`

func newRunCmd(e *env) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run TARGET [--param k=v]... [--params FILE.json] [--dry-run] [--approve NAME]... [--verify] [flags]",
		Short: "Run a crystallized workflow",
		Long:  runDoc,
		Example: `  crystallize run bump.star --param branch=deps/x --param module=golang.org/x/net \
      --param version=v0.33.0 --param message='bump x/net' --param title='Bump x/net'
  crystallize run bundle/ --params params.json --dry-run --json
  crystallize run bundle/ --check`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, e, f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.params, "param", nil, "a parameter as name=value (repeatable; the value is a string, or a list when written as a JSON array of strings: paths='[\"a\",\"b\"]')")
	fs.StringVar(&f.paramsFile, "params", "", "a JSON object of parameters; --param overrides it")
	fs.BoolVar(&f.dryRun, "dry-run", false, "execute nothing; answer every call from the bundle's fixtures")
	fs.StringArrayVar(&f.approve, "approve", nil, "approve the boundary NAME in advance (repeatable)")
	fs.BoolVar(&f.allowUnapproved, "allow-unapproved", false, "run a bundle that is not ready (recorded in the run)")
	fs.BoolVar(&f.verify, "verify", false, "compare the run's receipts with the candidate's expected receipts; drift fails the run")
	configFlag(fs, &f.config)
	fs.BoolVar(&f.check, "check", false, "only check that every tool the workflow calls is bound and every capability it needs is granted")
	runStateDirFlag(fs, &f.stateDir)
	fs.Uint64Var(&f.maxSteps, "max-steps", runner.DefaultMaxSteps, "Starlark step budget of the run")
	summaryJSONFlag(fs, &f.asJSON)
	fs.StringVar(&f.fallback, "fallback", "", "what a failed precondition or step does: fail, agent or ask (default crystallize.toml [fallback] policy, else fail)")
	f.temporal.register(fs, true)
	fs.BoolVar(&f.wait, "wait", false, "with --temporal, wait for the run to end and print how it ended")
	return cmd
}

func runRun(cmd *cobra.Command, e *env, f *runFlags, target string) error {
	if f.temporal.address != "" {
		return runTemporal(cmd, e, f, target)
	}
	if f.wait {
		return usagef("--wait waits for a run on Temporal; give --temporal ADDR")
	}
	if f.fallback != "" && !slices.Contains(runconfig.FallbackPolicies, f.fallback) {
		return usagef("--fallback %q: want one of %s", f.fallback, strings.Join(runconfig.FallbackPolicies, ", "))
	}
	if f.verify && f.dryRun {
		return usagef("--verify compares the receipts of a run that executes; it cannot be combined with --dry-run")
	}
	params, err := f.readParams()
	if err != nil {
		return err
	}
	cfg, err := f.loadConfig()
	if err != nil {
		return err
	}
	w, err := runner.Load(target)
	if err != nil {
		return err
	}
	if f.check {
		return runCheck(cmd.Context(), e, f, w, cfg)
	}
	live := newLive(e, f.stateDir, registry.TypeWorkflow, w.Name).As("", liveModel(cfg))
	opts := runOptions(cmd, e, cfg, f.stateDir, live)
	opts.DryRun, opts.AllowUnapproved, opts.Verify = f.dryRun, f.allowUnapproved, f.verify
	opts.Approve, opts.MaxSteps, opts.Fallback = f.approve, f.maxSteps, f.fallback
	res, err := runner.Run(cmd.Context(), w, params, opts)
	live.End(res.Outcome())
	var pe *runner.ParamError
	if errors.As(err, &pe) {
		return usageError{err}
	}
	return printRunResult(e, res, err, f.asJSON)
}

// printRunResult prints what a run (run, plan run, resume) produced, as
// its summary or, with --json, as JSON whose error carries the same hints
// as the line on stderr, and returns the run's error. A run that never
// started (res nil) prints nothing.
func printRunResult(e *env, res *runner.Result, err error, asJSON bool) error {
	if res == nil {
		return err
	}
	if asJSON {
		hintRunError(res, err)
		if jerr := writeRunJSON(e.stdout, res); jerr != nil {
			return jerr
		}
	} else {
		writeRunSummary(e.stdout, res)
	}
	return err
}

// readParams merges --params and --param.
func (f *runFlags) readParams() (runner.Params, error) {
	params := runner.Params{}
	if f.paramsFile != "" {
		obj, err := runner.ReadParams(f.paramsFile)
		if err != nil {
			return nil, usagef("--params: %v", err)
		}
		for k, v := range obj {
			params[k] = v
		}
	}
	pairs, err := paramPairs(f.params)
	if err != nil {
		return nil, err
	}
	for k, v := range pairs {
		params[k] = paramValue(v)
	}
	return params, nil
}

// paramValue is the value of --param NAME=VALUE: a list when VALUE is a
// JSON array of strings (--param paths='["a.go","b.go"]'), the value of a
// step's list placeholder; the string VALUE otherwise.
func paramValue(v string) any {
	if !strings.HasPrefix(v, "[") {
		return v
	}
	var items []string
	if err := json.Unmarshal([]byte(v), &items); err != nil || items == nil {
		return v
	}
	list := make([]any, len(items))
	for i, s := range items {
		list[i] = s
	}
	return list
}

// paramPairs reads --param NAME=VALUE flags; one without a name or an =
// is a usage error.
func paramPairs(flags []string) (map[string]string, error) {
	pairs := map[string]string{}
	for _, p := range flags {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usagef("--param %q: want name=value", p)
		}
		pairs[k] = v
	}
	return pairs, nil
}

// loadConfig reads --config, or ./crystallize.toml when it exists. With
// neither, the run has an empty config rooted at the current directory:
// no bindings and no grants, which is enough for a dry run and for a
// workflow whose commands need nothing granted, and refuses the rest
// with the binding or grant to add.
func (f *runFlags) loadConfig() (*runconfig.Config, error) {
	cfg, err := projectConfig(f.config)
	if cfg == nil && err == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	return cfg, err
}

// projectConfig reads the project configuration a --config flag names,
// or ./crystallize.toml when the flag is empty and the file exists;
// with neither it returns nil and no error.
func projectConfig(flag string) (*runconfig.Config, error) {
	file := runconfig.ConfigPath(flag)
	if file == "" {
		return nil, nil
	}
	return runconfig.LoadConfig(file)
}

// runCheck reports whether every tool the workflow calls is bound. MCP
// servers are started and asked which tools they declare, so a name bound
// to a server that lacks it, or to a server that cannot start, is
// reported too.
func runCheck(ctx context.Context, e *env, f *runFlags, w *runner.Workflow, cfg *runconfig.Config) error {
	environ := os.Environ()
	r, err := runner.Preflight(ctx, w, cfg, runner.InprocTools(cfg, environ), environ)
	if err != nil {
		return err
	}
	if f.asJSON {
		if jerr := writeJSON(e.stdout, r); jerr != nil {
			return jerr
		}
		return r.Err()
	}
	if r.Bound() {
		fmt.Fprintf(e.stdout, "%s: all %d tools bound\n", w.Name, len(w.Tools))
	}
	for _, c := range r.Commands {
		state := "granted"
		switch {
		case c.Binding != "":
			state = "bound by [tools." + strconv.Quote(c.Binding) + "]"
		case !c.Declared:
			state = "not declared"
		case !c.Granted:
			state = "not granted"
		}
		fmt.Fprintf(e.stdout, "  %s runs %s: %s %s\n", c.Name, runner.QuoteArgv(c.Argv), c.Capability, state)
	}
	if len(r.Commands) > 0 || len(r.Grants) > 0 {
		fmt.Fprintf(e.stdout, "%s: grants needed: %s; missing: %s\n", w.Name, grantList(r.Grants), grantList(append(r.Undeclared, r.MissingGrants...)))
	}
	for _, o := range r.OptionPositions {
		fmt.Fprintf(e.stdout, "  warning: %s\n", o)
	}
	return r.Err()
}

func grantList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func writeRunSummary(w io.Writer, r *runner.Result) {
	mode := ""
	if r.DryRun {
		mode = " (dry run)"
	}
	fmt.Fprintf(w, "Run %s of %s: %s%s\n", r.RunID, r.Workflow, r.Status, mode)
	fmt.Fprintf(w, "  steps: %d (%d tool calls, %d model calls, %d approvals)\n", r.Steps, r.ToolCalls, r.ModelCalls, r.Approvals)
	if r.ModelCalls > 0 {
		fmt.Fprintf(w, "  model usage: %d tokens, $%.4f\n", r.TokensUsed, r.CostUSD)
	}
	fmt.Fprintf(w, "  receipts: %d, refusals: %d\n", len(r.Receipts), len(r.Refusals))
	for _, c := range r.Commands {
		switch {
		case r.DryRun:
			fmt.Fprintf(w, "  step %d %s would run: %s\n", c.Step, c.Name, runner.QuoteArgv(c.Argv))
		case c.ExitCode != nil:
			fmt.Fprintf(w, "  step %d %s ran: %s (exit %d)\n", c.Step, c.Name, runner.QuoteArgv(c.Argv), *c.ExitCode)
		default:
			fmt.Fprintf(w, "  step %d %s did not start: %s\n", c.Step, c.Name, runner.QuoteArgv(c.Argv))
		}
	}
	if len(r.Commands) > 0 {
		fmt.Fprintf(w, "  commands in: %s\n", r.Commands[0].Dir)
	}
	if p := r.Pending; p != nil && p.Kind == runstate.PendingDecision {
		resume := runner.ResumeCommand(filepath.Dir(filepath.Dir(r.Dir)), r.RunID)
		fmt.Fprintf(w, "  pending decision %s at step %d: %s --decide OPTION (options: %s)\n", p.Boundary, p.Step, resume, strings.Join(p.Options, ", "))
	} else if p != nil {
		// r.Dir is <state-dir>/runs/<run-id>.
		resume := runner.ResumeCommand(filepath.Dir(filepath.Dir(r.Dir)), r.RunID)
		fmt.Fprintf(w, "  pending approval of %s at step %d: %s --approve %s (or --reject %s)\n", p.Boundary, p.Step, resume, p.Boundary, p.Boundary)
	}
	for _, rf := range r.Refusals {
		fmt.Fprintf(w, "    refused step %d %s: %s\n", rf.Step, rf.Tool, rf.Reason)
	}
	for _, fb := range r.Fallbacks {
		what := "precondition " + fb.Check
		if fb.Check == "" {
			what = fb.Tool
		}
		fmt.Fprintf(w, "  fallback at step %d, %s: %s (policy %s)\n", fb.Step, what, fb.Reason, fb.Policy)
	}
	if r.AllowUnapproved {
		fmt.Fprintln(w, "  ran with --allow-unapproved: the bundle is not ready")
	}
	if v := r.Verification; v != nil {
		if v.Passed {
			fmt.Fprintf(w, "  verified: %d receipts match candidate %s\n", v.Actual, v.CandidateID)
		} else {
			fmt.Fprintf(w, "  drift from candidate %s at %s: %s\n", v.CandidateID, v.Divergence.Path, v.Divergence.Message)
		}
	}
	for _, c := range r.DryRunCalls {
		fmt.Fprintf(w, "  step %d %s %s → %s (%s)\n", c.Step, c.Tool, compactJSON(c.Arguments), compactJSON(c.Answer), strings.ReplaceAll(c.Source, "_", " "))
	}
	fmt.Fprintf(w, "  duration: %s\n", r.Duration.Round(1e6))
	fmt.Fprintf(w, "  recorded in: %s\n", r.Dir)
}

func writeRunJSON(w io.Writer, r *runner.Result) error {
	return writeJSON(w, r.Summary())
}

// compactJSON renders v on one line, keys sorted, "<" and ">" as they are
// (placeholders are written "<dry-run: …>").
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// stdinPrompter returns a prompter asking on the terminal, or nil when
// stdin is not one: a run in a pipe or CI suspends instead of blocking.
func stdinPrompter(cmd *cobra.Command, e *env) runner.Prompter {
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &linePrompter{in: bufio.NewReader(f), out: e.stderr}
}

// linePrompter asks for an approval on out and reads y/yes or n/no from
// in; end of input rejects.
type linePrompter struct {
	in  *bufio.Reader
	out io.Writer
}

func (p *linePrompter) Ask(ctx context.Context, boundary, prompt string) (bool, error) {
	if prompt == "" {
		prompt = "Approve " + boundary + "?"
	}
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		fmt.Fprintf(p.out, "approval %s: %s [y/n] ", boundary, prompt)
		line, err := p.in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
		if err != nil {
			fmt.Fprintln(p.out)
			return false, nil
		}
	}
}
