package bundle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestManifestStatesCandidateEffects checks that candidate.json states
// what the candidate's workflow may do (its side effects, capabilities
// and required secrets) as report.json's candidate records them, and the
// evidence promotion is decided on (sample count, confidence, shadow
// counts): a reviewer reads them there before approving.
func TestManifestStatesCandidateEffects(t *testing.T) {
	s, h := releaseTraces(t, nil)
	withSecret := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.RequiredSecrets = []string{"CRATES_IO_TOKEN"}
		return c
	}
	dir, m := scenario{sources: s, heldout: h, build: withSecret, opts: opts()}.write(t)
	r, err := ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := findCandidate(r, m.CandidateID)
	if len(c.SideEffects) == 0 {
		t.Fatal("the test candidate has no side effects")
	}
	if diff := cmp.Diff(c.SideEffects, m.SideEffects); diff != "" {
		t.Errorf("side_effects (-report +manifest):\n%s", diff)
	}
	if diff := cmp.Diff(c.Capabilities, m.Capabilities); diff != "" {
		t.Errorf("capabilities (-report +manifest):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"CRATES_IO_TOKEN"}, m.RequiredSecrets); diff != "" {
		t.Errorf("required_secrets (-want +manifest):\n%s", diff)
	}
	if m.Confidence != c.Confidence || m.Promotion.Confidence != c.Confidence || m.Promotion.SampleCount != len(c.Examples) {
		t.Errorf("confidence %g (promotion %g), sample count %d; want %g and %d", m.Confidence, m.Promotion.Confidence, m.Promotion.SampleCount, c.Confidence, len(c.Examples))
	}
	if m.Shadow == nil || !m.Shadow.Pass || m.Shadow.ComparedTraces != c.Shadow.ComparedTraces {
		t.Errorf("shadow %+v, want the candidate's", m.Shadow)
	}
	if m.RiskLevel != RiskHigh {
		t.Errorf("risk %s, want %s: the candidate writes and needs a secret", m.RiskLevel, RiskHigh)
	}
}

// TestManifestSavingsAndSources checks that candidate.json states the
// per-run savings the candidate was mined with, as the promotion's
// estimate, and for each source trace where it was read (its example's
// source, made relative), held-out traces having none.
func TestManifestSavingsAndSources(t *testing.T) {
	s, h := releaseTraces(t, nil)
	saving := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Savings.PerRun = candidate.PerRun{WallMSAvoided: 1200, InputTokensAvoided: 3400, OutputTokensAvoided: 560, ModelCallsAvoided: 7, EstimatedCostUSDAvoided: 0.25}
		return c
	}
	_, m := scenario{sources: s, heldout: h, build: saving, opts: opts()}.write(t)
	want := Estimate{WallMSPerRun: 1200, InputTokensPerRun: 3400, OutputTokensPerRun: 560, ModelCallsPerRun: 7, CostUSDPerRun: 0.25}
	if m.Promotion.EstimatedTimeTokenSavings != want {
		t.Errorf("estimated savings %+v, want %+v", m.Promotion.EstimatedTimeTokenSavings, want)
	}
	if m.Savings == nil || m.Savings.PerRun.ModelCallsAvoided != 7 {
		t.Errorf("savings %+v, want the candidate's", m.Savings)
	}
	for _, st := range m.SourceTraces {
		var want string
		if st.Role == candidate.RoleSource {
			want = "release/release_" + strings.TrimPrefix(st.TraceID, "trace_") + ".json"
		}
		got := ""
		if st.SourceURL != nil {
			got = *st.SourceURL
		}
		if got != want {
			t.Errorf("%s (%s): source_url %q, want %q", st.TraceID, st.Role, got, want)
		}
	}
}

// TestManifestSourceTraceHashes checks that candidate.json lists the
// source hash of every trace the candidate was mined from, once each, in
// the order of its examples.
func TestManifestSourceTraceHashes(t *testing.T) {
	s, h := releaseTraces(t, nil)
	// Two examples from one trace: its hash is listed once.
	twice := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Examples = append(c.Examples, c.Examples[0])
		return c
	}
	_, m := scenario{sources: s, heldout: h, build: twice, opts: opts()}.write(t)
	want := []string{s[0].SourceHash, s[1].SourceHash, s[2].SourceHash}
	if diff := cmp.Diff(want, m.SourceTraceHashes); diff != "" {
		t.Errorf("source_trace_hashes (-want +got):\n%s", diff)
	}
}
