package synth

import (
	"math"
	"testing"
)

func TestStudentUpper(t *testing.T) {
	tests := []struct{ t, df, want float64 }{
		{1, 1, 0.25}, // Cauchy
		{-1, 1, 0.75},
		{0, 7, 0.5},
		{1, 2, 0.5 - 1/(2*math.Sqrt(3))}, // closed form for df = 2
		{2.228138851964932, 10, 0.025},   // table value t(0.975, 10)
		{2.015048372669157, 5, 0.05},     // t(0.95, 5)
		{3.142, 30, 0.00186},             // approx. table value
	}
	for _, tt := range tests {
		got := studentUpper(tt.t, tt.df)
		tol := 1e-9
		if tt.t == 3.142 {
			tol = 5e-5
		}
		if math.Abs(got-tt.want) > tol {
			t.Errorf("studentUpper(%v, %v) = %v, want %v", tt.t, tt.df, got, tt.want)
		}
	}
}

func TestWelch(t *testing.T) {
	tt, df, _ := welch([]float64{1, 2, 3}, []float64{1, 3, 5}, 1)
	if math.Abs(tt-(-1/math.Sqrt(5.0/3))) > 1e-12 || math.Abs(df-50.0/17) > 1e-12 {
		t.Errorf("welch t, df = %v, %v; want %v, %v", tt, df, -1/math.Sqrt(5.0/3), 50.0/17)
	}
	// Equal variances and sizes give df = 4, where Student's t has the
	// closed form F(t) = 1/2 + 3/8·u·(1 − t²/(12(1 + t²/4))), u = t/√(1 + t²/4):
	// t = −1/√(2/3) = −1.2247449, F(t) = 0.1439321, p = P(T > t) = 0.8560679.
	// With the direction reversed the same difference is an improvement.
	tt, df, p := welch([]float64{1, 2, 3}, []float64{2, 3, 4}, 1)
	if math.Abs(tt+1.224744871391589) > 1e-12 || math.Abs(df-4) > 1e-12 || math.Abs(p-0.8560679326366547) > 1e-9 {
		t.Errorf("welch = %v, %v, %v; want -1.2247449, 4, 0.8560679", tt, df, p)
	}
	if _, _, p := welch([]float64{1, 2, 3}, []float64{2, 3, 4}, -1); math.Abs(p-0.14393206736334535) > 1e-9 {
		t.Errorf("welch p with sign -1 = %v, want 0.1439321", p)
	}
}

func f64(v float64) *float64 { return &v }

func TestVerify(t *testing.T) {
	props := []Property{{Name: "perm", Transform: "permute_rows", Metric: "total"}}
	conds := map[string]Samples{
		"baseline": {"rmse": {10.1, 10.4, 9.8, 10.3, 10.0}, "total": {int64(15), int64(15)}, "perm_pass": {true, false}, "label": {"a", "a"}},
		"tuned":    {"rmse": {9.1, 9.5, 9.3, 9.0, 9.4}},
		"same":     {"rmse": {10.0, 10.3, 9.9, 10.2, 10.1}},
	}
	claim := Claim{ID: "c", Acceptance: map[string]any{"min_pct": 5.0}}
	tests := []struct {
		h    Hypothesis
		pass bool
		key  string // a result key that must be present
	}{
		{Hypothesis{Name: "m", Verifier: VerifierMetamorphic}, false, "metamorphic_ok"},
		{Hypothesis{Name: "w", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "tuned"}, true, "p_value"},
		{Hypothesis{Name: "w-too-much", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "tuned", MinPct: f64(20)}, false, "pct_improvement"},
		{Hypothesis{Name: "w-same", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "same", MinPct: f64(0)}, false, "p_value"},
		{Hypothesis{Name: "w-higher", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "tuned", Direction: "higher"}, false, "t"},
		{Hypothesis{Name: "b", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "tuned", Method: MethodBootstrap}, true, "ci_lower"},
		{Hypothesis{Name: "b-same", Verifier: VerifierMeetsClaim, Metric: "rmse", Treatment: "same", Method: MethodBootstrap, MinPct: f64(0)}, false, "ci_lower"},
		{Hypothesis{Name: "tol", Verifier: VerifierWithinTolerance, Metric: "total", Expected: 15.0000001, Tolerance: f64(1e-3)}, true, "max_abs_error"},
		{Hypothesis{Name: "tol-off", Verifier: VerifierWithinTolerance, Metric: "total", Expected: int64(16)}, false, "max_abs_error"},
		{Hypothesis{Name: "exact", Verifier: VerifierExactMatch, Expected: map[string]any{"total": int64(15), "label": "a"}}, true, "mismatches"},
		{Hypothesis{Name: "exact-off", Verifier: VerifierExactMatch, Metric: "label", Expected: "b"}, false, "mismatches"},
	}
	for _, tt := range tests {
		t.Run(tt.h.Name, func(t *testing.T) {
			v := Verify(tt.h, conds, props, claim, 1)
			if v.Pass != tt.pass {
				t.Errorf("Verify(%s).Pass = %v, want %v; result %v", tt.h.Name, v.Pass, tt.pass, v.Result)
			}
			if _, ok := v.Result[tt.key]; !ok {
				t.Errorf("Verify(%s).Result has no %q: %v", tt.h.Name, tt.key, v.Result)
			}
		})
	}
	// One replicate is not enough for a test, and the verdict says so.
	v := Verify(Hypothesis{Name: "one", Verifier: VerifierMeetsClaim, Metric: "x", Treatment: "t"},
		map[string]Samples{"baseline": {"x": {1.0}}, "t": {"x": {0.5}}}, nil, claim, 1)
	if v.Pass || v.Result["reason"] == nil {
		t.Errorf("meets_claim on one replicate = %+v, want a failure with a reason", v)
	}
}

// TestMeetsClaimDeterministic: identical replicates have no variance, so
// a significance test of them is undefined; meets_claim fails with that
// reason, unless the hypothesis says its metric is exact, when the means
// are compared as they are.
func TestMeetsClaimDeterministic(t *testing.T) {
	same := map[string]Samples{"baseline": {"x": {1.0, 1.0, 1.0}}, "t": {"x": {0.5, 0.5, 0.5}}}
	worse := map[string]Samples{"baseline": {"x": {1.0, 1.0, 1.0}}, "t": {"x": {1.5, 1.5, 1.5}}}
	for _, tt := range []struct {
		name  string
		exact bool
		data  map[string]Samples
		pass  bool
	}{
		{"constant replicates, not exact", false, same, false},
		{"constant replicates, exact, better", true, same, true},
		{"constant replicates, exact, worse", true, worse, false},
	} {
		v := Verify(Hypothesis{Name: "d", Verifier: VerifierMeetsClaim, Metric: "x", Treatment: "t", Exact: tt.exact}, tt.data, nil, Claim{}, 1)
		if v.Pass != tt.pass {
			t.Errorf("%s: pass = %v, want %v (%v)", tt.name, v.Pass, tt.pass, v.Result)
		}
		if v.Result["method"] != "exact_comparison" {
			t.Errorf("%s: method = %v, want exact_comparison", tt.name, v.Result["method"])
		}
		if !tt.exact && v.Result["p_value"] != nil {
			t.Errorf("%s: reports a p-value %v for samples with no variance", tt.name, v.Result["p_value"])
		}
	}
}
