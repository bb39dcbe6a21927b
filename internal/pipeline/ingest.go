package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// IngestOptions says what Ingest reads and writes.
type IngestOptions struct {
	// From is the release-harness fixture directory.
	From string
	// Mine configures the single-trace mining (its WorkflowName and
	// GeneratedAt).
	Mine    mine.Options
	Outputs Outputs
	// Shadow replays the written bundle from its own fixtures when a
	// candidate was selected (bundle.ReplayShadow).
	Shadow bool
	// Heldout are the held-out directories (other release-harness runs,
	// or trace directories) the candidate is shadow-replayed against:
	// the evidence that lets its promotion leave heldout_required.
	Heldout HeldoutOptions
}

// Ingested is what Ingest read, decided and wrote.
type Ingested struct {
	Harness   *source.ReleaseHarness
	Report    *candidate.Report
	Published *Published
	// Shadow is the bundle's own shadow replay, or nil when it was not
	// asked for or nothing was selected.
	Shadow *bundle.ShadowCheck
	// Bundle is the bundle's directory (IngestOptions.Outputs.Bundle).
	Bundle string
}

// Err says whether the ingest failed, although what it wrote stays:
// candidate.ErrNoCandidate when the run gave no safe candidate, or a
// *ShadowError when the bundle's own shadow replay did not pass or
// differs from the shadow report recorded in it.
func (in *Ingested) Err() error {
	if err := in.Report.Err(); err != nil {
		return err
	}
	if sc := in.Shadow; sc != nil && (!sc.Pass || !sc.Matches) {
		return &ShadowError{Bundle: in.Bundle, Check: sc}
	}
	return nil
}

// ShadowError is a bundle whose shadow replay, from its own fixtures,
// failed or does not reproduce the recorded one.
type ShadowError struct {
	Bundle string
	Check  *bundle.ShadowCheck
}

func (e *ShadowError) Error() string {
	if !e.Check.Pass {
		return fmt.Sprintf("shadow replay of %s did not pass", e.Bundle)
	}
	return fmt.Sprintf("shadow replay of %s differs from the recorded one: %s", e.Bundle, strings.Join(e.Check.Differences, "; "))
}

// Ingest turns one release-harness fixture directory into a review
// bundle: the run is one trace, mined as the workflow (MineTraces) with
// the release's versions, tag, bump and branches as its parameters
// (ReleaseHarness.Parameters, mine.Options.RunParameters), whose
// report carries the harness's segment and recovery summaries, a warning
// for each optional file the manifest promised but the directory lacks
// (on the report and on every candidate, so the bundle's manifest carries
// it too), and each step's review notes; it is then published (Publish)
// and, with o.Shadow, the bundle is replayed from its own fixtures.
func Ingest(ctx context.Context, o IngestOptions) (*Ingested, error) {
	t, rh, err := source.LoadReleaseHarness(o.From)
	if err != nil {
		return nil, fmt.Errorf("reading release-harness fixture %s: %w", o.From, err)
	}
	// The run is the workflow, with the release's identity as its
	// parameters, so that it can run the next release.
	mo := o.Mine
	mo.RunParameters = rh.Parameters()
	report, err := MineTraces(ctx, []*trace.Trace{t}, mo)
	if err != nil {
		return nil, err
	}
	seg, rec := rh.Segments(), rh.Recovery()
	report.SegmentSummary = &candidate.SegmentSummary{
		DeterministicCount: len(seg.SafeToAutomate), AgenticCount: len(seg.RequiresHumanReview),
		SafeToAutomate: seg.SafeToAutomate, RequiresHumanReview: seg.RequiresHumanReview,
		PlainLanguage: seg.PlainLanguage,
	}
	report.RecoverySummary = &candidate.RecoverySummary{
		ShellFailuresSeen: rec.ShellFailures, RecoveryAdviceRuns: rec.RecoveryRuns,
		FailuresFedIntoAgent: rec.FedIntoAgent, FailedSteps: rec.FailedSteps,
		Representation: rec.Representation,
	}
	for _, m := range rh.Missing {
		w := candidate.Problem{Code: source.CodeMissingOptionalFile, Message: m.String(), Path: m.Path}
		report.Warnings = append(report.Warnings, w)
		for i := range report.Candidates {
			report.Candidates[i].Warnings = append(report.Candidates[i].Warnings, w)
		}
	}
	for i := range report.Candidates {
		addReviewNotes(&report.Candidates[i], t)
	}
	for i := range report.RejectedCandidates {
		addReviewNotes(&report.RejectedCandidates[i], t)
	}
	heldout, err := LoadHeldout(ctx, report, o.Heldout)
	if err != nil {
		return nil, err
	}
	for _, h := range heldout {
		if h.ID == t.ID {
			return nil, fmt.Errorf("held-out trace %s has the id of the ingested run %s: a run cannot be its own held-out evidence", h.ID, o.From)
		}
	}
	pub, err := Publish(ctx, report, []*trace.Trace{t}, heldout, o.Outputs)
	if err != nil {
		return nil, err
	}
	in := &Ingested{Harness: rh, Report: report, Published: pub, Bundle: o.Outputs.Bundle}
	if o.Shadow && report.Selected() != nil {
		if in.Shadow, err = bundle.ReplayShadow(o.Outputs.Bundle); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// addReviewNotes copies each action's review_notes metadata, which the
// importer writes for agent-authored, failed and re-run steps and for
// steps whose side effects are unknown, into the review notes of the
// candidate step it became. The candidate covers the whole trace, so step
// i is action i.
func addReviewNotes(c *candidate.Candidate, t *trace.Trace) {
	for i := range c.Steps {
		if i >= len(t.Actions) {
			return
		}
		notes, _ := t.Actions[i].Metadata["review_notes"].([]any)
		for _, n := range notes {
			if s, ok := n.(string); ok && s != "" {
				c.Steps[i].ReviewNotes = append(c.Steps[i].ReviewNotes, s)
			}
		}
	}
}
