package mine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// CodeSingleTrace is the warning of a candidate built from one trace: with
// one example nothing can be seen to vary, so every value is a literal.
const CodeSingleTrace = "single_trace"

// ErrEmptyTrace is returned by Single for a trace without actions.
var ErrEmptyTrace = errors.New("trace has no actions")

// Single builds the candidate of one trace whose every action is a step:
// the trace is the workflow. It is for importers whose input is one
// complete, reviewed run (a release-harness fixture) rather than a corpus
// in which a procedure repeats; there is no repeated-sequence mining.
//
// The candidate is built exactly as Mine builds one (side effects,
// approvals, fuzzy segments, expected outputs, receipts, savings), with
// the trace as its only example. One example cannot tell a parameter from
// a constant, so every argument is a constant and the report says so with
// a CodeSingleTrace warning; support is 1 of 1. The exception are the
// values the run declares as its parameters (Options.RunParameters): they
// are parameters, and the arguments made from them expressions over them
// (declareParameters). A fuzzy step has no expected output: one model
// answer shows no stable one; nor has a step that only reads (readOnly),
// whose output is the state it observed. The candidate compares arguments in shadow
// replay (candidate.ArgumentsCompared), so a held-out run is held to
// every value but its parameters. Options.WorkflowName names it,
// Options.GeneratedAt is copied; the other options do not apply.
//
// A trace that Excluded rejects yields a report with the exclusion and no
// candidate, as Mine would; a candidate with rejection reasons is listed
// as rejected and not selected. Single returns an error only for a
// trace without actions or a cancelled context. t is not modified.
func Single(ctx context.Context, t *trace.Trace, opts Options) (*candidate.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(t.Actions) == 0 {
		return nil, fmt.Errorf("trace %s: %w", t.ID, ErrEmptyTrace)
	}
	report := &candidate.Report{
		Version:            candidate.ReportVersion,
		GeneratedAt:        opts.GeneratedAt,
		ExcludedTraces:     []candidate.Exclusion{},
		SkippedFiles:       []candidate.SkippedFile{},
		Candidates:         []candidate.Candidate{},
		RejectedCandidates: []candidate.Candidate{},
		Warnings:           []candidate.Problem{},
		InputFormat:        InputFormat(),
	}
	sigs := map[string]bool{}
	for i := range t.Actions {
		sigs[t.Actions[i].Signature()] = true
	}
	report.Mining = candidate.MiningSummary{
		MinExamples:        1,
		MaxCandidates:      1,
		Actions:            len(t.Actions),
		DistinctSignatures: len(sigs),
	}
	if ex, ok := Excluded(t); ok {
		report.ExcludedTraces = append(report.ExcludedTraces, ex)
		report.ExcludedTraceCount = 1
		report.Warnings = append(report.Warnings, candidate.Problem{
			Code:    candidate.CodeNoCandidate,
			Message: fmt.Sprintf("no safe crystallization candidate: trace %s is excluded (%s)", t.ID, ex.Code),
		})
		return report, nil
	}
	report.SourceTraceCount = 1
	report.Mining.EligibleTraces = 1

	b := builder{traces: []*trace.Trace{t}, eligible: 1, prices: opts.prices()}
	c := b.build(contiguous([]Occurrence{{Seq: 0, Start: 0}}, len(t.Actions)), len(t.Actions))
	report.Mining.CandidatesBuilt = 1
	c.ArgumentsCompared = true
	dropModelOutputs(c)
	msg := "built from one trace: every value is a literal, since one example cannot show which fields vary"
	if names := declareParameters(c, opts.RunParameters); len(names) > 0 {
		msg = fmt.Sprintf("built from one trace: every value is a literal except the parameters the run declares (%s) and the values made from them, since one example cannot show which other fields vary", strings.Join(names, ", "))
	}
	c.Warnings = append(c.Warnings, candidate.Problem{Code: CodeSingleTrace, Message: msg})
	if opts.WorkflowName != "" {
		c.Name = candidate.Identifier(opts.WorkflowName)
	}
	if !c.Safe() {
		report.RejectedCandidates = append(report.RejectedCandidates, *c)
		report.Warnings = append(report.Warnings, candidate.Problem{
			Code:    candidate.CodeNoCandidate,
			Message: "no safe crystallization candidate: the trace's candidate is rejected",
		})
		return report, nil
	}
	report.Candidates = append(report.Candidates, *c)
	id := c.ID
	report.SelectedCandidateID = &id
	return report, nil
}
