package mine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestSampleIndexes: evenly spaced, increasing, first and last included.
func TestSampleIndexes(t *testing.T) {
	got := sampleIndexes(10, 4)
	if want := []int{0, 3, 6, 9}; !slices.Equal(got, want) {
		t.Errorf("sampleIndexes(10, 4) = %v, want %v", got, want)
	}
	for _, n := range []int{5, 1001, 100000} {
		idx := sampleIndexes(n, 3)
		if idx[0] != 0 || idx[2] != n-1 || !slices.IsSorted(idx) {
			t.Errorf("sampleIndexes(%d, 3) = %v", n, idx)
		}
	}
}

// TestSampledMiningDeterministic: above the bound, the report does not
// depend on the run (two runs, one pass or two, any cache), lists every
// example, and says the candidate was built from a sample.
func TestSampledMiningDeterministic(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 400, Seed: 2, Support: 0.2})
	for _, tr := range corpus.Traces {
		trace.Normalize(tr)
	}
	opts := Options{MinExamples: 3, MaxCandidates: 6, ExampleSample: 20, GeneratedAt: "2026-01-01T00:00:00Z"}
	first := mustMine(t, corpus.Traces, opts)
	again := mustMine(t, corpus.Traces, opts)
	if !bytes.Equal(encode(t, first), encode(t, again)) {
		t.Error("two sampled runs differ")
	}
	for _, cache := range []int{1, 0} {
		opts.ExampleCache = cache
		got, _ := twoPass(t, corpus.Traces, opts)
		if a, b := encode(t, first), encode(t, got); !bytes.Equal(a, b) {
			t.Errorf("cache %d: two-pass sampled report differs from Mine's:\n%s", cache, firstDiff(a, b))
		}
	}
	sampledCandidates := 0
	for _, c := range append(slices.Clone(first.Candidates), first.RejectedCandidates...) {
		if c.Support != len(c.Examples) {
			t.Errorf("%s: support %d, %d examples listed", c.ID, c.Support, len(c.Examples))
		}
		if c.Support > opts.ExampleSample {
			sampledCandidates++
			if !slices.ContainsFunc(c.Warnings, func(p candidate.Problem) bool { return p.Code == candidate.CodeExampleSample }) {
				t.Errorf("%s: %d examples and no %s warning", c.ID, c.Support, candidate.CodeExampleSample)
			}
		}
	}
	if sampledCandidates == 0 {
		t.Fatal("no candidate above the bound: the test proves nothing")
	}
}

// sampleCorpus is n traces of one three-step procedure: its mode is
// "0644" everywhere but in trace odd, which runs "0755", and in trace
// leaky, which passes a token as the path.
func sampleCorpus(n, odd, leaky int) []*trace.Trace {
	var traces []*trace.Trace
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		mode, path := "0644", fmt.Sprintf("notes/v%d.md", i)
		if i == odd {
			mode = "0755"
		}
		if i == leaky {
			path = "ghp_" + strings.Repeat("aB3dE5gH7j", 4)[:36]
		}
		traces = append(traces, mk(id,
			noise(id+"-n"),
			act(id+"-a", trace.KindToolCall, "git.status", `{"repo":"/srv/app"}`),
			act(id+"-b", trace.KindToolCall, "fs.write", `{"path":"`+path+`","mode":"`+mode+`"}`),
			act(id+"-c", trace.KindToolCall, "git.commit", `{"message":"notes"}`),
		))
	}
	return traces
}

// TestSampleDisagreementCaught: an example outside the sample that
// contradicts a constant, or holds a credential where the sample has a
// parameter, rejects the candidate, naming the example, in one pass and
// in two; without the bound the same corpus makes the mode a parameter.
func TestSampleDisagreementCaught(t *testing.T) {
	const n, bound = 60, 10
	picked := sampleIndexes(n, bound)
	outside := 0
	for slices.Contains(picked, outside) {
		outside++
	}
	for name, tc := range map[string]struct {
		odd, leaky int
		want       string
	}{
		"constant": {odd: outside, leaky: -1, want: "has another value in step 2 parameters.mode, which the sample holds constant"},
		"secret":   {odd: -1, leaky: outside, want: "holds a credential in step 2 parameters.path"},
	} {
		t.Run(name, func(t *testing.T) {
			traces := sampleCorpus(n, tc.odd, tc.leaky)
			opts := Options{MinExamples: 3, ExampleSample: bound, GeneratedAt: "2026-01-01T00:00:00Z"}
			r := mustMine(t, traces, opts)
			two, _ := twoPass(t, traces, opts)
			if a, b := encode(t, r), encode(t, two); !bytes.Equal(a, b) {
				t.Errorf("two-pass report differs from Mine's:\n%s", firstDiff(a, b))
			}
			c := longest(r.RejectedCandidates)
			if c == nil {
				t.Fatalf("no rejected candidate; candidates: %d", len(r.Candidates))
			}
			if c.Support != n {
				t.Errorf("support %d, want %d", c.Support, n)
			}
			i := slices.IndexFunc(c.RejectionReasons, func(p candidate.Problem) bool { return p.Code == candidate.CodeSampleDisagreement })
			if i < 0 {
				t.Fatalf("rejection reasons %v, want %s", c.RejectionReasons, candidate.CodeSampleDisagreement)
			}
			p := c.RejectionReasons[i]
			if wantID := fmt.Sprintf("t%03d", outside); p.TraceID != wantID || !strings.Contains(p.Message, tc.want) {
				t.Errorf("rejection %+v, want trace %s and %q", p, wantID, tc.want)
			}
			if strings.Contains(p.Message, "ghp_") {
				t.Error("the rejection prints the credential")
			}

			full := mustMine(t, traces, Options{MinExamples: 3, ExampleSample: -1, GeneratedAt: "2026-01-01T00:00:00Z"})
			if fc := longest(full.RejectedCandidates); fc != nil && slices.ContainsFunc(fc.RejectionReasons, func(p candidate.Problem) bool { return p.Code == candidate.CodeSampleDisagreement }) {
				t.Error("the unbounded build reports a sample disagreement")
			}
		})
	}
}

// TestSampleAgreementKeepsCandidate: when every example outside the
// sample agrees, the sampled candidate is safe and has the steps,
// constants and parameters of the unbounded build.
func TestSampleAgreementKeepsCandidate(t *testing.T) {
	traces := sampleCorpus(60, -1, -1)
	sampledR := mustMine(t, traces, Options{MinExamples: 3, ExampleSample: 10})
	fullR := mustMine(t, traces, Options{MinExamples: 3, ExampleSample: -1})
	s, f := longest(sampledR.Candidates), longest(fullR.Candidates)
	if s == nil || f == nil {
		t.Fatalf("candidates: sampled %d, full %d", len(sampledR.Candidates), len(fullR.Candidates))
	}
	if s.ID != f.ID || s.Support != f.Support || s.Confidence != f.Confidence {
		t.Errorf("sampled %s support %d confidence %v, full %s support %d confidence %v", s.ID, s.Support, s.Confidence, f.ID, f.Support, f.Confidence)
	}
	if a, b := fmt.Sprint(s.Constants, s.Steps[1].Arguments), fmt.Sprint(f.Constants, f.Steps[1].Arguments); a != b {
		t.Errorf("sampled constants and arguments %s, full %s", a, b)
	}
	if !slices.EqualFunc(s.Examples, f.Examples, func(a, b candidate.Example) bool {
		return a.TraceID == b.TraceID && a.StartIndex == b.StartIndex && slices.Equal(a.ActionIDs, b.ActionIDs)
	}) {
		t.Error("the sampled candidate lists other examples")
	}
}

// longest returns the candidate with the most steps, or nil.
func longest(cs []candidate.Candidate) *candidate.Candidate {
	var best *candidate.Candidate
	for i := range cs {
		if best == nil || len(cs[i].Steps) > len(best.Steps) {
			best = &cs[i]
		}
	}
	return best
}
