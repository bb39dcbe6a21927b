// Package verify compares a run's receipts with the receipts its
// candidate expects.
//
// A bundle's candidate carries expected receipts: the consensus of the
// effect receipts its examples recorded, with "<allowlisted>" where they
// differed in a field their replay_allowlist explains. A verified run is
// compared with them by the replay oracle, as shadow replay compares a
// recorded trace: the expected receipts are the first run, the run's own
// replay_run the second, masked by the allowlist rules of the candidate's
// examples (the reasons the examples themselves gave for what changes
// between executions; the run's own rules are not added, since a run
// cannot vouch for itself). Any other difference, a digest, a status, a
// side effect, a receipt too many or too few, is drift: ErrDrift, with the
// JSON pointer of the first divergence.
package verify

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Errors of verification.
var (
	// ErrDrift: the run's receipts differ from the candidate's expected
	// receipts (see *DriftError).
	ErrDrift = errors.New("receipts drift from the candidate's expected receipts")
	// ErrUnverifiable: verification asked for of a run that cannot be
	// verified.
	ErrUnverifiable = errors.New("cannot verify")
)

// DriftError is the drift of a verified run.
type DriftError struct {
	Divergence candidate.Divergence
	// Step and Tool name the run's receipt the divergence is in, when it
	// is in one (Step 0 otherwise).
	Step int
	Tool string
}

func (e *DriftError) Error() string {
	p := e.Divergence.Path
	if p == "" {
		p = "the run root"
	}
	if e.Step > 0 {
		p += fmt.Sprintf(" (step %d, %s)", e.Step, e.Tool)
	}
	return fmt.Sprintf("%v at %s: %s", ErrDrift, p, e.Divergence.Message)
}

func (e *DriftError) Unwrap() error { return ErrDrift }

// Report is the outcome of verifying a run.
type Report struct {
	CandidateID string `json:"candidate_id"`
	Passed      bool   `json:"passed"`
	// Expected and Actual count the expected receipts and the run's.
	Expected int `json:"expected_receipts"`
	Actual   int `json:"receipts"`
	// Divergence is the first difference, nil when Passed.
	Divergence *candidate.Divergence `json:"divergence"`
	// Warnings are the oracle's allowlist warnings.
	Warnings []candidate.Problem `json:"warnings"`
}

// Expectation is what a verified run is compared with: a candidate's
// expected receipts and the allowlist rules of its examples.
type Expectation struct {
	CandidateID string
	Receipts    []any
	Allowlist   []trace.AllowlistRule
}

// Expect returns what a run of c is compared with; fixtures are the
// traces the allowlist rules of c's examples are read from. A candidate
// that expects no receipts cannot be verified (ErrUnverifiable).
func Expect(c *candidate.Candidate, fixtures []*trace.Trace) (*Expectation, error) {
	if len(c.ExpectedReceipts) == 0 {
		return nil, fmt.Errorf("%w: candidate %s expects no receipts (its examples recorded none, or did not agree on them)", ErrUnverifiable, c.ID)
	}
	examples := map[string]bool{}
	for _, e := range c.Examples {
		examples[e.TraceID] = true
	}
	exp := &Expectation{CandidateID: c.ID, Receipts: c.ExpectedReceipts}
	// One rule per path: the examples of a candidate mined from runs
	// all carry the same rules.
	seen := map[string]bool{}
	for _, t := range fixtures {
		if !examples[t.ID] {
			continue
		}
		for _, r := range t.ReplayAllowlist {
			if !seen[r.Path] {
				seen[r.Path] = true
				exp.Allowlist = append(exp.Allowlist, r)
			}
		}
	}
	return exp, nil
}

// Receipts compares the receipts of run runID with exp, and returns the
// report and, on drift, a *DriftError naming the receipt it is in.
func Receipts(exp *Expectation, runID string, receipts []runrecord.Receipt) (*Report, error) {
	first := map[string]any{"run_id": "expected_" + exp.CandidateID, "effect_receipts": exp.Receipts}
	second := runrecord.ReplayRun(runID, receipts)
	rep := replay.Oracle(first, second, exp.Allowlist)
	v := &Report{
		CandidateID: exp.CandidateID, Passed: rep.Passed,
		Expected: len(exp.Receipts), Actual: len(receipts),
		Divergence: rep.Divergence, Warnings: rep.Warnings,
	}
	if v.Passed {
		return v, nil
	}
	err := &DriftError{Divergence: *rep.Divergence}
	if rest, ok := strings.CutPrefix(err.Divergence.Path, "/effect_receipts/"); ok {
		i, aerr := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
		if aerr == nil && i >= 0 && i < len(receipts) {
			err.Step, err.Tool = receipts[i].Step, receipts[i].Tool
		}
	}
	return v, err
}
