package replay

import (
	"fmt"
	"math"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Apply runs Shadow for every candidate of a mining report, against the
// traces it was mined from and the held-out traces, and folds the results
// into the report:
//
//   - each candidate gets its ShadowReport;
//   - its confidence is multiplied by the share of compared traces that
//     passed (recorded as ConfidenceFactors.ShadowPassRate), so it falls
//     when traces fail;
//   - a safe candidate whose own source examples fail is rejected with one
//     shadow_failed reason per failing trace and moves, in rank order, to
//     the rejected candidates; other held-out failures do not reject (they
//     are evidence against promotion, which is decided later);
//   - a candidate whose receipts drift on a trace, source or held-out (the
//     replay oracle found a divergence at a receipt, under
//     /effect_receipts/), is rejected with one
//     receipt_drift reason per such trace, carrying the divergence path
//     (such as /effect_receipts/0/sha256): the effects it would produce
//     are not the ones recorded, which no later review can make safe;
//   - a derived parameter whose expression a matched held-out trace
//     contradicts is a parameter again, with a derivation_rejected
//     warning (see checkDerived);
//   - the selected candidate is again the first safe one.
//
// Apply calls nothing and changes no trace.
func Apply(r *candidate.Report, sources, heldout []*trace.Trace) {
	ApplyFrom(r, IndexSources(sources), heldout)
}

// ApplyFrom is Apply with the source traces given as a Sources.
func ApplyFrom(r *candidate.Report, sources Sources, heldout []*trace.Trace) {
	// Cannot fail: the function below never does.
	_ = ApplyEach(r, func(*candidate.Candidate) (Sources, error) { return sources, nil }, heldout)
}

// ExamplesFunc returns Sources holding at least the example traces of c.
type ExamplesFunc func(c *candidate.Candidate) (Sources, error)

// ApplyEach is Apply with the source traces given per candidate: it calls
// examples once for each candidate, in report order, just before
// shadowing it, so an implementation may read each candidate's examples
// when asked and let the previous candidate's go. An error from examples
// stops Apply and is returned, with r unchanged.
func ApplyEach(r *candidate.Report, examples ExamplesFunc, heldout []*trace.Trace) error {
	return ApplyStream(r, Options{}, examples, func(yield func([]*trace.Trace) error) error {
		if len(heldout) == 0 {
			return nil
		}
		return yield(heldout)
	})
}

// HeldoutFunc hands the held-out traces to yield in batches, in order,
// and returns yield's error or its own.
type HeldoutFunc func(yield func(batch []*trace.Trace) error) error

// ApplyStream is ApplyEach with the held-out traces read as a stream:
// each candidate is compared with its examples first, then every
// candidate with each batch of held-out traces as heldout hands it over,
// so the held-out corpus is read once and never held whole (a candidate
// with derived parameters keeps the held-out traces that contain it, for
// checkDerived). The result is
// Apply's, with o's bound on the passing source examples listed. An
// error from examples or heldout stops it and is returned, with r
// unchanged.
func ApplyStream(r *candidate.Report, o Options, examples ExamplesFunc, heldout HeldoutFunc) error {
	return applyStream(r, o, func(p *plan) ([]candidate.ShadowTrace, int, error) {
		sources, err := examples(p.c)
		if err != nil {
			return nil, 0, err
		}
		out, notListed := p.compareSources(sources)
		return out, notListed, nil
	}, heldout)
}

// ExampleBatchesFunc hands traces holding the example traces of c to
// yield in batches, and returns yield's error or its own. A batch may
// hold traces that are not examples of c (they are ignored) and an
// example's trace may come in any batch; an example whose trace comes in
// none fails with code example_missing, as with a Sources that lacks it.
// Of two traces with an example's trace id and source hash, the first
// handed over is compared, as IndexSources would find it.
type ExampleBatchesFunc func(c *candidate.Candidate, yield func(batch []*trace.Trace) error) error

// ApplyBatches is ApplyStream with each candidate's source examples read
// as a stream too: every batch examples hands over is compared and let
// go before the next is asked for, so no more than one batch of a
// candidate's examples is held at a time, however many examples it has.
// The result is ApplyStream's.
func ApplyBatches(r *candidate.Report, o Options, examples ExampleBatchesFunc, heldout HeldoutFunc) error {
	return applyStream(r, o, func(p *plan) ([]candidate.ShadowTrace, int, error) {
		return p.compareSourceBatches(func(yield func([]*trace.Trace) error) error {
			return examples(p.c, yield)
		})
	}, heldout)
}

// applyStream is ApplyStream with each candidate compared with its
// source examples by compareSources.
func applyStream(r *candidate.Report, o Options, compareSources func(p *plan) ([]candidate.ShadowTrace, int, error), heldout HeldoutFunc) error {
	cands := make([]candidate.Candidate, 0, len(r.Candidates)+len(r.RejectedCandidates))
	cands = append(cands, r.Candidates...)
	cands = append(cands, r.RejectedCandidates...)
	plans := make([]*plan, len(cands))
	traces := make([][]candidate.ShadowTrace, len(cands))
	notListed := make([]int, len(cands))
	for i := range cands {
		plans[i] = newPlan(&cands[i])
		plans[i].limitListed(o)
		sts, n, err := compareSources(plans[i])
		if err != nil {
			return err
		}
		traces[i], notListed[i] = sts, n
	}
	// A candidate with derived parameters keeps the held-out traces that
	// contain it, to check each expression on them at the end; the
	// others let every batch go.
	matched := make([][]heldoutMatch, len(cands))
	if heldout != nil {
		err := heldout(func(batch []*trace.Trace) error {
			for i, p := range plans {
				sts := p.compareHeldout(batch)
				if len(cands[i].DerivedParameters) > 0 {
					k := 0
					for _, t := range batch {
						if t == nil {
							continue // compareHeldout skips it too
						}
						if sts[k].Status != candidate.StatusUnmatched {
							matched[i] = append(matched[i], heldoutMatch{at: len(traces[i]) + k, t: t})
						}
						k++
					}
				}
				traces[i] = append(traces[i], sts...)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Safe candidates that shadow replay rejects come before the ones
	// mining rejected, each in rank order.
	var safe, rejected []candidate.Candidate
	for i := range cands {
		c := cands[i]
		fold(&c, shadowReport(traces[i], notListed[i]), matched[i])
		switch {
		case i >= len(r.Candidates):
			rejected = append(rejected, c)
		case c.Safe():
			safe = append(safe, c)
		default:
			c.Confidence = 0
			rejected = append(rejected, c)
		}
	}
	if safe == nil {
		safe = []candidate.Candidate{}
	}
	if rejected == nil {
		rejected = []candidate.Candidate{}
	}
	r.Candidates, r.RejectedCandidates = safe, rejected
	r.SelectedCandidateID = nil
	if len(safe) > 0 {
		id := safe[0].ID
		r.SelectedCandidateID = &id
	}
	return nil
}

// fold records sh as c's shadow report and applies it: the pass rate
// scales the confidence, and receipt drift and failing source examples
// reject.
func fold(c *candidate.Candidate, sh *candidate.ShadowReport, matched []heldoutMatch) {
	c.Shadow = sh
	checkDerived(c, sh, matched)
	if sh.ComparedTraces > 0 {
		passed := sh.PassedNotListed
		for _, t := range sh.Traces {
			if t.Status == candidate.StatusPass {
				passed++
			}
		}
		rate := math.Round(float64(passed)/float64(sh.ComparedTraces)*10000) / 10000
		c.ConfidenceFactors.ShadowPassRate = &rate
		c.Confidence = math.Round(c.Confidence*rate*10000) / 10000
	}
	for _, t := range sh.Traces {
		// A receipt that differs (a path under /effect_receipts/) is
		// drift; a trace that recorded no receipts at all is missing
		// evidence, which the shadow report already counts as a failure.
		if o := t.ReplayOracle; o != nil && o.Divergence != nil && strings.HasPrefix(o.Divergence.Path, "/effect_receipts/") {
			c.RejectionReasons = append(c.RejectionReasons, candidate.Problem{
				Code:    candidate.CodeReceiptDrift,
				Message: fmt.Sprintf("%s trace %s: replay receipts drift from the candidate's expected receipts at %s: %s", t.Role, t.TraceID, displayPath(o.Divergence.Path), o.Divergence.Message),
				Path:    o.Divergence.Path,
				TraceID: t.TraceID,
			})
		}
	}
	for _, t := range sh.Traces {
		if t.Role == candidate.RoleSource && t.Status != candidate.StatusPass {
			c.RejectionReasons = append(c.RejectionReasons, candidate.Problem{
				Code:    candidate.CodeShadowFailed,
				Message: fmt.Sprintf("source example %s does not replay against the candidate (first divergent step %d)", t.TraceID, t.FirstDivergentStep),
				Step:    t.FirstDivergentStep,
				TraceID: t.TraceID,
			})
		}
	}
}
