package persona

import (
	"context"
	"fmt"
	"strconv"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Proposal is the bundle-shaped candidate of a persona whose records recur
// exactly: what bundle.Write takes (Report, Candidate, Workflow as the
// workflow source, Traces as the sources).
type Proposal struct {
	// Report is the mining report after shadow comparison; Candidate is
	// its selected candidate, with Savings and Shadow filled in.
	Report    *candidate.Report
	Candidate *candidate.Candidate
	// FuncName is the patch's function, <persona>_<worker>_step, which is
	// also the candidate's name; Workflow is the patch.
	FuncName string
	Workflow []byte
	// Traces are the matched records as traces, in file order.
	Traces []*trace.Trace
}

// Names of the actions of a record's trace, and so of the candidate's
// steps.
const (
	StepReadBundle = "read_repair_bundle"
	StepDownstream = "downstream_action"
)

// unknownSideEffects is the side-effect kind of a step whose effects the
// records do not describe: unknown is not none. It is the kind the
// release-harness importer uses for the same case.
const unknownSideEffects = "unknown_side_effects"

// Crystallize runs Evaluate and, when the decision is Proposed, builds the
// proposal on the road every stage takes from traces to artifacts: the
// matched records become traces (Trace), pipeline.MineTraces mines their
// candidate with every record as an example, pipeline.Shadow compares it
// with every record, and the patch (Patch) becomes its workflow. A
// candidate that mining or the comparison rejects turns the decision into
// Rejected with reason candidate_rejected followed by the candidate's own
// reasons, so nothing that did not hold is proposed. It fails only for
// invalid options, a cancelled context or a patch that does not check,
// which would be a bug.
func Crystallize(ctx context.Context, records []*Record, opts Options) (*Result, error) {
	res, err := Evaluate(records, opts)
	if err != nil || res.Decision != Proposed {
		return res, err
	}
	fn := FuncName(res.Persona, res.Worker)
	traces := make([]*trace.Trace, len(res.matched))
	for i, r := range res.matched {
		traces[i] = Trace(r)
	}
	// Evaluate proposes only groups of at least two records (MinExamples
	// is at least 2), so MineTraces mines them rather than taking one
	// trace as the workflow.
	report, err := pipeline.MineTraces(ctx, traces, mine.Options{
		MinExamples:   len(traces),
		MaxCandidates: 1,
		WorkflowName:  fn,
		GeneratedAt:   opts.GeneratedAt,
	})
	if err != nil {
		return nil, fmt.Errorf("mining persona %s: %w", res.Persona, err)
	}
	if sel := report.Selected(); sel == nil || !whole(sel, len(traces)) {
		reject(res, report, "mining found no safe candidate covering every step of every matched record")
		return res, nil
	}
	if err := pipeline.Shadow(ctx, report, traces, nil, pipeline.Outputs{}); err != nil {
		return nil, err
	}
	sel := report.Selected()
	if sel == nil {
		reject(res, report, "the candidate failed the shadow comparison with the matched records")
		return res, nil
	}
	patch, warnings, err := Patch(res, sel.ID)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	// The reviewer of the bundle sees the same notes as the caller: the
	// candidate's warnings go into the manifest and report.json.
	sel.Warnings = append(sel.Warnings, res.Warnings...)
	res.Proposal = &Proposal{Report: report, Candidate: sel, FuncName: fn, Workflow: patch, Traces: traces}
	return res, nil
}

// whole reports whether c is the candidate of whole records: three steps,
// every record an example starting at its first action.
func whole(c *candidate.Candidate, records int) bool {
	if len(c.Steps) != 3 || len(c.Examples) != records {
		return false
	}
	for _, e := range c.Examples {
		if e.StartIndex != 0 {
			return false
		}
	}
	return true
}

// reject turns a proposal into a rejection carrying the rejected
// candidates' reasons and the report's warnings.
func reject(res *Result, report *candidate.Report, why string) {
	res.Decision = Rejected
	res.Reasons = append(res.Reasons, candidate.Problem{Code: CodeCandidateRejected, Message: why})
	for _, c := range report.RejectedCandidates {
		res.Reasons = append(res.Reasons, c.RejectionReasons...)
	}
	for _, w := range report.Warnings {
		if w.Code != candidate.CodeNoCandidate {
			res.Reasons = append(res.Reasons, w)
		}
	}
}

// FuncName is the name of the patch's function and of the candidate:
// <persona>_<worker>_step, passed through candidate.Identifier.
func FuncName(persona, worker string) string {
	return candidate.Identifier(persona + "_" + worker + "_step")
}

// TraceID is the id of the trace of the record of persona and worker on
// line: <persona>.<worker>.L<line> with both names made identifiers, so it
// is a safe fixture file name.
func TraceID(persona, worker string, line int) string {
	return candidate.Identifier(persona) + "." + candidate.Identifier(worker) + ".L" + strconv.Itoa(line)
}

// Trace returns the trace of one record, the unit mining and shadow
// comparison work on. Its three actions are the persona's procedure:
//
//  1. read_repair_bundle(persona, worker): inputs the bundle, output
//     {"input_shape": Shape(bundle)};
//  2. <worker>(bundle): the worker's step, output {"result_shape":
//     Shape(result)}, cost the worker's agent loop (what the step saves
//     once it is code), the result itself kept in metadata for review;
//  3. downstream_action(action): output {"downstream_action": action}.
//
// Outputs carry shapes, not values, so the candidate expects exactly what
// recurrence means and shadow comparison checks each record's input shape,
// result shape and downstream action against it. The worker's and the
// downstream steps record an unknown side effect: the history does not say
// what they changed, and unknown is not none. Every action is
// deterministic: the record is the evidence of what the step did, and the
// patch that replaces the worker's loop is code.
//
// The trace's id is TraceID, its source the record's file, its source
// hash the record's line hash; the record's values are shared, not copied,
// and must not be modified.
func Trace(r *Record) *trace.Trace {
	yes := true
	loop := r.AgentLoop
	meta := map[string]any{
		"persona":    r.Persona,
		"status":     r.Status,
		"line":       r.Line,
		"agent_loop": map[string]any{"model_calls": loop.ModelCalls, "input_tokens": loop.InputTokens, "output_tokens": loop.OutputTokens, "cost_usd": loop.CostUSD, "wall_ms": loop.WallMS},
	}
	if r.Result != nil {
		meta["result"] = r.Result
	}
	t := &trace.Trace{
		Version:    trace.SchemaVersion,
		ID:         TraceID(r.Persona, r.Worker, r.Line),
		Source:     r.File,
		SourceHash: r.SourceHash,
		FinishedAt: r.FinishedAt,
		Actions: []trace.Action{
			{
				ID:            "read_bundle",
				Kind:          trace.KindToolCall,
				Name:          StepReadBundle,
				Parameters:    map[string]any{"persona": r.Persona, "worker": r.Worker},
				Inputs:        r.Bundle,
				Output:        map[string]any{"input_shape": Shape(r.Bundle)},
				Deterministic: &yes,
			},
			{
				ID:            "worker",
				Kind:          trace.KindToolCall,
				Name:          r.Worker,
				Parameters:    map[string]any{"bundle": r.Bundle},
				Output:        map[string]any{"result_shape": Shape(resultValue(r))},
				SideEffects:   []trace.SideEffect{unknown(r.Worker, "the record does not say what the repair worker changed (files, commits, pushes)")},
				Cost:          &trace.Cost{ModelCalls: loop.ModelCalls, InputTokens: loop.InputTokens, OutputTokens: loop.OutputTokens, TotalCostUSD: loop.CostUSD, WallMS: loop.WallMS},
				Deterministic: &yes,
				Metadata:      meta,
			},
			{
				ID:            "downstream",
				Kind:          trace.KindToolCall,
				Name:          StepDownstream,
				Parameters:    map[string]any{"action": r.DownstreamAction},
				Output:        map[string]any{"downstream_action": r.DownstreamAction},
				SideEffects:   []trace.SideEffect{unknown(r.DownstreamAction, "the record does not say what the downstream action changed")},
				Deterministic: &yes,
			},
		},
		Metadata: map[string]any{"persona": r.Persona, "worker": r.Worker, "finished_at": r.FinishedAt},
	}
	trace.Normalize(t)
	return t
}

func unknown(target, why string) trace.SideEffect {
	return trace.SideEffect{
		Kind:     unknownSideEffects,
		Target:   target,
		Metadata: map[string]any{"side_effects_known": false, "reason": why},
	}
}

// WriteBundle writes the proposal of res as a review bundle into dir
// (pipeline.WriteBundle): its report, candidate, patch and matched
// records, with res's minimum of examples as the promotion's. o says
// who and what the bundle is for. A result without a proposal has no
// bundle to write.
func (res *Result) WriteBundle(ctx context.Context, dir string, o bundle.Options) (*bundle.Manifest, error) {
	p := res.Proposal
	if p == nil {
		return nil, fmt.Errorf("persona %s is %s: no proposal to write as a bundle", res.Persona, res.Decision)
	}
	o.MinExamples = res.MinExamples
	return pipeline.WriteBundle(ctx, dir, bundle.Input{
		Report: p.Report, Candidate: p.Candidate, Workflow: p.Workflow, Sources: p.Traces,
	}, o)
}
