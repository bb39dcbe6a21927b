// Package crystallize is the library interface of crystallize: it reads
// agent traces, mines the procedures they repeat, induces the skills that
// pass the replay gate, checks, compiles and renders task plans, and
// validates and reads review bundles.
//
// The package is deliberately small. Each function is one stage of the
// command line's pipeline, with the same checks and the same results as
// the command that runs it; the types are those of the stages themselves
// (aliases), so a report, a validation or a manifest read here is the one
// the command prints as JSON. Everything else stays internal and may
// change between versions.
//
// A typical caller loads traces, mines or induces, and reads the result:
//
//	traces, err := crystallize.LoadTraces(ctx, "runs/")
//	heldout, err := crystallize.LoadTraces(ctx, "heldout/")
//	induced, err := crystallize.InduceSkills(ctx, traces, heldout, crystallize.InduceOptions{})
//	for _, s := range induced.Accepted {
//		fmt.Printf("%s: %d of %d held-out runs replayed\n", s.Name,
//			s.Gate.HeldoutReplay.Passed, s.Gate.HeldoutReplay.Compared)
//	}
//
// The aliased types are the stages' own, with their JSON forms and their
// fields as documented there; their fields can be read from any module,
// but their packages cannot be imported.
package crystallize

import (
	"context"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/plan"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Trace is one decoded and normalized agent run: its goal, its actions in
// order, and where it was read from.
type Trace = trace.Trace

// Report is what mining found: the candidates in rank order with their
// evidence, the rejected ones, the excluded traces and the warnings. Its
// JSON form is the report the mine command writes.
type Report = candidate.Report

// Candidate is one mined procedure: its steps, parameters, examples and
// confidence.
type Candidate = candidate.Candidate

// InduceOptions controls InduceSkills; the zero value uses the mining
// defaults.
type InduceOptions = pipeline.InduceOptions

// Induced is what InduceSkills decided: the skills the replay gate
// admitted, those it did not with why, and the report they were decided
// from.
type Induced = pipeline.Induced

// Skill is an accepted skill: its name, its SKILL.md and the replay-gate
// receipt that admitted it.
type Skill = pipeline.Skill

// RejectedSkill is a skill the replay gate refused, with its reasons.
type RejectedSkill = pipeline.RejectedSkill

// PlanValidation is the result of ValidatePlan; its JSON form is the
// output of "crystallize plan validate --json".
type PlanValidation = plan.Validation

// WorkflowGraph is a task plan compiled to the graph the runtime
// executes; its JSON form is the output of "crystallize plan compile".
type WorkflowGraph = plan.Graph

// BundleValidation is the result of ValidateBundle; its JSON form is the
// output of "crystallize validate --json".
type BundleValidation = bundle.Validation

// Bundle is a review bundle's directory with its manifest.
type Bundle = bundle.Bundle

// LoadTraces reads every trace under path, a directory or one *.json or
// *.jsonl file: the project's own trace format, OpenTelemetry exports,
// composition reports, workflow run records and the session logs of the
// agents it knows (Claude Code, Codex, Gemini CLI), each detected from its
// content. Any bad file or line
// makes it return no traces and an error naming every problem at its file
// and JSON path.
func LoadTraces(ctx context.Context, path string) ([]*Trace, error) {
	res, err := source.Load(ctx, path, source.Options{})
	if err != nil {
		return nil, err
	}
	return res.Traces, nil
}

// CompositionTrace converts a composition report (the JSON object a
// composing agent runtime writes for one run, with "run" and "calls"
// members) into a trace. name names the report in errors and becomes the
// trace's source. The report is held to the rules of one LoadTraces
// reads: a member written twice is refused, since a reviewer could read
// one value while the other is used. An error names every problem at its
// JSON path.
func CompositionTrace(report []byte, name string) (*Trace, error) {
	var p trace.Parser
	v, err := p.Parse(report, name, 0)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, trace.ErrorList{{File: name, Path: "$", Msg: "expected object, got " + trace.TypeName(v)}}
	}
	return source.CompositionTrace(doc, name)
}

// MineOptions controls Mine. The zero value mines with the defaults.
type MineOptions struct {
	// MinExamples is the number of distinct traces a procedure must occur
	// in; zero means 2, and values below 2 are an error. It does not
	// apply to a single trace, which is the workflow.
	MinExamples int
	// MaxCandidates bounds the candidates reported; zero means the
	// default.
	MaxCandidates int
	// WorkflowName names the best candidate.
	WorkflowName string
}

// Mine finds the procedures repeated in traces and ranks them. One trace
// is taken as the workflow itself. Finding nothing is not an error: the
// report then has no candidates and its warnings say why. Mine does not
// shadow-replay the candidates; InduceSkills does.
func Mine(ctx context.Context, traces []*Trace, opts MineOptions) (*Report, error) {
	if len(traces) == 0 {
		return nil, pipeline.ErrNoTraces
	}
	for i, t := range traces {
		if t == nil {
			return nil, fmt.Errorf("traces[%d]: %w", i, pipeline.ErrNilTrace)
		}
	}
	return pipeline.MineTraces(ctx, traces, mine.Options{
		MinExamples:   opts.MinExamples,
		MaxCandidates: opts.MaxCandidates,
		WorkflowName:  opts.WorkflowName,
	})
}

// InduceSkills mines traces, shadow-replays every candidate against its
// own examples and the held-out traces, and admits a candidate's skill
// only when the candidate is safe, its examples replay, and at least one
// held-out trace containing the procedure was compared and passed. The
// traces are not modified.
func InduceSkills(ctx context.Context, traces, heldout []*Trace, opts InduceOptions) (*Induced, error) {
	return pipeline.Induce(ctx, traces, heldout, opts)
}

// ValidatePlan checks a task plan (JSON) and reports every error and
// warning with its code and JSON path. It accepts any input and never
// panics.
func ValidatePlan(data []byte) *PlanValidation {
	return plan.Validate(data)
}

// CompilePlan lowers a task plan to the workflow graph the runtime
// executes. A plan with any validation error is refused with an error that
// names file and the first error; the same plan always compiles to the
// same graph.
func CompilePlan(data []byte, file string) (*WorkflowGraph, error) {
	p, err := plan.Parse(data, file)
	if err != nil {
		return nil, err
	}
	return plan.Compile(p)
}

// RenderPlan renders a task plan as a Mermaid flowchart for review, as
// "crystallize plan mermaid" prints it. A plan with any validation error
// is refused as by CompilePlan.
func RenderPlan(data []byte, file string) (string, error) {
	p, err := plan.Parse(data, file)
	if err != nil {
		return "", err
	}
	return plan.Mermaid(p), nil
}

// ValidateBundle checks the review bundle in dir as "crystallize validate"
// does: the manifest, the workflow and its hash, the report,
// the skill, the fixtures, that no file holds a secret, and that the
// approval is for the current workflow. It never panics.
func ValidateBundle(dir string) *BundleValidation {
	return bundle.Validate(dir)
}

// ReadBundle reads the manifest of the bundle in dir, refusing one whose
// schema this version does not read. Like every command that opens a
// bundle, it removes the temporary files a change killed midway left in
// it. It checks nothing else: ValidateBundle checks the whole bundle.
func ReadBundle(dir string) (*Bundle, error) {
	return bundle.Read(dir)
}
