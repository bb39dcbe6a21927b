package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/persona"
)

type personaFlags struct {
	history              string
	persona              string
	minExamples          int
	hostedHistoryDays    int
	minHostedHistoryDays int
	bundle               string
	packageName          string
	approver             string
	asJSON               bool
	// hostedGiven is true when --hosted-history-days was given: zero is
	// a valid number of days, so the flag's value cannot say it.
	hostedGiven bool
}

func (f *personaFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.history, "history", "", "repair-worker history to read (JSON Lines, one record per line)")
	fs.StringVar(&f.persona, "persona", "", "persona whose repairs to crystallize")
	fs.IntVar(&f.minExamples, "min-examples", persona.DefaultMinExamples, "clean records (a successful status, no validation errors) of one recurrence group required; at least 2")
	fs.IntVar(&f.hostedHistoryDays, "hosted-history-days", 0, "days of hosted history the persona has, as its host knows it (default: whole days between the first and last clean record)")
	fs.IntVar(&f.minHostedHistoryDays, "min-hosted-history-days", persona.DefaultMinHostedHistoryDays, "days of hosted history required; 0 requires none")
	fs.StringVar(&f.bundle, "bundle", "", "when the decision is proposed, write the review bundle into this directory")
	fs.StringVar(&f.packageName, "package-name", "", "persona package the step is meant for, recorded in the bundle")
	fs.StringVar(&f.approver, "approver", "", "person expected to approve, recorded in the bundle (never an approval)")
	fs.BoolVar(&f.asJSON, "json", false, "print the decision as JSON on stdout")
}

const personaDoc = `persona reads a persona's repair-worker history (JSON Lines of records
{persona, worker, status, validation_errors, bundle, result,
downstream_action, agent_loop, finished_at}) and decides whether one
persona's calls of its repair worker recur exactly, so the worker's model
loop can become a deterministic step of the persona's own code.

Only exact recurrence is proposed. The persona's clean records (status
success, succeeded, ok, completed, passed or done in any case, and no
validation errors) are grouped by the exact recurrence key: worker, input
shape of the bundle, output shape of the result (a shape is the sha256 of
the structure, member names and JSON types, not the values) and
downstream action. A group with at least --min-examples records spanning
at least --min-hosted-history-days days (between its first and last
finished_at, unless --hosted-history-days says how long the persona has
been hosted) is a candidate. The strongest group is decided on: proposed
when it is a candidate, gated (not enough records or history yet)
otherwise; every other group is listed with its reasons, so one record
that went another way does not veto the rest. A status that is neither a
known success nor a known failure is a warning that names it. The
decision is rejected when the candidate built from the chosen group does
not hold under mining or shadow comparison.

A proposal is a candidate of three steps (read the repair bundle, the
worker's step, the downstream action), mined from the matched records and
shadow-compared with every one of them: each record's input shape, result
shape and downstream action against the candidate's. Its workflow is a
literal Starlark patch, def <persona>_<worker>_step(ctx, bundle), that
returns the recurring result: constant members as literals, members that
equal a bundle member as reads of it. It is review material and is never
applied. With --bundle it is written as a review bundle that passes
crystallize validate and crystallize shadow; promotion then says what it
still needs (held-out runs, a human approval).

Output:
  Persona: NAME worker=W decision=proposed|gated|rejected examples=N history_days=D
    CODE: MESSAGE                                  (reasons, then warnings)
  Group: worker=W downstream=A examples=N history_days=D status=candidate|gated lines=L: CODES
                                                   (each other recurrence group)
  Candidate: ID step=FUNC shadow=PASSED/COMPARED   (proposed)
  Savings: model_calls=… input_tokens=… output_tokens=… cost_usd=… wall_ms=… (per run: …)
  Bundle: OUT (kind=K risk=R promotion=STATUS: REASONS)

Exit status: 0 when proposed, 1 when gated or rejected or on error, 2 on
a usage error. A malformed history reports every bad line as
FILE:LINE: $.path: message.

--json prints instead:
  {"persona", "worker", "decision", "records", "examples", "history_days",
   "history_source", "min_examples", "min_hosted_history_days",
   "input_shape", "output_shape", "downstream_action", "lines",
   "groups": [{"worker", "input_shape", "output_shape",
     "downstream_action", "examples", "history_days", "lines", "status",
     "reasons"}] (the chosen group first),
   "reasons": [{"code", "message", "path"}], "warnings": [...],
   "candidate_id", "step", "savings" (candidate savings, with per_run),
   "shadow": {"compared", "passed", "pass"}, "bundle": {"path", "kind",
   "risk_level", "promotion_status", "promotion_reasons"}}
  where the candidate fields are null unless the decision is proposed.`

func newPersonaCmd(e *env) *cobra.Command {
	f := &personaFlags{}
	cmd := &cobra.Command{
		Use:     "persona --history FILE --persona NAME [--bundle OUT] [flags]",
		Short:   "Propose a deterministic step for a persona's recurring repair-worker calls",
		Long:    personaDoc,
		Example: `  crystallize persona --history examples/persona/history.jsonl --persona merge_captain --bundle bundles/merge-captain`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.hostedGiven = cmd.Flags().Changed("hosted-history-days")
			return runPersona(cmd.Context(), e, f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *personaFlags) validate() error {
	switch {
	case f.history == "":
		return usagef("--history is required: the repair-worker history file")
	case f.persona == "":
		return usagef("--persona is required: the persona whose repairs to crystallize")
	}
	// The ranges are the persona package's; a flag's value is given, so
	// zero is checked rather than read as the default.
	if err := persona.CheckMinExamples(f.minExamples); err != nil {
		return flagError("--min-examples", err)
	}
	if err := persona.CheckHistoryDays("MinHostedHistoryDays", f.minHostedHistoryDays); err != nil {
		return flagError("--min-hosted-history-days", err)
	}
	if f.hostedGiven {
		if err := persona.CheckHistoryDays("HostedHistoryDays", f.hostedHistoryDays); err != nil {
			return flagError("--hosted-history-days", err)
		}
	}
	return nil
}

// options turns the flags into persona.Options: a minimum of 0 days is
// "none", which Options spells as a negative number.
func (f *personaFlags) options(generatedAt string) persona.Options {
	o := persona.Options{Persona: f.persona, MinExamples: f.minExamples, MinHostedHistoryDays: f.minHostedHistoryDays, GeneratedAt: generatedAt}
	if o.MinHostedHistoryDays == 0 {
		o.MinHostedHistoryDays = -1
	}
	if f.hostedGiven {
		d := f.hostedHistoryDays
		o.HostedHistoryDays = &d
	}
	return o
}

// errNotProposed is the failure of a persona run whose decision is gated
// or rejected; the decision and its reasons are already on stdout.
var errNotProposed = errors.New("no persona step proposed")

func runPersona(ctx context.Context, e *env, f *personaFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	generatedAt, err := generatedAt(e.getenv)
	if err != nil {
		return err
	}
	records, err := persona.Load(f.history)
	if err != nil {
		return fmt.Errorf("reading persona history %s: %w", f.history, err)
	}
	res, err := persona.Crystallize(ctx, records, f.options(generatedAt))
	if err != nil {
		return err
	}
	var m *bundle.Manifest
	if res.Proposal != nil && f.bundle != "" {
		m, err = res.WriteBundle(ctx, f.bundle, bundle.Options{
			PackageName: f.packageName, Approver: f.approver, GeneratedAt: generatedAt,
			GeneratorVersion: toolVersion(),
		})
		if err != nil {
			return err
		}
	}
	if f.asJSON {
		err = writeJSON(e.stdout, res.Summary(f.bundle, m))
	} else {
		writePersonaSummary(e.stdout, f, res, m)
	}
	switch {
	case err != nil:
		return err
	case res.Decision != persona.Proposed:
		return failuref("%w: persona %s is %s", errNotProposed, res.Persona, res.Decision)
	}
	return nil
}

func writePersonaSummary(w io.Writer, f *personaFlags, res *persona.Result, m *bundle.Manifest) {
	worker := res.Worker
	if worker == "" {
		worker = "none"
	}
	fmt.Fprintf(w, "Persona: %s worker=%s decision=%s examples=%d history_days=%d\n", res.Persona, worker, res.Decision, res.Examples, res.HistoryDays)
	for _, p := range res.Reasons {
		fmt.Fprintf(w, "  %s: %s\n", p.Code, p.Message)
	}
	for _, p := range res.Warnings {
		fmt.Fprintf(w, "  warning %s: %s\n", p.Code, p.Message)
	}
	if len(res.Groups) > 1 {
		for _, g := range res.Groups[1:] {
			var codes []string
			for _, r := range g.Reasons {
				codes = append(codes, r.Code)
			}
			lines := make([]string, len(g.Lines))
			for i, l := range g.Lines {
				lines[i] = strconv.Itoa(l)
			}
			fmt.Fprintf(w, "  Group: worker=%s downstream=%s examples=%d history_days=%d status=%s lines=%s: %s\n",
				g.Worker, strconv.Quote(g.DownstreamAction), g.Examples, g.HistoryDays, g.Status, strings.Join(lines, ","), strings.Join(codes, ", "))
		}
	}
	p := res.Proposal
	if p == nil {
		if f.bundle != "" {
			fmt.Fprintf(w, "Bundle: none written (decision %s)\n", res.Decision)
		}
		return
	}
	c := p.Candidate
	passed, compared := persona.ShadowCounts(c.Shadow)
	fmt.Fprintf(w, "Candidate: %s step=%s shadow=%d/%d\n", c.ID, p.FuncName, passed, compared)
	s := c.Savings
	fmt.Fprintf(w, "Savings: model_calls=%d input_tokens=%d output_tokens=%d cost_usd=%.4f wall_ms=%d (per run: model_calls=%g input_tokens=%g output_tokens=%g cost_usd=%.4f wall_ms=%g)\n",
		s.ModelCallsAvoided, s.InputTokensAvoided, s.OutputTokensAvoided, s.EstimatedCostUSDAvoided, s.WallMSAvoided,
		s.PerRun.ModelCallsAvoided, s.PerRun.InputTokensAvoided, s.PerRun.OutputTokensAvoided, s.PerRun.EstimatedCostUSDAvoided, s.PerRun.WallMSAvoided)
	if m != nil {
		codes := m.PromotionCodes()
		fmt.Fprintf(w, "Bundle: %s (kind=%s risk=%s promotion=%s", f.bundle, m.Kind, m.RiskLevel, m.Promotion.Criteria.Status)
		if len(codes) > 0 {
			fmt.Fprintf(w, ": %s", strings.Join(codes, ", "))
		}
		fmt.Fprintln(w, ")")
	}
}
