package mine

import (
	"errors"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		field   string
		problem string
	}{
		{"zero value", Options{}, "", ""},
		{"set in range", Options{MinExamples: 3, MaxCandidates: 1, Mode: ModeGapped, MaxGap: 4}, "", ""},
		{"one example", Options{MinExamples: 1}, "MinExamples", "must be at least 2, got 1: one example cannot show which fields vary"},
		{"negative examples", Options{MinExamples: -2}, "MinExamples", "must be at least 2, got -2: one example cannot show which fields vary"},
		{"negative candidates", Options{MaxCandidates: -1}, "MaxCandidates", "must be at least 1, got -1"},
		{"unknown mode", Options{Mode: "fuzzy"}, "Mode", `must be auto, exact or gapped, got "fuzzy"`},
		{"negative gap", Options{MaxGap: -1}, "MaxGap", "must be at least 0, got -1"},
		{"first field first", Options{MinExamples: 1, Mode: "fuzzy"}, "MinExamples", "must be at least 2, got 1: one example cannot show which fields vary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", tt.opts, err)
				}
				return
			}
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("Validate(%+v) = %v, want an *OptionError", tt.opts, err)
			}
			if oe.Field != tt.field || oe.Problem() != tt.problem {
				t.Errorf("Validate(%+v) = %s: %s, want %s: %s", tt.opts, oe.Field, oe.Problem(), tt.field, tt.problem)
			}
			if want := "mine options: " + tt.field + " " + tt.problem; err.Error() != want {
				t.Errorf("Validate(%+v).Error() = %q, want %q", tt.opts, err.Error(), want)
			}
		})
	}
}

// Zero is a given value for the checks, unlike for Validate: a command
// line passes its flags' values, whose defaults are the Default constants.
func TestChecksTakeZeroAsGiven(t *testing.T) {
	for name, err := range map[string]error{
		"CheckMinExamples(0)":   CheckMinExamples(0),
		"CheckMaxCandidates(0)": CheckMaxCandidates(0),
		`CheckMode("")`:         CheckMode(""),
	} {
		if err == nil {
			t.Errorf("%s = nil, want an error", name)
		}
	}
	for name, err := range map[string]error{
		"CheckMinExamples(DefaultMinExamples)":     CheckMinExamples(DefaultMinExamples),
		"CheckMaxCandidates(DefaultMaxCandidates)": CheckMaxCandidates(DefaultMaxCandidates),
		"CheckMode(ModeAuto)":                      CheckMode(ModeAuto),
		"CheckMaxGap(0)":                           CheckMaxGap(0),
	} {
		if err != nil {
			t.Errorf("%s = %v, want nil", name, err)
		}
	}
}

// NewScan refuses exactly what Validate refuses, with its error, so a
// caller that validates first learns of every problem NewScan would
// report.
func TestValidateCoversNewScan(t *testing.T) {
	for _, o := range []Options{{MinExamples: 1}, {Mode: "fuzzy"}, {MaxGap: -1}, {MaxCandidates: -1}, {}, {MinExamples: 2, Mode: ModeGapped, MaxGap: 3}} {
		_, err := NewScan(o)
		want := o.Validate()
		if (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Errorf("NewScan(%+v) error = %v, Validate = %v", o, err, want)
		}
	}
}

func TestOptionErrorIs(t *testing.T) {
	if err := (Options{MinExamples: 1}).Validate(); !errors.Is(err, ErrMinExamples) {
		t.Errorf("Validate(MinExamples 1) = %v, want errors.Is ErrMinExamples", err)
	}
	if err := (Options{Mode: "x"}).Validate(); !errors.Is(err, ErrMode) {
		t.Errorf("Validate(Mode x) = %v, want errors.Is ErrMode", err)
	}
}
