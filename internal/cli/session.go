package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/codify"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const sessionDoc = `session works on session logs: markdown files with YAML frontmatter
(type: session, session_id, status, resume_point, …), one "## Phase @agent
#channel" heading per resumable phase, "**Tool calls:**" lists and callouts
such as [!decision], [!error], [!user] and [!subagent]. crystallize run
writes one for every run, as <state-dir>/runs/<run-id>/session.md.`

// newSessionCmd is "crystallize session": session logs, the markdown
// record of an agent session.
func newSessionCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Check and resume session logs (markdown records of agent sessions)",
		Long:  sessionDoc,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionLintCmd(e), newSessionResumeCmd(e), newSessionCodifyCmd(e), newSessionLearnCmd(e))
	cmd.AddCommand(newSessionIndexCmd(e), newSessionListCmd(e), newSessionSearchCmd(e), newSessionInboxCmd(e))
	cmd.AddCommand(newSessionSplitCmd(e))
	return cmd
}

const sessionLintDoc = `lint parses each session log and reports every problem it finds, one per
line as FILE:LINE: message on stderr: frontmatter that is missing or not
YAML, a missing session_id or status, a status or task status outside its
values, a time that is not RFC 3339, a resume_point that names no phase, a
tool call without its code span or result arrow, a subagent callout without
@agent or with a mode and no link, an empty decision or error callout, and
so on. It prints nothing when every file is clean.

--json prints {"files": [{"file", "problems": [{"line", "message"}]}]} on
stdout, one entry per FILE in the order given, problems sorted by line.

Exit status: 0 when every file is clean, 1 when any has a problem or cannot
be read, 2 on a usage error.`

func newSessionLintCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Report every problem in session logs",
		Long:  sessionLintDoc,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			report, all, err := session.LintFiles(args)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(e.stdout, report); err != nil {
					return err
				}
				if len(all) > 0 {
					noun := "problems"
					if len(all) == 1 {
						noun = "problem"
					}
					return failuref("session lint: %d %s", len(all), noun)
				}
				return nil
			}
			switch len(all) {
			case 0:
				return nil
			case 1:
				return all
			}
			return fmt.Errorf("session lint: %w", all)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON on stdout")
	return cmd
}

const sessionResumeDoc = `resume reads a session log and prints the context an agent needs to
continue it: the objective, the completed phases with their tool calls, the
phase to resume at, the decisions, the errors and what handled each (the
next tool call, decision or user intervention after it), the user
interventions, the subagents with their summaries, the inbox callouts
(decision_needed, approval_required, task_complete) and the open tasks.

It resumes at the frontmatter's resume_point, or at --phase ID. A phase
is named by its id (the heading's name lowercased, other characters
replaced by "-", such as research-phase or step-3-git-commit), by phase-N
for the Nth phase, or by a prefix of its id ending before a "-" (step-3).
Phases before it are completed; notes are gathered from them and from the
phase resumed at. A resume_point of "none", or none at all, resumes after
the last phase. A subagent's linked session is read from ID.md beside FILE
when it exists, for its status and objective.

When FILE is the record of a workflow run, <state-dir>/runs/RUN-ID/
session.md as crystallize run writes it (its frontmatter has workflow:,
and its session_id is RUN-ID), resume continues the run instead, as
"crystallize resume RUN-ID --state-dir <state-dir>" does: a run suspended
at an approval (it has a journal.json) runs on from there, --approve NAME
or --reject NAME deciding the boundary, and with neither the terminal is
asked when stdin is one, else the run stays pending. --config names
another configuration than the one the run used. A run that completed or
was rejected has nothing to resume and fails with "run RUN-ID already
completed; nothing to resume". A run that failed or was cancelled without
being suspended gets its context pack, for an agent to pick it up by hand.

The default output is markdown. --json prints the same as one JSON object:
{"session_id", "status", "workflow"?, "objective", "background"?,
"tokens_used", "resume_at": {"index", "id", "name"} or null,
"later_phases", "completed_phases": [{"id", "name", "agent"?, "channel"?,
"tool_calls": [{"tool", "args", "result", "side_effects"?}]}],
"current_phase" (same shape, or null), "decisions": [{"phase", "type",
"text"}], "errors": [{"phase", "text", "handled_by"}],
"user_interventions", "inbox" (as decisions), "subagents": [{"phase",
"agent", "model"?, "mode", "session"?, "tokens"?, "summary", "status"?,
"objective"?, "load_error"?}], "open_tasks": [{"title", "status"}]}.
A phase of "" is the preamble before the first phase.

For a run it continues, --json prints the same object as crystallize run
--json.

--agent KEY continues the session with an agent instead of printing the
pack: the pack goes to the model of [models.KEY] in crystallize.toml (or
--config; provider openai, any OpenAI-compatible server, or anthropic; its
api_key secret comes from the environment or the secrets file, as in a
run), else to the command of [tools."KEY"], which reads it on stdin and
answers on stdout (claude -p, codex exec -). The answer is logged into
FILE, rewritten atomically, as a new phase "## Continuation @KEY": a
[!resume] callout marks the phase it resumed at (or "the end") and when,
and an [!answer] callout holds the answer, redacted and quoted so that
nothing in it changes the log's structure. resume_point moves to the new
phase, tokens_used grows by the model's tokens and KEY joins the
participants. It prints the phase id and the answer; --json prints
{"pack", "phase", "reply": {"text", "model", "tokens"}}. A suspended run's
log is continued by --approve or --reject, not --agent.

Exit status: 0 on success (for a run: it completed), 1 when the log has
problems (see session lint) or cannot be read, or the run failed, was
rejected, is still pending or has nothing to resume, 2 on a usage error,
including a --phase that names no phase, --phase for a run it continues,
and --approve or --reject for a log that is not a suspended run's.`

func newSessionResumeCmd(e *env) *cobra.Command {
	var phase, agent string
	rf := &resumeFlags{}
	cmd := &cobra.Command{
		Use:   "resume FILE [--phase ID] [--agent KEY] [--approve NAME | --reject NAME]... [--json]",
		Short: "Resume a session from its log, or continue a suspended workflow run",
		Long:  sessionResumeDoc,
		Example: `  crystallize session resume sessions/2026-01-12-release-notes.md --phase phase-2
  crystallize session resume sessions/2026-01-12-release-notes.md --agent reviewer
  crystallize session resume .crystallize/runs/20250101T120000Z-0123456789ab/session.md --approve merge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			s, err := session.Open(name)
			if err != nil {
				return listError(err)
			}
			if agent != "" {
				return continueSession(cmd.Context(), e, rf, name, s, phase, agent)
			}
			if handled, err := resumeRun(cmd, e, rf, name, s, phase); handled {
				return err
			}
			asJSON := rf.asJSON
			pack, err := session.Resume(s, session.ResumeOptions{Phase: phase, Load: session.DirLoader(filepath.Dir(name))})
			if errors.Is(err, session.ErrNoPhase) {
				// Parse has checked resume_point: only --phase gets here.
				return usagef("--phase: %v", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, pack)
			}
			return pack.WriteMarkdown(e.stdout)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&phase, "phase", "", "resume at this phase instead of the resume_point")
	fs.StringVar(&agent, "agent", "", "hand the context pack to [models.KEY] or the command of [tools.\"KEY\"], and log its answer into FILE as a new phase")
	fs.StringArrayVar(&rf.approve, "approve", nil, "for a suspended run: approve the boundary NAME (repeatable)")
	fs.StringArrayVar(&rf.reject, "reject", nil, "for a suspended run: reject the boundary NAME (repeatable)")
	fs.StringVar(&rf.config, "config", "", "for a suspended run: project configuration (default: the one the run used)")
	fs.BoolVar(&rf.asJSON, "json", false, "print the context pack, or the run's summary, as JSON")
	return cmd
}

// listError returns a parse error as printError shows it best: a single
// problem bare, several under "reading FILE" (the file the first names).
func listError(err error) error {
	var list trace.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		return fmt.Errorf("reading %s: %w", list[0].File, err)
	}
	return err
}

type codifyFlags struct {
	out          string
	report       string
	bundle       string
	config       string
	workflowName string
	packageName  string
	interactive  bool
	refine       bool
	asJSON       bool
}

const sessionCodifyDoc = `codify turns session logs into a Starlark workflow. Each session becomes a
trace: one action per tool call, with the phase and its callouts kept as
metadata; a [!user] intervention makes the next tool call an approval
boundary, and the tool call after an [!error] is a recovery, a fuzzy step
that needs review.

One session is the workflow: every tool call is a step and every argument
a literal, as in ingest, except the commands that only look (git status,
grep, cat, …), which are no step, as in mining. Several sessions of the same procedure are mined
as mine does, with --min-examples set to the number of sessions, so the
workflow is what they all repeat and what varies between them becomes
its parameters. The candidate is then shadow-replayed against the
sessions, and written as mine writes it: --out the workflow, --report the
JSON report, --bundle a review bundle.

A tool call is a shell command, read as mine reads an agent's Bash call
(with the [normalize] section of --config): "git commit -m x" is the step
git commit with parameter message, run by ctx.exec with the capability
exec:git, so the workflow runs without a binding. Three kinds keep the
tool they name, their arguments split as a shell splits them
("--name=value" is parameter name, any other word arg1, arg2, …): a tool
the configuration binds, a dotted or MCP tool name (repo.commit,
mcp__server__tool), and a step of a session written by crystallize run,
which records command lines: with --config (default ./crystallize.toml
when it exists) the positional arguments of a tool bound to a command are
named after the template's "{name}" placeholders, so codifying a run
gives back the workflow's parameter names.

--interactive reviews the draft on the terminal before anything is
written: each step is shown with its arguments, and answered with k (or
an empty line) to keep it, d to drop it, "p ARG NAME" to make the literal
argument ARG the workflow parameter NAME (the step is asked again, so
several can be made parameters; a NAME already in use is shared; an ARG
that already is a parameter, mined from several sessions or derived, is
renamed NAME in every step and derived value that reads it), q to
stop without writing, or ? for help. Dropped steps are removed from the
sessions and they are mined again, so the workflow, the report and the
bundle agree without them. stdin must be a terminal. The report records
the review as warning reviewed_interactively.

--refine asks a model to make the draft readable: better names for
parameters and locals, and comments. It uses [models.refine] of the
configuration, else [models.default] (provider openai or anthropic; its
api_key secret comes from the environment or the secrets file, as in a
run). The answer is accepted only when it passes the workflow check and is the
draft with names and comments changed: the same ctx.tool, ctx.model and
ctx.approve calls in the same order with the same arguments, and the same
parameters in the same places with the same defaults. Otherwise codify
fails naming the first difference and writes nothing. Renamed parameters
are renamed in the report and bundle too, and the report records the
refinement (model, checks passed) as warning workflow_refined. With
--interactive, the review comes first.

--json prints the summary mine --json prints (selected candidate, counts,
candidates, rejections, warnings, outputs, bundle) instead of the text.

Set SOURCE_DATE_EPOCH to pin generated_at for reproducible output.

Exit status: 0 when a safe candidate was written, 1 when none was (the
report and a workflow saying so are still written), on error, when the
review was stopped or the refinement refused, 2 on a usage error,
including --interactive without a terminal and --refine without a model.`

func newSessionCodifyCmd(e *env) *cobra.Command {
	f := &codifyFlags{}
	cmd := &cobra.Command{
		Use:   "codify FILE... --out WORKFLOW.star [--report FILE] [--bundle DIR] [--interactive] [--refine] [--json]",
		Short: "Turn session logs into a workflow",
		Long:  sessionCodifyDoc,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var answers io.Reader
			if f.interactive {
				in, ok := cmd.InOrStdin().(*os.File)
				if !ok || !isTerminal(in) {
					return usagef("--interactive asks about each step on the terminal, but stdin is not a terminal")
				}
				answers = in
			}
			return runCodify(cmd.Context(), e, f, args, answers)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", "write the workflow (Starlark) to this file (required)")
	fs.StringVar(&f.report, "report", "", "write the JSON report to this file")
	fs.StringVar(&f.bundle, "bundle", "", "write a review bundle into this directory")
	fs.StringVar(&f.config, "config", "", "project configuration naming the arguments of command tools (default ./"+runconfig.ConfigFile+" when it exists)")
	fs.StringVar(&f.workflowName, "workflow-name", "", "name of the workflow function (default: inferred)")
	fs.StringVar(&f.packageName, "package-name", "", "package the workflow belongs to, recorded in the workflow header")
	fs.BoolVar(&f.interactive, "interactive", false, "review each step on the terminal (keep, drop, parameterize) before writing")
	fs.BoolVar(&f.refine, "refine", false, "have [models.refine] (else [models.default]) rename and comment the workflow, checked to change nothing else")
	summaryJSONFlag(fs, &f.asJSON)
	return cmd
}

// runCodify is session codify. With f.interactive, the answers of the
// review are read from answers (the terminal, for the command).
func runCodify(ctx context.Context, e *env, f *codifyFlags, files []string, answers io.Reader) error {
	if f.out == "" {
		return usagef("--out is required")
	}
	generatedAt, err := generatedAt(e.getenv)
	if err != nil {
		return err
	}
	cfg, err := projectConfig(f.config)
	if err != nil {
		return err
	}
	var ref *codify.Refiner
	if f.refine {
		if ref, err = newRefiner(cfg, e.getenv); err != nil {
			return err
		}
	}
	rules, err := agentRules(f.config)
	if err != nil {
		return listError(err)
	}
	sources, err := codify.ReadSources(files)
	if err != nil {
		return listError(err)
	}
	d, err := codify.Run(ctx, sources, codify.Options{WorkflowName: f.workflowName, GeneratedAt: generatedAt, Config: cfg, Rules: rules})
	if err != nil {
		return err
	}
	if f.interactive {
		if sel := d.Report.Selected(); sel == nil {
			fmt.Fprintln(e.stderr, "No safe candidate to review.")
		} else {
			rv, err := reviewSteps(ctx, answers, e.stderr, sel)
			if err != nil {
				return err
			}
			if d, err = codify.Apply(ctx, d, rv); err != nil {
				return err
			}
		}
	}
	outputs := pipeline.Outputs{
		Out: f.out, Report: f.report, Bundle: f.bundle,
		Codegen:       codegen.Options{PackageName: f.packageName},
		BundleOptions: bundle.Options{PackageName: f.packageName, GeneratedAt: generatedAt, GeneratorVersion: toolVersion()},
	}
	pub, err := d.Publish(ctx, outputs, ref)
	if err != nil {
		return err
	}
	return printMined(e, d.Report, outputs, pub, f.asJSON)
}

const sessionLearnDoc = `learn extracts learning cases from session logs, for prompt examples or
fine-tuning data: one per [!error] callout (kind "failure") and one per
[!user] callout after a tool call in its phase (kind "correction"). Each
case holds its context (the objective, the phases before, the decisions so
far), the attempt (the tool calls before the callout in its phase), the
signal (the callout's text) and the eventual fix (the tool calls and
decisions after it, up to the next error or correction in the phase).

The cases are written as JSON Lines, one object per line, in the order of
the FILEs and of each file, to --out or stdout. schemas/learning-case.v1.json
documents the object: {"schema": "crystallize.learning-case.v1", "type",
"kind", "id", "session_id", "file", "phase", "phase_name", "agent"?,
"context": {"objective", "previous_phases", "decisions"}, "attempt":
[{"tool", "args", "result", "side_effects"?}], "signal", "fix":
{"tool_calls", "notes"}, "resolved"}.

--type is the kind of case to write; puzzle (context and failed attempt in,
fix out) is the only one.

Exit status: 0 on success, 1 when a log has problems (see session lint) or
cannot be read, 2 on a usage error.`

func newSessionLearnCmd(e *env) *cobra.Command {
	var typ, out string
	cmd := &cobra.Command{
		Use:   "learn FILE... --type puzzle [--out FILE.jsonl]",
		Short: "Extract learning cases from session logs",
		Long:  sessionLearnDoc,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if typ != session.CaseTypePuzzle {
				return usagef("--type %q: want %s", typ, session.CaseTypePuzzle)
			}
			cases, err := session.LearnFiles(args)
			if err != nil {
				return listError(err)
			}
			if out != "" {
				return atomicfile.WriteAll(map[string][]byte{out: cases}, 0o644)
			}
			_, err = e.stdout.Write(cases)
			return err
		},
	}
	cmd.Flags().StringVar(&typ, "type", session.CaseTypePuzzle, "kind of learning case: puzzle")
	cmd.Flags().StringVar(&out, "out", "", "write the cases to this file instead of stdout")
	return cmd
}

const sessionSplitDoc = `split plans token-aware delegation of a session: it estimates the tokens
of each phase, groups consecutive phases so that each group holds at most
--max-tokens, and routes each group to a model tier.

The estimate is ceil(bytes/4) of the phase's markdown in canonical form
(as session lint's writer emits it), from its "## " heading to the end of
its last block. Grouping is greedy in document order: a phase joins the
current group while the total stays at most N. A phase estimated above N
is a group of its own, marked over_limit. The preamble before the first
phase belongs to no group.

Tiers are ordered weakest to strongest; a phase gets the strongest tier of
the rules it matches, or the default tier, and a group the strongest tier
of its phases. Without --route, phases with a [!decision],
[!decision_needed], [!error] or [!approval_required] callout go to tier
"strong" and every other phase to tier "fast". A route file (TOML) names
the tiers, their models and the rules; what it leaves out keeps these
defaults:

  default = "fast"                 # tier of a phase no rule matches
  [[tiers]]                        # weakest first
  name = "fast"
  model = "claude-haiku"           # optional
  [[tiers]]
  name = "strong"
  model = "claude-opus"
  [[rules]]                        # every condition set must hold
  tier = "strong"
  callout = "error"                # a callout of this type
  agent = "deploy*"                # the phase's @agent (a glob)
  tool = "kubectl"                 # one of its tool calls (a glob)

--json prints {"estimator", "max_tokens", "groups": [{"phases": [phase
ids], "tokens", "tier", "model"?, "reasons": ["PHASE: why → tier" or
"routine"], "over_limit"}]}.

--run delegates the split: each group goes, with its phases' markdown, to
the agent of its tier in crystallize.toml (or --config): [models.MODEL]
when the tier names a model that has such an entry, else [models.TIER]
(an OpenAI-compatible or Anthropic model), else a command bound as
[tools."TIER"] that reads the prompt on stdin, as session resume --agent
finds its agent. Each answer is appended to the log as a phase
"Delegated group N @KEY" with a [!delegated] callout naming the group's
phases and tier, and an [!answer] callout holding the answer, redacted.
The log is written once, atomically, when every group has answered: a
group without an agent, an agent that fails or answers nothing leaves
the log as it was. With --json --run prints {"plan", "results": [{"agent",
"phase", "reply"}]}.

Exit status: 0 on success, 1 when the log or the route file has problems
or cannot be read or an agent fails, 2 on a usage error (a tier without
an agent).`

func newSessionSplitCmd(e *env) *cobra.Command {
	var maxTokens int
	var routeFile, config string
	var asJSON, run bool
	cmd := &cobra.Command{
		Use:   "split FILE --max-tokens N [--route FILE.toml] [--run [--config FILE]] [--json]",
		Short: "Split a session into phase groups for delegation, each with a model tier",
		Long:  sessionSplitDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxTokens <= 0 {
				return usagef("--max-tokens must be a positive number of tokens")
			}
			var route *session.Route
			if routeFile != "" {
				var err error
				if route, err = session.OpenRoute(routeFile); err != nil {
					return listError(err)
				}
			}
			opts := session.SplitOptions{MaxTokens: maxTokens, Route: route}
			if run {
				return runSplit(cmd.Context(), e, args[0], opts, config, asJSON)
			}
			if config != "" {
				return usagef("--config names the agents of --run")
			}
			s, err := session.Open(args[0])
			if err != nil {
				return listError(err)
			}
			plan, err := session.Split(s, opts)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, plan)
			}
			_, err = fmt.Fprint(e.stdout, splitTable(plan))
			return err
		},
	}
	cmd.Flags().IntVar(&maxTokens, "max-tokens", 0, "most estimated tokens in a group (required)")
	cmd.Flags().StringVar(&routeFile, "route", "", "routing rules (TOML) naming tiers, models and rules")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the split as JSON")
	cmd.Flags().BoolVar(&run, "run", false, "send each group to its tier's agent and append the answers to the log as phases")
	cmd.Flags().StringVar(&config, "config", "", "crystallize.toml naming the tiers' agents (default: the nearest one)")
	return cmd
}

// runSplit is session split --run: the split delegated to the agents of
// its tiers and the answers appended to the log.
func runSplit(ctx context.Context, e *env, name string, opts session.SplitOptions, config string, asJSON bool) error {
	cfg, err := projectConfig(config)
	if err != nil {
		return err
	}
	res, err := session.RunSplit(ctx, name, session.SplitRunOptions{
		Split: opts, Now: time.Now,
		Agent: func(g session.Group) (string, session.Agent, error) {
			key := g.Tier
			if cfg != nil && g.Model != "" {
				if _, ok := cfg.Models[g.Model]; ok {
					key = g.Model
				}
			}
			a, err := sessionAgent(cfg, key, e.getenv)
			return key, a, err
		},
	})
	if err != nil {
		return listError(err)
	}
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	for i, r := range res.Results {
		g := res.Plan.Groups[i]
		fmt.Fprintf(e.stdout, "group %d (%s, tier %s) → %s: phase %s\n", i+1, strings.Join(g.Phases, ", "), g.Tier, r.Agent, r.Phase)
	}
	return nil
}

// splitTable is plan as an aligned table, one row per group.
func splitTable(plan *session.SplitPlan) string {
	rows := [][]string{{"GROUP", "TOKENS", "TIER", "MODEL", "PHASES", "REASONS"}}
	for i, g := range plan.Groups {
		tokens := strconv.Itoa(g.Tokens)
		if g.OverLimit {
			tokens += " (over limit)"
		}
		model := g.Model
		if model == "" {
			model = "-"
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), tokens, g.Tier, model,
			strings.Join(g.Phases, ", "), strings.Join(g.Reasons, "; ")})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for j, c := range r {
			width[j] = max(width[j], len([]rune(c)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "estimator: %s; max tokens: %d\n", plan.Estimator, plan.MaxTokens)
	for _, r := range rows {
		for j, c := range r {
			if j == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", width[j]-len([]rune(c))+2))
		}
		b.WriteString("\n")
	}
	return b.String()
}
