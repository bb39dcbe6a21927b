package candidate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// Remembered verdicts: a seam for mining incrementally.
//
// Checking a candidate built from a sample of its examples reads every
// other example back (mine's sample check), and shadow replay compares
// each with the candidate. A later mine of the same corpus plus a few new
// traces builds the same candidate again, and its old examples give the
// same verdicts. An ExampleVerdicts remembers them between runs: the
// second pass asks it, before reading an example outside the sample,
// whether that example already passed both checks against a candidate
// with the same content, and tells it the verdict of every example it
// did read. Only an example that passed and that the shadow report does
// not list (see replay.Options.ListPassing) is skipped; it is counted as
// passed, and listed among the candidate's examples with the row the
// cache recorded. A nil ExampleVerdicts remembers nothing.

// VerdictRules numbers the rules that decide an example's verdict: mining's
// sample check and shadow replay's comparison of a source example. It is
// part of every Fingerprint; a change to either check must increase it,
// so that remembered verdicts reached under the old rules are not reused.
const VerdictRules = 1

// VerdictKey names one example of a candidate, stably across runs: the
// candidate's content (Fingerprint), the example's trace (its source hash)
// and where the procedure starts in it.
type VerdictKey struct {
	// Candidate is the candidate's Fingerprint.
	Candidate string
	// SourceHash is the example trace's source hash.
	SourceHash string
	// StartIndex is the index of the example's first action in the trace.
	StartIndex int
}

// Verdict is what a run found about one example it read: whether it
// agreed with the candidate's sample and passed shadow replay, and the
// example as the report lists it.
type Verdict struct {
	Key     VerdictKey
	Example Example
	Passed  bool
}

// ExampleVerdicts remembers the verdicts of examples across mining runs.
// Implementations must be safe for use by one goroutine at a time; the
// second pass calls them in order, once per batch of examples.
type ExampleVerdicts interface {
	// Passed returns, for each key, the example recorded with a passing
	// verdict under that key, or nil when there is none (never seen, or
	// seen failing). An error stops the run.
	Passed(ctx context.Context, keys []VerdictKey) ([]*Example, error)
	// Record is told the verdicts of the examples a run read and checked.
	// An error stops the run.
	Record(ctx context.Context, verdicts []Verdict) error
}

// Fingerprint identifies what decides an example's verdict against c: its
// steps (signatures, arguments and their constants and bindings, side
// effects, approvals, segments, expected outputs), its expected receipts,
// and where its parameters and derived parameters are read and how the
// latter are computed. Two candidates with the same fingerprint give every
// example the same verdict. Unlike the candidate id it does not depend on
// which traces are examples, so it survives adding traces to a corpus;
// it does change when a re-drawn sample gives a parameter other example
// values, which only costs the remembered verdicts.
//
// It also covers VerdictRules, so that verdicts a store remembered from a
// build whose checks differed are never taken for this build's.
func Fingerprint(c *Candidate) (string, error) { return fingerprint(c, VerdictRules) }

// fingerprint is Fingerprint under the given rules.
func fingerprint(c *Candidate, rules int) (string, error) {
	type param struct {
		Name        string   `json:"name"`
		SourcePaths []string `json:"source_paths"`
	}
	type derived struct {
		Name        string   `json:"name"`
		SourcePaths []string `json:"source_paths"`
		Expression  string   `json:"expression"`
		Refs        []string `json:"refs"`
	}
	content := struct {
		Rules             int       `json:"rules"`
		SequenceSignature []string  `json:"sequence_signature"`
		Steps             []Step    `json:"steps"`
		ExpectedReceipts  []any     `json:"expected_receipts"`
		Parameters        []param   `json:"parameters"`
		Derived           []derived `json:"derived"`
		Gapped            bool      `json:"gapped"`
	}{Rules: rules, SequenceSignature: c.SequenceSignature, Steps: c.Steps, ExpectedReceipts: c.ExpectedReceipts}
	for _, p := range c.Parameters {
		content.Parameters = append(content.Parameters, param{p.Name, p.SourcePaths})
	}
	for _, d := range c.DerivedParameters {
		content.Derived = append(content.Derived, derived{d.Name, d.SourcePaths, d.Expression, d.Refs})
	}
	for _, ex := range c.Examples {
		content.Gapped = content.Gapped || len(ex.Positions) > 0
	}
	b, err := EncodeJSON(content)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
