package replay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// release builds a trace of the three-step release procedure, with a
// prefix action, a templated branch side effect, an approval before the
// publish step and a replay run with one receipt.
func release(id, branch string) *trace.Trace {
	return &trace.Trace{
		Version: 1, ID: id, SourceHash: "sha256:" + id,
		Actions: []trace.Action{
			{ID: id + "-plan", Kind: trace.KindModelCall, Name: "plan"},
			{
				ID: id + "-checkout", Kind: trace.KindToolCall, Name: "git.checkout_branch",
				Parameters:  map[string]any{"branch_name": branch},
				SideEffects: []trace.SideEffect{{Kind: "git_ref", Target: branch, Capability: "git.write"}},
			},
			{
				ID: id + "-manifest", Kind: trace.KindFileMutation, Name: "update_manifest",
				Parameters:  map[string]any{"path": "harn.toml"},
				SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "harn.toml", Capability: "fs.write"}},
				Output:      map[string]any{"ok": true},
			},
			{
				ID: id + "-publish", Kind: trace.KindToolCall, Name: "cargo.publish",
				Approval: &trace.Approval{Required: true, Boundary: "publish"},
			},
		},
		ReplayAllowlist: []trace.AllowlistRule{
			{Path: "/run_id", Reason: "per execution"},
			{Path: "/effect_receipts/*/receipt_id", Reason: "per execution"},
		},
		ReplayRun: map[string]any{
			"run_id": "run_" + id,
			"effect_receipts": []any{
				map[string]any{"receipt_id": "receipt_" + id, "sha256": "stable", "size": json.Number("12")},
			},
		},
	}
}

func releaseCandidate(examples ...*trace.Trace) *candidate.Candidate {
	t := release("x", "b")
	c := &candidate.Candidate{
		ID: "candidate_release",
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "git.checkout_branch", SideEffects: []trace.SideEffect{
				{Kind: "git_ref", Target: "{branch_name}", Capability: "git.write", Metadata: map[string]any{"target_parameter": "branch_name"}},
			}},
			{Index: 2, Kind: trace.KindFileMutation, Name: "update_manifest", SideEffects: []trace.SideEffect{
				{Kind: "file_write", Target: "harn.toml", Capability: "fs.write"},
			}, ExpectedOutput: map[string]any{"ok": true}},
			{Index: 3, Kind: trace.KindToolCall, Name: "cargo.publish", Approval: &trace.Approval{Required: true, Boundary: "publish"}},
		},
		ExpectedReceipts: []any{map[string]any{"receipt_id": "<allowlisted>", "sha256": "stable", "size": 12}},
	}
	for _, a := range t.Actions[1:] {
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
	}
	for _, e := range examples {
		c.Examples = append(c.Examples, candidate.Example{TraceID: e.ID, SourceHash: e.SourceHash, StartIndex: 1})
	}
	return c
}

// outcome is the part of a ShadowTrace the table pins.
type outcome struct {
	ID      string
	Role    string
	Status  string
	First   int
	Fitness float64
	Codes   []string
}

func outcomes(rep *candidate.ShadowReport) []outcome {
	var out []outcome
	for _, st := range rep.Traces {
		o := outcome{ID: st.TraceID, Role: st.Role, Status: st.Status, First: st.FirstDivergentStep, Fitness: st.Fitness}
		for _, d := range st.Details {
			o.Codes = append(o.Codes, d.Code)
		}
		out = append(out, o)
	}
	return out
}

func TestShadow(t *testing.T) {
	s1, s2 := release("s1", "release-1"), release("s2", "release-2")
	other := release("other", "o") // a source trace that is not an example
	c := releaseCandidate(s1, s2)

	effects := release("effects", "release-3")
	effects.Actions[2].SideEffects = append(effects.Actions[2].SideEffects, trace.SideEffect{Kind: "file_write", Target: "Cargo.lock", Capability: "fs.write"})
	branch := release("branch", "release-4")
	branch.Actions[1].SideEffects[0].Target = "main" // not the branch_name parameter
	approval := release("approval", "release-5")
	approval.Actions[3].Approval = nil
	output := release("output", "release-6")
	output.Actions[2].ObservedOutput = map[string]any{"ok": false}
	noOutput := release("no-output", "release-7")
	noOutput.Actions[2].Output = nil
	drift := release("drift", "release-8")
	drift.ReplayRun = map[string]any{
		"run_id":          "run_drift",
		"effect_receipts": []any{map[string]any{"receipt_id": "r", "sha256": "changed", "size": json.Number("12")}},
	}
	missing := release("missing", "release-9")
	missing.Actions = append(missing.Actions[:2:2], missing.Actions[3])
	unmatched := seq("unmatched", "x y z")
	noReplay := release("no-replay", "release-10")
	noReplay.ReplayRun = nil

	heldout := []*trace.Trace{release("pass", "release-11"), effects, branch, approval, output, noOutput, drift, missing, unmatched, noReplay}
	rep := Shadow(c, []*trace.Trace{other, s2, s1}, heldout)

	want := []outcome{
		{"s1", "source", "pass", 0, 1, nil},
		{"s2", "source", "pass", 0, 1, nil},
		{"pass", "heldout", "pass", 0, 1, nil},
		{"effects", "heldout", "fail", 2, 1, []string{"side_effects_differ"}},
		{"branch", "heldout", "fail", 1, 1, []string{"side_effects_differ"}},
		{"approval", "heldout", "fail", 3, 1, []string{"approval_differs"}},
		{"output", "heldout", "fail", 2, 1, []string{"output_differs"}},
		{"no-output", "heldout", "pass", 0, 1, nil},
		{"drift", "heldout", "fail", 0, 1, []string{"receipt_drift"}},
		{"missing", "heldout", "fail", 2, fit(1, 5), []string{"signature_mismatch"}},
		{"unmatched", "heldout", "unmatched", 1, 0, []string{"unmatched"}},
		{"no-replay", "heldout", "fail", 0, 1, []string{"receipt_drift"}},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("Shadow outcomes (-want +got):\n%s", diff)
	}
	if rep.Pass {
		t.Errorf("Pass = true, want false")
	}
	if rep.ComparedTraces != 11 {
		t.Errorf("ComparedTraces = %d, want 11", rep.ComparedTraces)
	}
	var codes []string
	for _, f := range rep.Failures {
		codes = append(codes, f.Code+" "+f.TraceID)
	}
	wantCodes := []string{
		"shadow_failed effects", "shadow_failed branch", "shadow_failed approval", "shadow_failed output",
		"shadow_failed drift", "shadow_failed missing", "heldout_unmatched unmatched", "shadow_failed no-replay",
	}
	if diff := cmp.Diff(wantCodes, codes); diff != "" {
		t.Errorf("Failures (-want +got):\n%s", diff)
	}

	byID := map[string]candidate.ShadowTrace{}
	for _, st := range rep.Traces {
		byID[st.TraceID] = st
	}
	if d := byID["drift"].ReplayOracle.Divergence; d == nil || d.Path != "/effect_receipts/0/sha256" || d.Left != "changed" || d.Right != "stable" {
		t.Errorf("drift divergence = %+v, want /effect_receipts/0/sha256 changed → stable", d)
	}
	if got := byID["drift"].Details[0].Path; got != "/effect_receipts/0/sha256" {
		t.Errorf("receipt_drift path = %q, want /effect_receipts/0/sha256", got)
	}
	wantMissing := []candidate.Problem{{
		Code:    candidate.CodeSignatureMismatch,
		Message: "step 2 file_mutation:update_manifest:path is missing from the trace",
		Step:    2,
	}}
	if diff := cmp.Diff(wantMissing, byID["missing"].Details); diff != "" {
		t.Errorf("missing step details (-want +got):\n%s", diff)
	}
	if got := byID["pass"].ComparedReceipts; got != 1 {
		t.Errorf("ComparedReceipts = %d, want 1", got)
	}
	if got := byID["pass"].ReplayOracle.Name; got != "shadow candidate_release pass" {
		t.Errorf("oracle name = %q", got)
	}
}

func TestShadowPass(t *testing.T) {
	s1, s2 := release("s1", "a"), release("s2", "b")
	rep := Shadow(releaseCandidate(s1, s2), []*trace.Trace{s1, s2}, []*trace.Trace{release("h", "c"), seq("u", "q")})
	if !rep.Pass || rep.ComparedTraces != 3 {
		t.Errorf("Pass, ComparedTraces = %v, %d, want true, 3", rep.Pass, rep.ComparedTraces)
	}
	want := []candidate.Problem{{
		Code:    candidate.CodeHeldoutUnmatched,
		Message: "held-out trace u does not contain the procedure (fitness 0.000)",
		TraceID: "u",
	}}
	if diff := cmp.Diff(want, rep.Failures); diff != "" {
		t.Errorf("Failures (-want +got):\n%s", diff)
	}
}

func TestShadowSources(t *testing.T) {
	s1 := release("s1", "a")
	c := releaseCandidate(s1, release("gone", "b"))
	// The same id with another hash is another trace.
	changed := release("gone", "b")
	changed.SourceHash = "sha256:other"
	bad := seq("s1", "nothing here")
	bad.SourceHash = s1.SourceHash
	rep := Shadow(c, []*trace.Trace{nil, changed, s1}, nil)
	want := []outcome{
		{"s1", "source", "pass", 0, 1, nil},
		{"gone", "source", "fail", 0, 0, []string{"example_missing"}},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("Shadow outcomes (-want +got):\n%s", diff)
	}
	// A source example that no longer contains the procedure fails; it is
	// never "unmatched".
	c = releaseCandidate(bad)
	c.ExpectedReceipts = nil
	rep = Shadow(c, []*trace.Trace{bad}, nil)
	want = []outcome{{"s1", "source", "fail", 1, 0, []string{"unmatched"}}}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("Shadow outcomes (-want +got):\n%s", diff)
	}
	if rep.Pass {
		t.Error("Pass = true for a failed source")
	}
}

// TestShadowPinnedExample checks that a source example is compared at the
// occurrence the candidate names, not the first one in the trace.
func TestShadowPinnedExample(t *testing.T) {
	c := cand("a b")
	tr := seq("t", "a b x a b")
	c.Examples = []candidate.Example{{TraceID: "t", SourceHash: tr.SourceHash, StartIndex: 3}}
	rep := Shadow(c, []*trace.Trace{tr}, []*trace.Trace{tr})
	if diff := cmp.Diff([]string{"=1@3", "=2@4"}, short(rep.Traces[0].Alignment)); diff != "" {
		t.Errorf("source alignment (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"=1@0", "=2@1"}, short(rep.Traces[1].Alignment)); diff != "" {
		t.Errorf("held-out alignment (-want +got):\n%s", diff)
	}
}

// TestShadowEmpty checks that a candidate with no steps never passes, and
// that the reason a trace does not contain it names that cause rather
// than a pairing ratio of nothing to nothing.
func TestShadowEmpty(t *testing.T) {
	for _, c := range []*candidate.Candidate{nil, cand("")} {
		rep := Shadow(c, nil, []*trace.Trace{seq("t", "a")})
		if rep.Pass {
			t.Errorf("Shadow(%v) passed with nothing compared", c)
		}
	}
	rep := Shadow(cand(""), nil, []*trace.Trace{seq("t", "a")})
	want := []candidate.Problem{{Code: candidate.CodeUnmatched, Message: "candidate has no steps"}}
	if len(rep.Traces) != 1 {
		t.Fatalf("traces %+v, want the held-out one", rep.Traces)
	}
	if diff := cmp.Diff(want, rep.Traces[0].Details); diff != "" {
		t.Errorf("details of a candidate with no steps (-want +got):\n%s", diff)
	}
}

// TestShadowParallel checks that the report does not depend on how the
// traces were spread over the workers.
func TestShadowParallel(t *testing.T) {
	c := releaseCandidate()
	var heldout []*trace.Trace
	for i := range 1000 {
		tr := release("t"+itoa(i), "b"+itoa(i))
		if i%7 == 0 {
			tr.Actions = tr.Actions[:3] // two of three steps: a fail, not unmatched
		}
		heldout = append(heldout, tr)
	}
	rep := Shadow(c, nil, heldout)
	for i, st := range rep.Traces {
		if st.TraceID != heldout[i].ID {
			t.Fatalf("Traces[%d].TraceID = %q, want %q", i, st.TraceID, heldout[i].ID)
		}
		want := candidate.StatusPass
		if i%7 == 0 {
			want = candidate.StatusFail
		}
		if st.Status != want {
			t.Errorf("Traces[%d].Status = %q, want %q", i, st.Status, want)
		}
	}
}

// TestShadowApprovalBoundary: the approval boundary is one of the things
// a replay keeps. A held-out run that stopped at another gate, or at a
// gate it only named by its action, diverges with the approval's path,
// as a run that requested another side effect does.
func TestShadowApprovalBoundary(t *testing.T) {
	s1, s2 := release("s1", "a"), release("s2", "b")
	renamed := release("renamed", "c")
	renamed.Actions[3].Approval.Boundary = "deploy"
	none := release("none", "d")
	none.Actions[3].Approval = nil
	unnamed := release("unnamed", "e") // a gate without a boundary is named by its action
	unnamed.Actions[3].Approval.Boundary = ""
	rep := Shadow(releaseCandidate(s1, s2), []*trace.Trace{s1, s2}, []*trace.Trace{renamed, none, unnamed})
	var got []candidate.Problem
	for _, st := range rep.Traces[2:] {
		got = append(got, st.Details...)
	}
	want := []candidate.Problem{
		{Code: candidate.CodeApprovalDiffers, Step: 3, Path: "$.actions[3].approval.boundary",
			Message: `step 3 cargo.publish: candidate stops at approval boundary "publish", action renamed-publish at "deploy"`},
		{Code: candidate.CodeApprovalDiffers, Step: 3, Path: "$.actions[3].approval",
			Message: "step 3 cargo.publish: candidate requires approval, action none-publish does not require"},
		{Code: candidate.CodeApprovalDiffers, Step: 3, Path: "$.actions[3].approval.boundary",
			Message: `step 3 cargo.publish: candidate stops at approval boundary "publish", action unnamed-publish at "cargo.publish"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if rep.Pass {
		t.Error("Pass = true with every held-out trace crossing another boundary")
	}
}

// TestVerifierAgreesWithShadow checks the promise mining relies on when it
// judges a sample's examples before shadow replay runs: Verifier's verdict
// on an example is true exactly when Shadow passes that example, so an
// example mining counted as passing is one shadow replay would pass too.
func TestVerifierAgreesWithShadow(t *testing.T) {
	good := release("good", "a")
	drifted := release("drifted", "b")
	drifted.ReplayRun["effect_receipts"] = []any{map[string]any{"receipt_id": "r", "sha256": "changed", "size": json.Number("12")}}
	reordered := seq("reordered", "plan cargo.publish git.checkout_branch update_manifest")
	c := releaseCandidate(good, drifted, reordered)
	traces := []*trace.Trace{good, drifted, reordered}
	examples := make([]*candidate.Example, len(c.Examples))
	for i := range c.Examples {
		examples[i] = &c.Examples[i]
	}
	got := NewVerifier(Options{}).Check(c)(examples, traces)
	rep := Shadow(c, traces, nil)
	var want []bool
	for _, st := range rep.Traces {
		want = append(want, st.Status == candidate.StatusPass)
	}
	if diff := cmp.Diff([]bool{true, false, false}, want); diff != "" {
		t.Fatalf("Shadow verdicts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Verifier verdicts differ from Shadow's (-shadow +verifier):\n%s", diff)
	}
}

// TestShadowExtraActionNamesNextStep checks that an action the candidate
// has no step for is reported at the step it comes before, so that the
// first divergent step of a run with an extra action is where the
// reviewer should look.
func TestShadowExtraActionNamesNextStep(t *testing.T) {
	c := cand("a b c")
	c.Examples = []candidate.Example{{TraceID: "s", SourceHash: "sha256:s"}}
	rep := Shadow(c, []*trace.Trace{seq("s", "a x b c")}, nil)
	if len(rep.Traces) != 1 {
		t.Fatalf("traces %+v", rep.Traces)
	}
	st := rep.Traces[0]
	var got []candidate.Problem
	for _, d := range st.Details {
		if d.Code == candidate.CodeSignatureMismatch {
			got = append(got, d)
		}
	}
	if len(got) != 1 || got[0].Step != 2 || got[0].Path != "$.actions[1]" {
		t.Errorf("signature mismatches %+v, want one at $.actions[1] naming step 2", got)
	}
	if st.FirstDivergentStep != 2 {
		t.Errorf("first divergent step %d, want 2", st.FirstDivergentStep)
	}
}

// TestShadowRunIsAnotherExecution checks that the shadow run the oracle
// compares with a trace's replay run has a run id of its own, as a second
// execution would: a trace whose allowlist does not cover its
// per-execution run id diverges at /run_id instead of passing by
// comparing the run with itself.
func TestShadowRunIsAnotherExecution(t *testing.T) {
	s := release("s", "a")
	s.ReplayAllowlist = s.ReplayAllowlist[1:] // only the receipt id
	rep := Shadow(releaseCandidate(s), []*trace.Trace{s}, nil)
	o := rep.Traces[0].ReplayOracle
	if o == nil || o.Divergence == nil || o.Divergence.Path != "/run_id" {
		t.Errorf("oracle %+v, want a divergence at /run_id", o)
	}
}
