package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

type mineFlags struct {
	from          string
	shadowFrom    []string
	holdout       string
	out           string
	outDir        string
	report        string
	minExamples   int
	workflowName  string
	packageName   string
	maxCandidates int
	miner         string
	passes        string
	progress      string
	skipInvalid   bool
	asJSON        bool
	config        string
	// store and stateDir: mine --store (store.go).
	store    bool
	stateDir string

	bundle         string
	bundles        string
	evalPack       string
	evalPackLink   string
	approver       string
	author         string
	team           string
	repo           string
	packageVersion string
	minConfidence  float64
}

func (f *mineFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "directory of traces to mine (*.json, *.jsonl; searched recursively)")
	fs.StringArrayVar(&f.shadowFrom, "shadow-from", nil, "held-out trace directory to shadow-replay every candidate against (repeatable; never mined)")
	fs.StringVar(&f.holdout, "holdout", pipeline.HoldoutAuto, "hold the most recent traces of --from out of mining and replay candidates against them: auto, none, a count (3) or a fraction (0.2); see below")
	fs.StringVar(&f.out, "out", "", "write the selected workflow (Starlark) to this file")
	fs.StringVar(&f.outDir, "out-dir", "", "write every safe candidate as <name>.star into this directory")
	fs.StringVar(&f.report, "report", "", "write the JSON report to this file")
	fs.IntVar(&f.minExamples, "min-examples", mine.DefaultMinExamples, "distinct sessions a procedure must occur in (at least 2); a subagent's or continuation's trace is part of its parent's session")
	fs.StringVar(&f.workflowName, "workflow-name", "", "name of the selected workflow function (default: made from its steps for agent sessions, else from the traces' goal or tools)")
	fs.StringVar(&f.packageName, "package-name", "", "package the workflow belongs to, recorded in the workflow header")
	fs.IntVar(&f.maxCandidates, "max-candidates", mine.DefaultMaxCandidates, "most safe candidates to list in the report")
	fs.StringVar(&f.miner, "miner", mine.ModeAuto, "miner: auto, exact (contiguous repeats) or gapped (steps with other actions between them)")
	fs.StringVar(&f.passes, "passes", pipeline.PassesAuto, "auto, 1 (keep the decoded corpus in memory) or 2 (keep one symbol per action and read examples back); the report is the same")
	fs.StringVar(&f.progress, "progress", progressAuto, "auto (a bar when stderr is a terminal), bar, json (one event per line on stderr) or none")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "load the valid traces and list each invalid file in the report instead of failing")
	fs.BoolVar(&f.asJSON, "json", false, "print the report summary as JSON on stdout")
	fs.StringVar(&f.config, "config", "", mineConfigFlagHelp)
	fs.BoolVar(&f.store, "store", false, "mine the traces of the trace store (<state-dir>/state.db; see crystallize store) instead of --from")
	fs.StringVar(&f.stateDir, "state-dir", runner.DefaultStateDir, stateDirStoreHelp)
	fs.StringVar(&f.bundle, "bundle", "", "write a portable, redacted review bundle for the selected candidate into this directory")
	fs.StringVar(&f.bundles, "bundles", "", "write a review bundle for every safe candidate into this directory, one <name>/ each (the names --out-dir gives)")
	fs.StringVar(&f.evalPack, "eval-pack", "", "also write the eval pack (TOML) of the selected candidate to this file: the bundle's with --bundle or --bundles (every bundle then holds its own), else one naming the fixtures a bundle would hold")
	fs.StringVar(&f.evalPackLink, "eval-pack-link", "", "where the eval pack is published (a URL), recorded as the bundle's eval_pack.link and the report's promotion eval_pack_link")
	fs.StringVar(&f.approver, "approver", "", "who is expected to approve the bundle (recorded; not an approval: see crystallize approve)")
	fs.StringVar(&f.author, "author", "", "who proposes the bundle")
	fs.StringVar(&f.team, "team", "", "team recorded in the bundle")
	fs.StringVar(&f.repo, "repo", "", "repository recorded in the bundle")
	fs.StringVar(&f.packageVersion, "package-version", "0.1.0", "version proposed for the workflow package")
	fs.Float64Var(&f.minConfidence, "promotion-min-confidence", 0.8, "confidence a candidate needs before it can be promoted")
}

const mineDoc = `mine reads every trace under --from, finds every contiguous sequence of two
or more actions that occurs in at least --min-examples distinct sessions (the
traces that name a parent_session_id are part of that session), and ranks
them by supporting sessions² × length, so that a few steps repeated in
many sessions come before a long sequence seen in two; sequences made only
of reads (observations_only), of edits that recorded only their path
(edits_without_content) or of one tool called again and again
(one_tool_repeated) rank last and are rejected. For each candidate it works out
which fields vary (parameters), which never do (constants), and which always
carry an earlier step's output (bindings); it rejects candidates whose side
effects differ between examples, and those with a shell command no argv
template replays (the examples ran different command lines,
divergent_argv, or the log holds it only as shell text with variables or
substitutions, unparsed_command), and marks model-dependent steps as fuzzy
segments that still need review.

The best safe candidate is written as a Starlark workflow (--out); --out-dir
writes every safe candidate.

--bundle writes the review bundle of the selected candidate; --bundles DIR
writes one for every safe candidate, each in DIR/<name>/ (the name --out-dir
gives its workflow, without .star), each complete as --bundle writes it: its
own workflow, examples and held-out traces as fixtures, shadow report, skill
and, with --eval-pack, eval pack. Every bundle is checked and approved on
its own (crystallize validate DIR/<name>, crystallize approve DIR/<name>).
They are written all or none, with the other outputs: a failure leaves no
DIR/<name>. A DIR/<name> that already holds files is refused, never mixed
with the new bundle. --bundle and --bundles: pass one.

Names are at most 48 characters. A candidate mined from agent sessions is
named after what its steps do (go_mod_tidy_test_git_add_commit_push), and
the goal of its sessions (their first prompt; the first session's when
they differ) is kept whole as its description: in the report, the
workflow's docstring and the SKILL.md description. Traces a harness wrote
name a candidate after the goal its examples share when that fits, else
after its first and last tools. Names of the candidates of one run are
distinct (name_2, name_3, …). --workflow-name names the selected
candidate, at any length. --out-dir writes <name>.star; a name that is
not a plain file name (too long, or with characters a file system would
read otherwise) becomes its first words and a hash of it.

--miner chooses how procedures are found. exact finds contiguous runs, as
above. gapped finds procedures whose steps keep their order but have other
actions between them (at most 8 between two steps), as in agent sessions:
observations (reads, searches, listings) are left out, a command that
failed and was retried, perhaps with edits between, counts once and
records its retries (shadow replay folds retries by the same rule), a
command that failed and was never retried stays a step with a review
note, and an action that sits between two steps only
because it is common everywhere is not made a step. auto, the default,
uses gapped when any trace names its agent (metadata.agent) or has an
observation, and exact otherwise. The report's mining.miner and
mining.miner_reason say when gapped ran and why; each example's positions
list the actions its steps matched.

Every candidate is then shadow-replayed, calling nothing: aligned with each
of its source examples and with every held-out trace from --shadow-from
(steps, side effects, approvals, expected outputs, and the effect receipts
through the replay oracle). A held-out trace that does not contain the
procedure is reported as unmatched; failures lower the confidence, and a
candidate whose own examples fail is rejected. A candidate whose effect
receipts drift from the recorded ones on any trace (a divergence under
/effect_receipts/) is rejected with receipt_drift; with --bundle it is
still bundled, as kind rejected, with the divergence.

Without --shadow-from, --holdout keeps some of the traces of --from out of
mining and replays every candidate against them exactly as against
--shadow-from traces, so that a procedure found in one directory of
ordinary agent logs can pass the held-out gate and reach ready. The traces
held out are the most recent eligible ones by their start time
(started_at, else their first action's timestamp; when no trace has one,
the last in file order). auto, the default, holds out one in five
(rounded down) of the eligible traces when some name their agent (as
Claude Code, Codex and OpenTelemetry sessions do) and there are at least
6 of them: a held-out session proves a procedure only when it repeats
it, so the procedure needs --min-examples sessions to be mined from and
one more to be checked on, and fewer sessions are better spent on
mining. Traces a harness wrote (no metadata.agent) come with their own
held-out runs, and auto leaves them alone. A count (--holdout 3) or a
fraction (--holdout 0.25, rounded down, at least 1) holds out that many
of any corpus, and fails when fewer than --min-examples traces would be
left to mine; none holds out nothing. A corpus that traces are held out
of is read whole. The report's holdout field (mode, reason, order and
the traces with their start times), the summary's "Held out:" line and
--json's holdout say which traces were held out and why. --shadow-from
turns auto off, and cannot be combined with a count or fraction.

Trace files are mined in two passes: the first skims every trace (its
JSON is checked, its values are not built) and keeps one symbol per
action and where the trace lives, the second reads back only the traces
the candidates are built from. --passes 1 decodes and keeps the whole
corpus in memory instead, which costs more time and memory; auto, the
default, and 2 read back. The outputs are the same byte for byte.
Agent session logs are read in two passes too: the first decodes each
session, keeps its summary and writes the session to a temporary spool
file (removed at once, gone with the process), from which the sessions
the candidates are built from and the held-out ones are read back (on
10,000 Claude Code sessions, a quarter of the memory of --passes 1, which
reads them whole, for about the same CPU).

--progress bar draws a bar per pass on stderr (traces, bytes, their
rates and the time left); auto, the default, does so when stderr is a
terminal and --json is not given. --progress json writes one JSON object
per line on stderr instead, for CI: {"event": "progress"|"done", "pass":
"read"|"build", "traces", "bytes", "total_bytes", "done", "total",
"traces_reread", "elapsed_seconds", "traces_per_second",
"bytes_per_second", "eta_seconds"}, fields that do not apply left out.
An interrupt (SIGINT) stops the run at once; nothing is written unless
everything is.

--report writes the full JSON report: every
candidate and rejected candidate with its evidence and its promotion
(status, reasons, sample_count, divergence_history, approval_history,
criteria), every excluded trace with its reason code, and every skipped
file.

Everything mine writes (workflows, the report, the bundle, the summary) is
rendered from the redacted report: a secret in a name (a tool name, a trace
id, a goal turned into the function name, a parameter name) is replaced by
[redacted:<kind>] as one in a value is, and a user's home directory
(/home/NAME, /Users/NAME, C:\Users\NAME, Claude Code's -home-NAME-…
project directories) is written ~, which run expands again to the home
directory of whoever runs the workflow.

Savings are what the traces record: model calls, tokens and, where the
log gives no dollars (Claude Code and Codex logs count tokens only), the
tokens priced by their model from a built-in price table (input, output,
cache reads and writes; a dated name such as claude-sonnet-4-5-20250929 is
its family). A [prices."MODEL"] section of --config (input = …, output =
…, and optionally cache_read = …, cache_write = …, in US dollars per
million tokens) adds or replaces a model. Tokens of a model no table knows
are listed as unpriced (savings.unpriced_models), never counted as $0.

Traces are crystallization traces (objects with "actions"), workflow run
records (objects with "stages" or "_type": "workflow_run") or governed
code-mode composition reports (objects with "run" and "calls");
schemas/trace.v1.json and schemas/composition-report.v1.json document them. Invalid input fails the run and lists every problem
with its file, line and JSON path, unless --skip-invalid is given.

Exit status: 0 when a safe candidate was selected, 1 when none was (every
candidate rejected, receipt drift included; the report and a workflow
saying so are still written) or on error, 2 on a usage error.

--store mines the traces crystallize import --store kept in the trace store
of --state-dir (default .crystallize) instead of --from: the first pass reads
each trace's stored signatures (and action flags, for the gapped miner),
decoding nothing, and only the candidates' examples are decoded, so mining
again after importing a few more traces costs their import, the search for
repeats and the candidates' examples, not a decode of the corpus. Traces
stored by an older crystallize have no flags: the first gapped mine decodes
them once and stores their flags. The outputs are those of mine
--from on the imported directory, byte for byte. --passes, --config and
--skip-invalid apply to the import, not here.

Set SOURCE_DATE_EPOCH to pin generated_at for reproducible output.

--json prints a summary object on stdout:
  {"selected_candidate_id", "source_trace_count", "excluded_trace_count",
   "skipped_file_count", "candidates": [{"id", "name", "steps", "support",
   "confidence", "parameters", "derived_parameters" (when any: {name:
   expression}, values the workflow computes instead of asking for),
   "fuzzy_steps", "shadow": {"pass", "compared",
   "source_passed", "heldout_passed", "heldout_failed", "heldout_unmatched"}}],
   "rejected_candidates":
   [{"id", "name", "codes"}], "excluded_traces": [{"trace_id", "code"}],
   "warnings": [{"code", "message"}], "holdout" (when traces were held
   out: {"mode", "reason", "order", "traces": [{"trace_id",
   "started_at"}]}), "outputs": {"workflow", "report", "workflows"},
   "bundle" (with --bundle: {"path", "kind", "risk_level",
   "promotion_status", "promotion_reasons", "fixtures", "skill_accepted"}),
   "bundles" (with --bundles: a list of the same, each with its
   "candidate_id")}`

func newMineCmd(e *env) *cobra.Command {
	f := &mineFlags{}
	cmd := &cobra.Command{
		Use:   "mine --from DIR [--out FILE] [--report FILE] [flags]",
		Short: "Find the procedures agents repeat and write them as workflows",
		Long:  mineDoc,
		Example: `  crystallize mine --from examples/traces --out workflow.star --report report.json
  crystallize mine --from runs/ --min-examples 5 --out-dir workflows/ --json
  crystallize mine --store --out-dir workflows/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMine(cmd.Context(), e, f, cmd.Flags())
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *mineFlags) validate() error {
	switch {
	case f.store && f.from != "":
		return usagef("--from and --store: pass one (crystallize import --from DIR --store adds a directory to the store)")
	case f.from == "" && !f.store:
		return usagef("--from is required: the directory of traces to mine")
	}
	// The ranges are the libraries'; a flag's value is given, so zero
	// is checked rather than read as the default.
	for _, c := range []struct {
		flag string
		err  error
	}{
		{"--min-examples", mine.CheckMinExamples(f.minExamples)},
		{"--max-candidates", mine.CheckMaxCandidates(f.maxCandidates)},
		{"--miner", mine.CheckMode(f.miner)},
		{"--passes", pipeline.CheckPasses(f.passes)},
		{"--holdout", pipeline.CheckHoldout(f.holdout)},
	} {
		if c.err != nil {
			return flagError(c.flag, c.err)
		}
	}
	switch f.progress {
	case progressAuto, progressBar, progressJSON, progressNone:
	default:
		return usagef("--progress must be auto, bar, json or none, got %q", f.progress)
	}
	if len(f.shadowFrom) > 0 && f.holdout != pipeline.HoldoutAuto && f.holdout != pipeline.HoldoutNone {
		return usagef("--holdout %s and --shadow-from: pass one (the held-out traces are either the corpus's most recent or another directory's)", f.holdout)
	}
	if f.out != "" && f.out == f.report {
		return usagef("--out and --report name the same file %s", f.out)
	}
	if f.bundle != "" && f.bundles != "" {
		return usagef("--bundle and --bundles: pass one (--bundle writes the selected candidate's bundle, --bundles one for every safe candidate)")
	}
	if err := bundle.CheckMinConfidence(f.minConfidence); err != nil {
		return flagError("--promotion-min-confidence", err)
	}
	return nil
}

func runMine(ctx context.Context, e *env, f *mineFlags, flags *pflag.FlagSet) error {
	if err := f.validate(); err != nil {
		return err
	}
	for _, dir := range f.shadowFrom {
		st, err := os.Stat(dir)
		if err != nil {
			return usagef("--shadow-from %s: %v", dir, unwrapPathError(err))
		}
		if !st.IsDir() {
			return usagef("--shadow-from %s: not a directory", dir)
		}
	}
	generatedAt, err := generatedAt(e.getenv)
	if err != nil {
		return err
	}

	rules, err := agentRules(f.config)
	if err != nil {
		return err
	}
	prices, err := runconfig.PriceTable(f.config)
	if err != nil {
		return err
	}
	var stored *tracestore.Corpus
	storeWarning := func() string { return "" }
	if f.store {
		c, closeStore, warning, err := openStoreCorpus(ctx, f.stateDir)
		if err != nil {
			return err
		}
		defer closeStore()
		stored, storeWarning = c, warning
		if e.storeCorpus != nil {
			e.storeCorpus(c)
		}
	}
	outputs := pipeline.Outputs{
		Out: f.out, OutDir: f.outDir, Report: f.report, Bundle: f.bundle, Bundles: f.bundles, EvalPack: f.evalPack,
		Codegen: codegen.Options{PackageName: f.packageName},
		BundleOptions: bundle.Options{
			PackageName: f.packageName, PackageVersion: f.packageVersion,
			Author: f.author, Approver: f.approver, Team: f.team, Repo: f.repo,
			EvalPackLink: f.evalPackLink,
			GeneratedAt:  generatedAt, GeneratorVersion: toolVersion(),
			MinConfidence: f.minConfidence, MinExamples: f.minExamples,
			// A confidence of 0 the user gave is 0, not the default.
			MinConfidenceSet: flags.Changed("promotion-min-confidence"),
		},
	}
	// Held-out directories replace the corpus's own hold-out.
	holdout := f.holdout
	if len(f.shadowFrom) > 0 {
		holdout = pipeline.HoldoutNone
	}
	prog := newMineProgress(e, f)
	report, pub, err := pipeline.MineDir(ctx, pipeline.MineDirOptions{
		Corpus: pipeline.CorpusOptions{
			Dir: f.from, Store: stored, Passes: f.passes, SkipInvalid: f.skipInvalid, Rules: rules, Holdout: holdout,
			Mine: mine.Options{
				MinExamples:   f.minExamples,
				MaxCandidates: f.maxCandidates,
				WorkflowName:  f.workflowName,
				GeneratedAt:   generatedAt,
				Mode:          f.miner,
				Prices:        prices,
			},
			// GOMEMLIMIT, when set, wins over the limit sized to the
			// corpus.
			MemoryLimit: e.getenv("GOMEMLIMIT") == "",
			Progress:    prog.hooks(),
		},
		Heldout: pipeline.HeldoutOptions{Dirs: f.shadowFrom, SkipInvalid: f.skipInvalid, Rules: rules},
		Outputs: outputs,
	})
	if err != nil {
		return err
	}
	warning := storeWarning()
	printStoreWarning(e, warning)
	err = printMinedWarning(e, report, outputs, pub, f.asJSON, warning)
	var ee exitError
	if (err == nil || errors.As(err, &ee)) && f.out == "" && f.outDir == "" && f.report == "" && pub.Manifest == nil && pub.EvalPack == "" && f.bundles == "" {
		fmt.Fprintln(e.stderr, "crystallize: nothing written; pass --out, --report, --out-dir, --bundle, --bundles or --eval-pack to save the results")
	}
	return err
}

// printMined prints what mining wrote (mine, session codify): the
// summary, or with --json its JSON, and the bundle's; no candidate
// selected exits 1, after the summary says why.
func printMined(e *env, report *candidate.Report, o pipeline.Outputs, pub *pipeline.Published, asJSON bool) error {
	return printMinedWarning(e, report, o, pub, asJSON, "")
}

// printMinedWarning is printMined with a warning about the run besides
// the report's (a read-only trace store), which --json lists with the
// report's warnings as code store_read_only; the caller has written it on
// stderr.
func printMinedWarning(e *env, report *candidate.Report, o pipeline.Outputs, pub *pipeline.Published, asJSON bool, warning string) error {
	sum := pipeline.Summarize(report, o, pub)
	if warning != "" {
		sum.Warnings = append(sum.Warnings, pipeline.SummaryWarning{Code: "store_read_only", Message: warning})
	}
	err := printResult(e, asJSON, sum, func(w io.Writer) {
		writeSummary(w, report, o, pub.Workflows)
		if o.EvalPack != "" {
			if pub.EvalPack != "" {
				fmt.Fprintf(w, "Eval pack: %s\n", pub.EvalPack)
			} else {
				fmt.Fprintf(w, "Eval pack: not written to %s: no candidate to evaluate\n", o.EvalPack)
			}
		}
		if pub.Manifest != nil {
			writeBundleSummary(w, o.Bundle, pub.Manifest)
		}
		for _, b := range pub.Bundles {
			writeBundleSummary(w, b.Dir, b.Manifest)
		}
		if o.Bundles != "" && len(pub.Bundles) == 0 {
			fmt.Fprintf(w, "Bundles: none written to %s: no safe candidate\n", o.Bundles)
		}
	})
	if err != nil {
		return err
	}
	if err := report.Err(); err != nil {
		return failure(err)
	}
	return nil
}

// generatedAt is the report timestamp: sourceDate in RFC 3339.
func generatedAt(getenv func(string) string) (string, error) {
	t, err := sourceDate(getenv)
	if err != nil {
		return "", err
	}
	return t.Format(time.RFC3339), nil
}

// sourceDate is SOURCE_DATE_EPOCH when set (the reproducible-builds
// convention), else the current time, in UTC.
func sourceDate(getenv func(string) string) (time.Time, error) {
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a non-negative integer number of seconds", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func writeSummary(w io.Writer, r *candidate.Report, o pipeline.Outputs, written []string) {
	fmt.Fprintf(w, "Traces: %d eligible, %d excluded", r.SourceTraceCount, r.ExcludedTraceCount)
	if len(r.SkippedFiles) > 0 {
		fmt.Fprintf(w, ", %d skipped as invalid", len(r.SkippedFiles))
	}
	fmt.Fprintf(w, " (%d actions, %d distinct action signatures)\n", r.Mining.Actions, r.Mining.DistinctSignatures)
	if m := r.Mining; m.Miner != "" {
		fmt.Fprintf(w, "Mining: %s, at most %d actions between steps; %d observations skipped, %d failed attempts folded into retried steps, %d noise steps dropped\n",
			m.Miner, m.MaxGap, m.ObservationsSkipped, m.RetriesCollapsed, m.NoiseStepsDropped)
	}
	// Excluded traces are listed by reason, a few each, so that a corpus
	// with many sessions without a tool call does not bury the results.
	const perCode = 5
	shown := map[string]int{}
	for _, ex := range r.ExcludedTraces {
		if shown[ex.Code]++; shown[ex.Code] <= perCode {
			fmt.Fprintf(w, "  excluded %s: %s (%s)\n", ex.TraceID, ex.Code, ex.Message)
		}
	}
	for _, code := range sortedCodes(shown) {
		if n := shown[code] - perCode; n > 0 {
			fmt.Fprintf(w, "  excluded %d more: %s (see the report)\n", n, code)
		}
	}
	for _, s := range r.SkippedFiles {
		// Each error already starts with the file, line and JSON path.
		for _, msg := range s.Errors {
			fmt.Fprintf(w, "  skipped %s\n", msg)
		}
	}
	if h := r.Holdout; h != nil {
		fmt.Fprintf(w, "Held out: %s (%s)\n", heldoutList(h), h.Reason)
		if h.Mode == pipeline.HoldoutAuto {
			// A procedure done in exactly --min-examples sessions, one of
			// them among the held-out ones, is not mined: say so, and
			// what finding it costs.
			fmt.Fprintf(w, "  a procedure done in only %d sessions is missed when one is held out: --holdout none mines every session, and its candidates stay blocked until held-out runs (--shadow-from) pass\n", r.Mining.MinExamples)
		}
	}
	// Support counts sessions; where every session is one trace the
	// two are the same and the summary says traces.
	unit := "traces"
	if r.Mining.EligibleSessions > 0 {
		unit = "sessions"
	}
	fmt.Fprintf(w, "Candidates: %d safe, %d rejected (from %d repeated sequences in ≥%d %s)\n",
		len(r.Candidates), len(r.RejectedCandidates), r.Mining.RepeatsFound, r.Mining.MinExamples, unit)
	for i := range r.Candidates {
		c := &r.Candidates[i]
		mark := " "
		if r.SelectedCandidateID != nil && *r.SelectedCandidateID == c.ID {
			mark = "*"
		}
		seen := fmt.Sprintf("%d %s", c.Support, unit)
		if c.Support != len(c.Examples) {
			seen = fmt.Sprintf("%d sessions (%d traces)", c.Support, len(c.Examples))
		}
		fmt.Fprintf(w, " %s %s %s: %d steps in %s, confidence %.2f", mark, c.ID, c.Name, len(c.Steps), seen, c.Confidence)
		if n := c.FuzzySteps(); n > 0 {
			fmt.Fprintf(w, ", %d fuzzy", n)
		}
		fmt.Fprintln(w)
		if len(c.Parameters) > 0 {
			fmt.Fprintf(w, "      parameters: %s\n", strings.Join(c.ParameterNames(), ", "))
		}
		for _, d := range c.DerivedParameters {
			fmt.Fprintf(w, "      derived: %s = %s (checked on %d source examples, %d held-out traces)\n", d.Name, d.Expression, d.SourceChecks, d.HeldoutChecks)
		}
		for _, b := range c.Bindings {
			fmt.Fprintf(w, "      data flow: step %d %s ← step %d %s %s\n", b.Step, strings.TrimPrefix(b.Path, "parameters."), b.FromStep, b.FromField, b.FromPath)
		}
		if sh := c.Shadow; sh != nil {
			fmt.Fprintf(w, "      shadow: %s\n", shadowSummary(sh))
		}
		for _, st := range c.Steps {
			// Runs of the workflow among the traces that needed the
			// fallback at this step: the world no longer matches it.
			if st.Fallbacks > 0 {
				fmt.Fprintf(w, "      fallback: step %d %s needed it in %d of %d traces\n", st.Index, st.Name, st.Fallbacks, len(c.Examples))
			}
		}
		fmt.Fprintf(w, "      saves per run: %.1f model calls, %.0f tokens, $%.4f; still needs %.1f model calls\n",
			c.Savings.PerRun.ModelCallsAvoided, c.Savings.PerRun.InputTokensAvoided+c.Savings.PerRun.OutputTokensAvoided,
			c.Savings.PerRun.EstimatedCostUSDAvoided, c.Savings.PerRun.RemainingModelCalls)
		if len(c.Savings.UnpricedModels) > 0 {
			fmt.Fprintf(w, "      unpriced: %s (not in the dollars; price them with [prices.\"MODEL\"] in %s)\n", unpricedList(c.Savings.UnpricedModels), runconfig.ConfigFile)
		}
	}
	for i := range r.RejectedCandidates {
		c := &r.RejectedCandidates[i]
		fmt.Fprintf(w, "  x %s %s: rejected: %s\n", c.ID, c.Name, problemSummary(c.RejectionReasons))
		// Drift is the one rejection a reviewer must locate: say where.
		for _, p := range c.RejectionReasons {
			if p.Code == candidate.CodeReceiptDrift {
				fmt.Fprintf(w, "      receipt drift in %s at %s\n", p.TraceID, p.Path)
			}
		}
	}
	for _, p := range r.Warnings {
		fmt.Fprintf(w, "Warning: %s: %s\n", p.Code, p.Message)
	}
	if sel := r.Selected(); sel != nil {
		fmt.Fprintf(w, "Selected: %s (%s). Review it before promotion: nothing runs until it is approved.\n", sel.ID, sel.Name)
	} else {
		fmt.Fprintln(w, "Selected: none: no safe crystallization candidate")
	}
	writeWrote(w, slices.Concat([]string{o.Out}, written, []string{o.Report})...)
}

// heldoutList names the held-out traces, a few of them, with their
// start times.
func heldoutList(h *candidate.Holdout) string {
	const shown = 5
	var parts []string
	for i, t := range h.Traces {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more (see the report)", len(h.Traces)-shown))
			break
		}
		s := t.TraceID
		if t.StartedAt != "" {
			s += " " + t.StartedAt
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// shadowSummary says in one line how the candidate fared against its
// source examples and the held-out traces.
func shadowSummary(sh *candidate.ShadowReport) string {
	t := sh.Tally()
	srcPass, src, hoPass, ho, unmatched := t.SourcePassed, t.Source, t.HeldoutPassed, t.Heldout, t.HeldoutUnmatched
	s := fmt.Sprintf("%d/%d source examples replay", srcPass, src)
	if t.SourceNotListed > 0 {
		s += fmt.Sprintf(" (%d of them counted, not listed, in the report)", t.SourceNotListed)
	}
	switch {
	case ho == 0 && unmatched == 0:
		s += "; no held-out trace (pass --shadow-from)"
	default:
		s += fmt.Sprintf(", %d/%d held-out traces pass", hoPass, ho)
		if unmatched > 0 {
			s += fmt.Sprintf(", %d held-out traces do not contain it", unmatched)
		}
	}
	for _, t := range sh.Traces {
		if t.Status == candidate.StatusFail {
			for _, d := range t.Details {
				s += fmt.Sprintf("; %s %s: %s", t.TraceID, d.Code, d.Message)
				break
			}
		}
	}
	return s
}

func problemSummary(ps []candidate.Problem) string {
	var parts []string
	for _, p := range ps {
		s := p.Code
		if p.Step > 0 {
			s += fmt.Sprintf(" (step %d)", p.Step)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// writeBundleSummary prints what the bundle holds and what promotion
// still needs.
func writeBundleSummary(w io.Writer, dir string, m *bundle.Manifest) {
	fmt.Fprintf(w, "Bundle: %s (kind=%s schema_version=%d fixtures=%d risk=%s)\n", dir, m.Kind, m.SchemaVersion, len(m.Fixtures), m.RiskLevel)
	skill := "rejected (no SKILL.md written; see report.json rejected_skill_candidates)"
	if m.Skill != nil {
		skill = "accepted: " + m.Skill.Path
	}
	fmt.Fprintf(w, "Skill: %s\n", skill)
	fmt.Fprintf(w, "Promotion: %s\n", promotionStatus(m))
	for _, d := range m.Promotion.DivergenceHistory {
		fmt.Fprintf(w, "  divergence in %s at %s: %s\n", d.TraceID, d.Path, d.Message)
	}
	if m.Promotion.Criteria.Status == bundle.StatusNeedsApproval {
		fmt.Fprintf(w, "Next: crystallize review %s (a page with the graph, the evidence and Approve), or read it and run crystallize approve %s --approver NAME\n", dir, dir)
	}
}

// sortedCodes returns the keys of counts in order.
func sortedCodes(counts map[string]int) []string {
	codes := make([]string, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

// unpricedList names the unpriced models of a candidate's savings, the
// tokens of no named model as "(no model named)".
func unpricedList(models []string) string {
	names := make([]string, len(models))
	for i, m := range models {
		if m == "" {
			m = "(no model named)"
		}
		names[i] = m
	}
	return strings.Join(names, ", ")
}
