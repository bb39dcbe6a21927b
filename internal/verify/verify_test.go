package verify

import (
	"errors"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestExpect: the allowlist holds one rule per path from the fixtures of
// the candidate's examples only, and a candidate without expected
// receipts cannot be verified.
func TestExpect(t *testing.T) {
	c := &candidate.Candidate{ID: "c1", ExpectedReceipts: []any{map[string]any{"step": 1}}, Examples: []candidate.Example{{TraceID: "t1"}, {TraceID: "t2"}}}
	rule := trace.AllowlistRule{Path: "/effect_receipts/*/duration_ms", Reason: "varies"}
	fixtures := []*trace.Trace{
		{ID: "t1", ReplayAllowlist: []trace.AllowlistRule{rule}},
		{ID: "t2", ReplayAllowlist: []trace.AllowlistRule{rule}},
		{ID: "other", ReplayAllowlist: []trace.AllowlistRule{{Path: "/run_id", Reason: "not an example"}}},
	}
	exp, err := Expect(c, fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.Allowlist) != 1 || exp.Allowlist[0].Path != rule.Path {
		t.Errorf("Expect allowlist = %+v, want [%+v]", exp.Allowlist, rule)
	}
	if _, err := Expect(&candidate.Candidate{ID: "c2"}, nil); !errors.Is(err, ErrUnverifiable) {
		t.Errorf("Expect(no receipts) = %v, want ErrUnverifiable", err)
	}
}

// TestReceiptsDrift: receipts that match pass, and a changed digest is a
// *DriftError naming the step and tool of the receipt it is in.
func TestReceiptsDrift(t *testing.T) {
	rc := runrecord.Receipt{ID: "r-01", Step: 2, Kind: "tool_call", Tool: "git.push", Status: "ok", ArgumentsSHA256: "sha256:a", ResultSHA256: "sha256:b", SideEffects: []trace.SideEffect{}}
	expected := runrecord.ReceiptValue(&rc)
	exp := &Expectation{CandidateID: "c1", Receipts: []any{expected}, Allowlist: []trace.AllowlistRule{{Path: "/run_id", Reason: "per run"}}}
	rep, err := Receipts(exp, "run-1", []runrecord.Receipt{rc})
	if err != nil || !rep.Passed || rep.Expected != 1 || rep.Actual != 1 {
		t.Fatalf("Receipts(same) = %+v, %v, want passed", rep, err)
	}
	drifted := rc
	drifted.ResultSHA256 = "sha256:c"
	rep, err = Receipts(exp, "run-1", []runrecord.Receipt{drifted})
	var de *DriftError
	if !errors.As(err, &de) || !errors.Is(err, ErrDrift) || rep.Passed {
		t.Fatalf("Receipts(drifted) = %+v, %v, want a *DriftError", rep, err)
	}
	if de.Step != 2 || de.Tool != "git.push" || de.Divergence.Path != "/effect_receipts/0/result_sha256" {
		t.Errorf("drift = %+v, want step 2, git.push, at /effect_receipts/0/result_sha256", de)
	}
}
