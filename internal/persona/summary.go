package persona

import (
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// Summary is a Result with its proposal and the bundle written for it in
// brief, the object "crystallize persona --json" prints: a stable
// contract. The proposal's fields are null when nothing was proposed,
// and Bundle when no bundle was written.
type Summary struct {
	*Result
	CandidateID *string            `json:"candidate_id"`
	Step        *string            `json:"step"`
	Savings     *candidate.Savings `json:"savings"`
	Shadow      *SummaryShadow     `json:"shadow"`
	Bundle      *bundle.Summary    `json:"bundle"`
}

// SummaryShadow is the proposed candidate's shadow replay in counts.
type SummaryShadow struct {
	Compared int  `json:"compared"`
	Passed   int  `json:"passed"`
	Pass     bool `json:"pass"`
}

// Summary is r's Summary; m is the manifest of the bundle written into
// dir (Result.WriteBundle), or nil.
func (r *Result) Summary(dir string, m *bundle.Manifest) *Summary {
	s := &Summary{Result: r}
	if p := r.Proposal; p != nil {
		c := p.Candidate
		s.CandidateID, s.Step, s.Savings = &c.ID, &p.FuncName, &c.Savings
		passed, compared := ShadowCounts(c.Shadow)
		s.Shadow = &SummaryShadow{Compared: compared, Passed: passed, Pass: c.Shadow != nil && c.Shadow.Pass}
	}
	if m != nil {
		b := m.Summary(dir)
		s.Bundle = &b
	}
	return s
}

// ShadowCounts returns how many of the records sh compared passed, and
// how many it compared; none for no replay.
func ShadowCounts(sh *candidate.ShadowReport) (passed, compared int) {
	if sh == nil {
		return 0, 0
	}
	return sh.Tally().Passed(), sh.ComparedTraces
}
