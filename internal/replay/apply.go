package replay

import (
	"fmt"
	"math"

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
//     the rejected candidates; held-out failures do not reject (they are
//     evidence against promotion, which is decided later);
//   - the selected candidate is again the first safe one.
//
// Apply calls nothing and changes no trace.
func Apply(r *candidate.Report, sources, heldout []*trace.Trace) {
	var safe, rejected []candidate.Candidate
	for i := range r.Candidates {
		c := r.Candidates[i]
		shadowOne(&c, sources, heldout)
		if c.Safe() {
			safe = append(safe, c)
		} else {
			c.Confidence = 0
			rejected = append(rejected, c)
		}
	}
	for i := range r.RejectedCandidates {
		c := r.RejectedCandidates[i]
		shadowOne(&c, sources, heldout)
		rejected = append(rejected, c)
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
}

func shadowOne(c *candidate.Candidate, sources, heldout []*trace.Trace) {
	sh := Shadow(c, sources, heldout)
	c.Shadow = sh
	if sh.ComparedTraces > 0 {
		passed := 0
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
