package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Verifier names.
const (
	VerifierMetamorphic     = "metamorphic"
	VerifierMeetsClaim      = "meets_claim"
	VerifierWithinTolerance = "within_tolerance"
	VerifierExactMatch      = "exact_match"
)

// Verifiers lists the verifier names, for messages.
var Verifiers = []string{VerifierMetamorphic, VerifierMeetsClaim, VerifierWithinTolerance, VerifierExactMatch}

// Statistical methods of meets_claim.
const (
	MethodWelch     = "welch"
	MethodBootstrap = "bootstrap"
)

// BootstrapResamples is how many resamples the bootstrap method draws.
const BootstrapResamples = 4000

// Samples are one condition's metrics: name → one value per replicate.
type Samples map[string][]any

// Verdict is a hypothesis decided.
type Verdict struct {
	Name     string         `json:"name"`
	Verifier string         `json:"verifier"`
	Pass     bool           `json:"pass"`
	Result   map[string]any `json:"result"`
}

// Verify decides hypothesis h over the conditions' samples ("baseline"
// and every treatment by name). properties are the spec's, which the
// metamorphic verifier reads; claim supplies meets_claim's defaults.
func Verify(h Hypothesis, conditions map[string]Samples, properties []Property, claim Claim, seed int) Verdict {
	v := Verdict{Name: h.Name, Verifier: h.Verifier, Result: map[string]any{}}
	fail := func(format string, args ...any) Verdict {
		v.Pass = false
		v.Result["reason"] = fmt.Sprintf(format, args...)
		return v
	}
	cond := h.Treatment
	if cond == "" || h.Verifier == VerifierMeetsClaim {
		cond = "baseline"
	}
	s := conditions[cond]
	switch h.Verifier {
	case VerifierMetamorphic:
		if len(properties) == 0 {
			return fail("the spec has no properties")
		}
		ok := true
		for _, p := range properties {
			key := p.Name + "_pass"
			pass := len(s[key]) > 0
			for _, x := range s[key] {
				if b, _ := x.(bool); !b {
					pass = false
				}
			}
			v.Result[key] = pass
			ok = ok && pass
		}
		v.Result["metamorphic_ok"] = ok
		v.Pass = ok
	case VerifierWithinTolerance:
		values, ok := s[h.Metric]
		if !ok {
			return fail("no metric %q in condition %q", h.Metric, cond)
		}
		want, _ := asFloat(h.Expected)
		tol := DefaultTolerance
		if h.Tolerance != nil {
			tol = *h.Tolerance
		}
		worst := 0.0
		for i, x := range values {
			f, ok := asFloat(x)
			if !ok {
				return fail("replicate %d: metric %q is %s, not a number", i, h.Metric, typeName(x))
			}
			worst = math.Max(worst, math.Abs(f-want))
		}
		v.Result["metric"], v.Result["expected"], v.Result["tolerance"], v.Result["max_abs_error"] = h.Metric, want, tol, worst
		v.Pass = worst <= tol
	case VerifierExactMatch:
		want := map[string]any{h.Metric: h.Expected}
		if h.Metric == "" {
			want, _ = h.Expected.(map[string]any)
		}
		var mismatches []any
		for _, k := range sortedKeys(want) {
			values, ok := s[k]
			if !ok {
				mismatches = append(mismatches, map[string]any{"metric": k, "reason": "missing"})
				continue
			}
			for i, x := range values {
				if !sameValue(x, want[k], 0) {
					mismatches = append(mismatches, map[string]any{"metric": k, "replicate": int64(i), "got": x, "want": want[k]})
				}
			}
		}
		v.Result["mismatches"] = mismatches
		v.Pass = len(mismatches) == 0
	case VerifierMeetsClaim:
		return meetsClaim(v, h, conditions, claim, seed)
	default:
		return fail("unknown verifier %q", h.Verifier)
	}
	return v
}

func meetsClaim(v Verdict, h Hypothesis, conditions map[string]Samples, claim Claim, seed int) Verdict {
	fail := func(format string, args ...any) Verdict {
		v.Pass = false
		v.Result["reason"] = fmt.Sprintf(format, args...)
		return v
	}
	treat := h.Treatment
	if treat == "" {
		var others []string
		for k := range conditions {
			if k != "baseline" {
				others = append(others, k)
			}
		}
		if len(others) != 1 {
			return fail("meets_claim needs exactly one treatment or a treatment key; the experiment has %d", len(others))
		}
		treat = others[0]
	}
	base, err := floats(conditions["baseline"][h.Metric])
	if err != nil {
		return fail("baseline %q: %v", h.Metric, err)
	}
	tr, err := floats(conditions[treat][h.Metric])
	if err != nil {
		return fail("%s %q: %v", treat, h.Metric, err)
	}
	minPct := acceptance(claim, h.MinPct, 0, "min_pct", "min_improvement")
	alpha := acceptance(claim, h.Alpha, 0.05, "alpha")
	dir := h.Direction
	if dir == "" {
		dir = "lower"
	}
	method := h.Method
	if method == "" {
		method = MethodWelch
	}
	v.Result["metric"], v.Result["treatment"], v.Result["direction"] = h.Metric, treat, dir
	v.Result["min_pct"], v.Result["alpha"], v.Result["n_baseline"], v.Result["n_treatment"] = minPct, alpha, int64(len(base)), int64(len(tr))
	if len(base) < 2 || len(tr) < 2 {
		v.Result["method"] = method
		return fail("a statistical test needs at least 2 replicates per condition; set [experiment] replicates")
	}
	// gain is the improvement, positive when the treatment is better, so
	// both directions become one one-sided test of gain > 0.
	sign := 1.0
	if dir == "higher" {
		sign = -1
	}
	mb, mt := mean(base), mean(tr)
	gain := sign * (mb - mt)
	v.Result["baseline_mean"], v.Result["treatment_mean"] = mb, mt
	pctOK := true
	if mb != 0 {
		pct := 100 * gain / math.Abs(mb)
		v.Result["pct_improvement"] = pct
		pctOK = pct >= minPct
	} else if minPct > 0 {
		v.Result["reason"] = "the baseline mean is 0, so a percentage improvement is undefined"
		pctOK = false
	}
	var significant bool
	// Two constant samples (deterministic replicates) have no variance to
	// test against: any difference would come out with p = 0. Only a
	// hypothesis that says its metric is exact compares them as they are.
	if variance(base) == 0 && variance(tr) == 0 {
		v.Result["method"] = "exact_comparison"
		if !h.Exact {
			v.Result["significant"] = false
			v.Result["meets_claim"] = false
			return fail("every replicate of both conditions has the same %s, so a significance test is undefined; set exact = true on the hypothesis if the metric is deterministic", h.Metric)
		}
		significant = gain > 0
		v.Result["significant"] = significant
		v.Result["meets_claim"] = significant && pctOK
		v.Pass = significant && pctOK
		return v
	}
	switch method {
	case MethodWelch:
		t, df, p := welch(base, tr, sign)
		v.Result["method"] = "welch_t_test_one_sided"
		v.Result["t"], v.Result["df"], v.Result["p_value"] = t, df, p
		significant = p < alpha
	case MethodBootstrap:
		lo, p := bootstrap(base, tr, sign, alpha, seed)
		v.Result["method"] = "bootstrap_percentile_mean_difference"
		v.Result["resamples"] = int64(BootstrapResamples)
		v.Result["ci_lower"], v.Result["confidence"], v.Result["p_value"] = lo, 1-alpha, p
		significant = lo > 0
	}
	v.Result["significant"] = significant
	v.Result["meets_claim"] = significant && pctOK
	v.Pass = significant && pctOK
	return v
}

// acceptance reads a meets_claim parameter: the hypothesis's value, else
// the claim's acceptance criteria under one of keys, else def.
func acceptance(c Claim, set *float64, def float64, keys ...string) float64 {
	if set != nil {
		return *set
	}
	for _, k := range keys {
		if f, ok := asFloat(c.Acceptance[k]); ok {
			return f
		}
	}
	return def
}

func floats(values []any) ([]float64, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("no values")
	}
	out := make([]float64, len(values))
	for i, x := range values {
		f, ok := asFloat(x)
		if !ok {
			return nil, fmt.Errorf("replicate %d is %s, not a number", i, typeName(x))
		}
		out[i] = f
	}
	return out, nil
}

// welch is Welch's unequal-variance t-test of the one-sided alternative
// sign × (mean(a) − mean(b)) > 0. It returns t, the Welch–Satterthwaite
// degrees of freedom and the p-value. When both samples have no variance
// the difference is exact, and p is 0 or 1.
func welch(a, b []float64, sign float64) (t, df, p float64) {
	na, nb := float64(len(a)), float64(len(b))
	va, vb := variance(a)/na, variance(b)/nb
	diff := sign * (mean(a) - mean(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		switch {
		case diff > 0:
			return math.MaxFloat64, na + nb - 2, 0
		case diff < 0:
			return -math.MaxFloat64, na + nb - 2, 1
		}
		return 0, na + nb - 2, 0.5
	}
	t = diff / se
	df = (va + vb) * (va + vb) / (va*va/(na-1) + vb*vb/(nb-1))
	return t, df, studentUpper(t, df)
}

// studentUpper is P(T > t) for Student's t with df degrees of freedom,
// through the regularized incomplete beta function:
// P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
func studentUpper(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(df/2, 0.5, x)
	if t > 0 {
		return tail
	}
	return 1 - tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated with its continued fraction (modified Lentz), on the side of
// the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges
// quickly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// bootstrap resamples both conditions with replacement and returns the
// alpha-quantile of the resampled improvement sign × (mean(a) − mean(b))
// (the lower bound of a one-sided 1 − alpha percentile interval) and the
// share of resamples with no improvement, a bootstrap p-value. The
// generator is seeded so a run is reproducible.
func bootstrap(a, b []float64, sign, alpha float64, seed int) (lower, p float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	diffs := make([]float64, BootstrapResamples)
	resample := func(xs []float64) float64 {
		var s float64
		for range xs {
			s += xs[rng.IntN(len(xs))]
		}
		return s / float64(len(xs))
	}
	none := 0
	for i := range diffs {
		diffs[i] = sign * (resample(a) - resample(b))
		if diffs[i] <= 0 {
			none++
		}
	}
	sort.Float64s(diffs)
	return quantile(diffs, alpha), float64(none) / float64(len(diffs))
}

// sameValue compares two metric values: numbers within tol (so 15 and
// 15.0 match), other values exactly.
func sameValue(a, b any, tol float64) bool {
	fa, okA := asFloat(a)
	fb, okB := asFloat(b)
	if okA && okB {
		return math.Abs(fa-fb) <= tol
	}
	if okA != okB {
		return false
	}
	return a == b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
