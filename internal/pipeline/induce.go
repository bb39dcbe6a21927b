package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ErrNoTraces is returned by Induce when it is given no source trace.
var ErrNoTraces = errors.New("no traces to induce skills from")

// ErrNilTrace is returned (wrapped, naming the list and index) for a nil
// entry in the source or held-out traces.
var ErrNilTrace = errors.New("nil trace")

// InduceOptions controls Induce. The zero value mines with the defaults of
// package mine and names candidates after their traces.
type InduceOptions struct {
	// MinExamples is the number of distinct traces a procedure must occur
	// in when there are several traces; zero means mine.DefaultMinExamples
	// (2). Values below 2 are an error (mine.ErrMinExamples). It does not
	// apply to a single trace, which is the workflow.
	MinExamples int
	// MaxCandidates bounds the safe candidates mined; zero means
	// mine.DefaultMaxCandidates.
	MaxCandidates int
	// WorkflowName names the best candidate (and so its skill); the others
	// are named after their traces' goals or steps.
	WorkflowName string
	// PackageName is recorded in each SKILL.md as the package the workflow
	// is meant for.
	PackageName string
}

// Skill is an accepted skill: its SKILL.md and the replay-gate receipt
// that admitted it.
type Skill struct {
	// CandidateID is the workflow candidate the skill was projected from.
	CandidateID string
	// ID is candidate.SkillID of the candidate and its workflow name.
	ID string
	// Name is the skill's name, which is also the directory a bundle
	// stores it in (skill/<Name>/SKILL.md).
	Name string
	// Markdown is the SKILL.md.
	Markdown []byte
	// Gate is the replay-gate receipt (gate.json is GateJSON of
	// it, skill.GateJSON).
	Gate skill.Gate
}

// RejectedSkill is a skill the replay gate did not admit, with why.
type RejectedSkill struct {
	CandidateID string
	ID          string
	Name        string
	// Reasons are the gate's rejection reasons, with the stable codes of
	// package skill: CodeCandidateRejected, CodeSourceReplayFailed,
	// CodeSourceReplayMissing, CodeHeldoutMissing and
	// CodeHeldoutReplayFailed.
	Reasons []candidate.Problem
	Gate    skill.Gate
}

// Induced is what Induce found.
type Induced struct {
	// Accepted are the skills the replay gate admitted, in candidate rank
	// order.
	Accepted []Skill
	// Rejected are the skills it did not: those of the safe candidates in
	// rank order, then those of the rejected candidates.
	Rejected []RejectedSkill
	// Report is the mining and shadow report the skills were decided
	// from, for a caller that wants the evidence: every candidate with its
	// shadow comparison, the excluded traces (held-out ones with role
	// "heldout") and the warnings.
	Report *candidate.Report
}

// Induce mines the procedures repeated in traces, shadow-replays every
// candidate against its source examples and the held-out traces, and
// decides for each candidate whether its skill passes the replay gate: a
// skill is accepted only when the candidate is safe, its source traces
// replay, and at least one held-out trace containing the procedure was
// compared and every compared one passed. One trace takes the
// single-trace path (mine.Single): the trace is the workflow, and every
// value in it a literal.
//
// The traces must be decoded and normalized, as source.Load and
// source.CompositionTrace return them, with unique ids; none is modified.
// Held-out traces that mining would exclude (an unresolved policy
// violation, a nondeterministic side effect) are not compared: they are
// listed in the report's excluded traces with role "heldout".
//
// Finding nothing is not an error: the result then has no skills and the
// report says why. Induce fails for no traces (ErrNoTraces), a nil trace
// (ErrNilTrace), invalid options, a cancelled context, or a skill that
// cannot be rendered.
func Induce(ctx context.Context, traces, heldout []*trace.Trace, opts InduceOptions) (*Induced, error) {
	if len(traces) == 0 {
		return nil, ErrNoTraces
	}
	for i, t := range traces {
		if t == nil {
			return nil, fmt.Errorf("traces[%d]: %w", i, ErrNilTrace)
		}
	}
	for i, t := range heldout {
		if t == nil {
			return nil, fmt.Errorf("heldout[%d]: %w", i, ErrNilTrace)
		}
	}

	report, err := MineTraces(ctx, traces, mine.Options{
		MinExamples:   opts.MinExamples,
		MaxCandidates: opts.MaxCandidates,
		WorkflowName:  opts.WorkflowName,
	})
	if err != nil {
		return nil, fmt.Errorf("mining: %w", err)
	}

	// Held-out evidence is screened as every command screens it: a run
	// that broke policy proves nothing about the procedure.
	compared := Screen(report, heldout)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	replay.Apply(report, traces, compared)

	// The skill id is SkillID(candidate id, FuncName(c, cg)) with only the
	// package name in cg (skillWorkflow): with no workflow name there,
	// the function is named after the candidate, which mining already
	// named from Options.WorkflowName for the best candidate. That is how
	// bundle.Write names the same skill.
	res := &Induced{Accepted: []Skill{}, Rejected: []RejectedSkill{}, Report: report}
	for _, list := range [][]candidate.Candidate{report.Candidates, report.RejectedCandidates} {
		for i := range list {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := &list[i]
			w := skillWorkflow(c, opts.PackageName)
			g := skill.ShadowGate(c, w)
			if !g.Accepted() {
				res.Rejected = append(res.Rejected, RejectedSkill{
					CandidateID: c.ID, ID: g.SkillID, Name: g.SkillName, Reasons: g.RejectionReasons, Gate: g,
				})
				continue
			}
			md, err := skill.Render(c, g, w)
			if err != nil {
				return nil, fmt.Errorf("rendering skill %s: %w", g.SkillName, err)
			}
			res.Accepted = append(res.Accepted, Skill{CandidateID: c.ID, ID: g.SkillID, Name: g.SkillName, Markdown: md, Gate: g})
		}
	}
	return res, nil
}
