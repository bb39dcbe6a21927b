package persona

import "fmt"

// OptionError is a value of an Options field outside the range a
// decision accepts. It names the field, and words the problem without
// the field's name (Problem), for a caller that took the value from its
// own input (a flag) to put that input's name in front.
type OptionError struct {
	// Field is the Options field: "MinExamples", "MinHostedHistoryDays"
	// or "HostedHistoryDays".
	Field string
	Value int
	// Want is what the field accepts, as in "it must <Want>".
	Want string
	// Reason, when not empty, says why.
	Reason string
}

func (e *OptionError) Error() string { return "persona options: " + e.Field + " " + e.Problem() }

// Problem is the error without the field's name: "is 1; it must be at
// least 2, since one record cannot show recurrence".
func (e *OptionError) Problem() string {
	msg := fmt.Sprintf("is %d; it must %s", e.Value, e.Want)
	if e.Reason != "" {
		msg += ", since " + e.Reason
	}
	return msg
}

// CheckMinExamples reports a MinExamples, as given, below two: one
// record cannot show recurrence. (Options reads zero as the default.)
func CheckMinExamples(n int) error {
	if n < 2 {
		return &OptionError{Field: "MinExamples", Value: n, Want: "be at least 2", Reason: "one record cannot show recurrence"}
	}
	return nil
}

// CheckHistoryDays reports a negative number of days of hosted history,
// given as field ("HostedHistoryDays", or "MinHostedHistoryDays" where a
// caller's zero means none required, which Options spells negative).
func CheckHistoryDays(field string, days int) error {
	if days < 0 {
		return &OptionError{Field: field, Value: days, Want: "not be negative"}
	}
	return nil
}
