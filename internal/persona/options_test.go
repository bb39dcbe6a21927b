package persona

import (
	"errors"
	"testing"
)

func TestOptionChecks(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		field   string
		problem string
	}{
		{"one example", CheckMinExamples(1), "MinExamples", "is 1; it must be at least 2, since one record cannot show recurrence"},
		{"zero examples as given", CheckMinExamples(0), "MinExamples", "is 0; it must be at least 2, since one record cannot show recurrence"},
		{"negative days", CheckHistoryDays("HostedHistoryDays", -3), "HostedHistoryDays", "is -3; it must not be negative"},
		{"two examples", CheckMinExamples(2), "", ""},
		{"no days", CheckHistoryDays("MinHostedHistoryDays", 0), "", ""},
	}
	for _, tt := range tests {
		if tt.field == "" {
			if tt.err != nil {
				t.Errorf("%s: %v, want nil", tt.name, tt.err)
			}
			continue
		}
		var oe *OptionError
		if !errors.As(tt.err, &oe) || oe.Field != tt.field || oe.Problem() != tt.problem {
			t.Errorf("%s: %v, want %s %s", tt.name, tt.err, tt.field, tt.problem)
		}
	}
}

// Evaluate refuses what the checks refuse, naming the field, and reads a
// zero MinExamples as the default.
func TestEvaluateChecksOptions(t *testing.T) {
	var oe *OptionError
	if _, err := Evaluate(nil, Options{Persona: "p", MinExamples: 1}); !errors.As(err, &oe) || oe.Field != "MinExamples" {
		t.Errorf("Evaluate(MinExamples 1) = %v, want an *OptionError for MinExamples", err)
	}
	if _, err := Evaluate(nil, Options{Persona: "p", HostedHistoryDays: ptr(-1)}); !errors.As(err, &oe) || oe.Field != "HostedHistoryDays" {
		t.Errorf("Evaluate(HostedHistoryDays -1) = %v, want an *OptionError for HostedHistoryDays", err)
	}
	if _, err := Evaluate(nil, Options{Persona: "p"}); err != nil {
		t.Errorf("Evaluate with default options = %v, want nil", err)
	}
}
