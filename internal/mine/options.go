package mine

import "fmt"

// OptionError is a value of an Options field outside the range mining
// accepts. It names the field, so that a caller that took the value from
// its own input (a command-line flag, a configuration key) can say where
// the value came from, and it words the problem without the field's name
// (Problem) for that caller to put its own in front.
type OptionError struct {
	// Field is the Options field: "MinExamples", "MaxCandidates", "Mode"
	// or "MaxGap".
	Field string
	// Value is the value given: an int, or a string for Mode.
	Value any
	// Want is what the field accepts, as in "must be <Want>".
	Want string
	// Reason, when not empty, says why the range is what it is.
	Reason string
}

func (e *OptionError) Error() string { return "mine options: " + e.Field + " " + e.Problem() }

// Unwrap returns the sentinel of the field that has one (ErrMinExamples,
// ErrMode), so that errors.Is finds the same error as from NewScan.
func (e *OptionError) Unwrap() error {
	switch e.Field {
	case "MinExamples":
		return ErrMinExamples
	case "Mode":
		return ErrMode
	}
	return nil
}

// Problem is the error without the field's name: "must be at least 2,
// got 1: one example cannot show which fields vary".
func (e *OptionError) Problem() string {
	got := fmt.Sprint(e.Value)
	if s, ok := e.Value.(string); ok {
		got = fmt.Sprintf("%q", s)
	}
	msg := "must be " + e.Want + ", got " + got
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// The checks below hold the ranges of the Options fields a caller sets
// from its input. Each takes a value as given, where zero is not "the
// default" but a number like any other: a command line whose flags
// default to DefaultMinExamples and DefaultMaxCandidates passes its
// values to them as they are. Validate applies them to the fields of
// Options that are not zero.

// CheckMinExamples reports a MinExamples below two: one example cannot
// tell a parameter from a constant.
func CheckMinExamples(n int) error {
	if n < 2 {
		return &OptionError{Field: "MinExamples", Value: n, Want: "at least 2", Reason: "one example cannot show which fields vary"}
	}
	return nil
}

// CheckMaxCandidates reports a MaxCandidates below one: a report that
// may list no candidate cannot select one.
func CheckMaxCandidates(n int) error {
	if n < 1 {
		return &OptionError{Field: "MaxCandidates", Value: n, Want: "at least 1"}
	}
	return nil
}

// CheckMode reports a Mode that is not a miner: ModeAuto, ModeExact or
// ModeGapped.
func CheckMode(mode string) error {
	switch mode {
	case ModeAuto, ModeExact, ModeGapped:
		return nil
	}
	return &OptionError{Field: "Mode", Value: mode, Want: "auto, exact or gapped"}
}

// CheckMaxGap reports a negative MaxGap. (Zero is DefaultMaxGap: the
// field has no value that allows no action between two steps.)
func CheckMaxGap(n int) error {
	if n < 0 {
		return &OptionError{Field: "MaxGap", Value: n, Want: "at least 0"}
	}
	return nil
}

// Validate reports the first field of o outside its range, as an
// *OptionError; a zero field is its default and always valid. NewScan,
// and so Mine, refuse what it refuses.
func (o Options) Validate() error {
	if o.MinExamples != 0 {
		if err := CheckMinExamples(o.MinExamples); err != nil {
			return err
		}
	}
	if o.MaxCandidates != 0 {
		if err := CheckMaxCandidates(o.MaxCandidates); err != nil {
			return err
		}
	}
	if o.Mode != "" {
		if err := CheckMode(o.Mode); err != nil {
			return err
		}
	}
	return CheckMaxGap(o.MaxGap)
}
