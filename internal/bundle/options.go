package bundle

import "fmt"

// ConfidenceError is an Options.MinConfidence outside [0, 1].
type ConfidenceError struct{ Value float64 }

func (e *ConfidenceError) Error() string { return "bundle options: MinConfidence " + e.Problem() }

// Problem is the error without the field's name, for a caller that names
// the value by its own name (a flag).
func (e *ConfidenceError) Problem() string {
	return fmt.Sprintf("must be between 0 and 1, got %g", e.Value)
}

// CheckMinConfidence reports, as a *ConfidenceError, a confidence
// threshold outside [0, 1], which no candidate's confidence could be
// compared with. Write checks Options.MinConfidence with it before it
// reads an unset zero as DefaultMinConfidence.
func CheckMinConfidence(c float64) error {
	if c < 0 || c > 1 {
		return &ConfidenceError{Value: c}
	}
	return nil
}

// minConfidence is the confidence promotion requires under o: the one
// given, or DefaultMinConfidence for a zero nobody set.
func (o Options) minConfidence() float64 {
	if o.MinConfidence == 0 && !o.MinConfidenceSet {
		return DefaultMinConfidence
	}
	return o.MinConfidence
}
