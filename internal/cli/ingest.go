package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/source"
)

type ingestFlags struct {
	from         string
	bundle       string
	shadow       bool
	out          string
	report       string
	workflowName string
	packageName  string
	asJSON       bool
	shadowFrom   []string
}

func (f *ingestFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "release-harness fixture directory to ingest (manifest.json and its event streams)")
	fs.StringVar(&f.bundle, "bundle", "", "write the portable, redacted review bundle into this directory")
	fs.BoolVar(&f.shadow, "shadow", false, "after writing the bundle, re-run its shadow comparison from the bundle's own fixtures")
	fs.StringVar(&f.out, "out", "", "also write the workflow (Starlark) to this file")
	fs.StringVar(&f.report, "report", "", "also write the JSON report to this file")
	fs.StringVar(&f.workflowName, "workflow-name", "", "name of the workflow function (default: inferred from the release mode)")
	fs.StringVar(&f.packageName, "package-name", "", "package the workflow belongs to, recorded in the workflow header and the bundle")
	fs.StringArrayVar(&f.shadowFrom, "shadow-from", nil, "held-out release-harness run (or trace directory) to shadow-replay the candidate against (repeatable; never ingested)")
	summaryJSONFlag(fs, &f.asJSON)
}

const ingestDoc = `ingest reads one release-harness fixture directory (manifest.json with schema
release_harn.crystallization_input.v1 or .v3, an optional release-run.json,
and the streams deterministic-events.jsonl, agent-events.jsonl and
tool-observations.jsonl, each optional) and turns it into a review bundle
without mining: the run is the workflow. Every event becomes a step, in
timestamp order, except that a failure recorded in two streams (a failed
release step and the tool observation of it) is one step, run once.

Agent-authored steps (review attempts, recovery advice) stay model calls
behind explicit approvals (release_audit_review, recovery_review); every
other agent-authored step (review artifacts, a tool the agent ran, a row
type this version does not know) waits at release_audit_review. Recovery
advice is advisory only: the workflow runs neither a step that failed in the
run nor a later step that re-runs it before a person approves at
recovery_review. Side effects come from v3 rows' side_effects; a row that
does not declare them (every v1 row, or side_effects_known false) has
unknown side effects, which is not none: the step records
side_effects_known=false and the bundle's risk is at least medium.

The workflow runs the next release, not only this one: the release's
current_version, next_version, bump, latest_tag, base_branch and
target_release_branch (manifest.json release, else the release analysis)
are its parameters wherever a step passes one whole, and every other value
that holds them (a tag v1.2.3, a branch release/1.2.3, the message
"Release 1.2.3", a changelog heading, a side effect's ref) is an expression
over them, listed in report.json derived_parameters. The mode, the repository
and every other value stay literals.

report.json carries segment_summary (what is safe to automate and what needs
review) and recovery_summary (failures seen, a failure recorded in two
streams counted once; recovery-advice runs; whether advice was given for a
step that failed; the failed steps).

One run is one example and no held-out trace, so the bundle's promotion is
blocked until held-out runs are compared: --shadow-from DIR (repeatable)
names another release-harness run (or a trace directory) that the
candidate is shadow-replayed against, never ingested; a run with the
ingested run's id is refused, since it is not held out. The next release
matches with its own versions; a run that differs in anything else (a
step, an approval, a command, a side effect) does not, and an argument
that differs is reported as argument_differs with its path. A held-out run
that matches lifts heldout_required (approval is still required); one that
differs blocks promotion with heldout_failed. Without held-out runs
the bundle still passes crystallize validate and crystallize shadow.

Output, one line each:
  Ingest: from=DIR run_id=ID version=A->B candidate=ID
  Warning: missing_optional_file: MANIFEST: $.files.KEY: NAME is listed but not in the fixture directory; …
                                (each optional file the manifest lists but the directory lacks)
  Bundle: OUT (kind=K schema_version=1 fixtures=1)
  Segments: deterministic=N agentic=M (review-required: K)
  Recovery: shell_failures=N recovery_runs=M fed_into_agent=BOOL
  Shadow replay: candidate_id=ID compared=N pass=BOOL      (with --shadow)
  Promotion: STATUS (REASONS) risk=LEVEL

Exit status: 0 when a candidate was selected (and, with --shadow, its
replay passed and matches the recorded one), 1 otherwise or on error, 2 on a
usage error.

--json prints instead:
  {"from", "run_id", "schema", "current_version", "next_version",
   "selected_candidate_id", "bundle": {"path", "kind", "schema_version",
   "fixtures", "risk_level", "promotion_status", "promotion_reasons"},
   "segments": {"deterministic", "agentic", "review_required"},
   "recovery": {"shell_failures", "recovery_runs", "fed_into_agent",
   "failed_steps"}, "shadow": {"candidate_id", "compared", "pass",
   "matches"} (with --shadow), "outputs": {"workflow", "report"},
   "warnings": [{"code", "message"}]}`

func newIngestCmd(e *env) *cobra.Command {
	f := &ingestFlags{}
	cmd := &cobra.Command{
		Use:     "ingest --from DIR --bundle OUT [--shadow] [flags]",
		Short:   "Turn one release-harness run into a reviewed workflow bundle",
		Long:    ingestDoc,
		Example: `  crystallize ingest --from crystallization-input --bundle bundles/release --shadow`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), e, f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *ingestFlags) validate() error {
	switch {
	case f.from == "":
		return usagef("--from is required: the release-harness fixture directory")
	case f.bundle == "":
		return usagef("--bundle is required: the directory to write the review bundle into")
	case f.out != "" && f.out == f.report:
		return usagef("--out and --report name the same file %s", f.out)
	}
	return nil
}

func runIngest(ctx context.Context, e *env, f *ingestFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	generatedAt, err := generatedAt(e.getenv)
	if err != nil {
		return err
	}
	o := pipeline.IngestOptions{
		From: f.from, Shadow: f.shadow,
		Heldout: pipeline.HeldoutOptions{Dirs: f.shadowFrom},
		Mine:    mine.Options{WorkflowName: f.workflowName, GeneratedAt: generatedAt},
		Outputs: pipeline.Outputs{
			Out: f.out, Report: f.report, Bundle: f.bundle,
			Codegen:       codegen.Options{PackageName: f.packageName},
			BundleOptions: bundle.Options{PackageName: f.packageName, GeneratedAt: generatedAt, GeneratorVersion: toolVersion()},
		},
	}
	in, err := pipeline.Ingest(ctx, o)
	if err != nil {
		return err
	}
	if err := printResult(e, f.asJSON, in.Summary(o), func(w io.Writer) { writeIngestSummary(w, f, in) }); err != nil {
		return err
	}
	if err := in.Err(); err != nil {
		return failure(err)
	}
	return nil
}

func writeIngestSummary(w io.Writer, f *ingestFlags, in *pipeline.Ingested) {
	rh, r, m, sc := in.Harness, in.Report, in.Published.Manifest, in.Shadow
	id := "none"
	if r.SelectedCandidateID != nil {
		id = *r.SelectedCandidateID
	}
	fmt.Fprintf(w, "Ingest: from=%s run_id=%s version=%s->%s candidate=%s\n", f.from, rh.RunID, rh.CurrentVersion, rh.NextVersion, id)
	for _, m := range rh.Missing {
		fmt.Fprintf(w, "Warning: %s: %s\n", source.CodeMissingOptionalFile, m)
	}
	fmt.Fprintf(w, "Bundle: %s (kind=%s schema_version=%d fixtures=%d)\n", f.bundle, m.Kind, m.SchemaVersion, len(m.Fixtures))
	seg, rec := r.SegmentSummary, r.RecoverySummary
	fmt.Fprintf(w, "Segments: deterministic=%d agentic=%d (review-required: %d)\n", seg.DeterministicCount, seg.AgenticCount, len(seg.RequiresHumanReview))
	fmt.Fprintf(w, "Recovery: shell_failures=%d recovery_runs=%d fed_into_agent=%t\n", rec.ShellFailuresSeen, rec.RecoveryAdviceRuns, rec.FailuresFedIntoAgent)
	if sc != nil {
		fmt.Fprintf(w, "Shadow replay: candidate_id=%s compared=%d pass=%t\n", sc.CandidateID, sc.Compared, sc.Pass)
	}
	fmt.Fprintf(w, "Promotion: %s risk=%s\n", promotionStatus(m), m.RiskLevel)
	if m.Promotion.Criteria.Status == bundle.StatusBlocked && slices.Contains(m.PromotionCodes(), bundle.ReasonHeldoutRequired) {
		fmt.Fprintln(w, "  one run proves only itself: compare held-out runs (--shadow-from) before promotion; review the bundle meanwhile")
	}
	writeWrote(w, f.out, f.report)
}
