package replay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// fixtureDir holds the original project's release fixtures, in ../shared
// beside the module root, read in place and never copied into the
// repository.
const fixtureDir = "../../../shared/fixtures/harn/crystallize_v2_release"

// requireFixtures skips the test when the fixtures are absent, unless
// CRYSTALLIZE_REQUIRE_CONFORMANCE=1 asks for them, as CI does.
func requireFixtures(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fixtureDir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixtures required: %v", err)
		}
		t.Skipf("conformance fixtures not found at %s; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to make this a failure", fixtureDir)
	}
}

// load decodes a fixture file as the source package would, with the file
// content hash as source hash. (replay may not import source.)
func load(t *testing.T, rel string, edit func([]byte) []byte) *trace.Trace {
	t.Helper()
	path := filepath.Join(fixtureDir, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		data = edit(data)
	}
	tr, err := trace.Decode(data, rel, 0)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	tr.SourceHash = trace.HashBytes(data)
	return tr
}

// releaseCandidate mirrors the candidate mining derives from the three
// mine traces: three steps, the branch and manifest side effects, and
// release_0's receipt with its per-execution id masked.
func releaseCandidate(t *testing.T, examples []*trace.Trace) *candidate.Candidate {
	t.Helper()
	receipt := map[string]any{}
	for k, v := range examples[0].ReplayRun["effect_receipts"].([]any)[0].(map[string]any) {
		receipt[k] = v
	}
	receipt["receipt_id"] = "<allowlisted>"
	c := &candidate.Candidate{
		ID: "candidate_release_test",
		SequenceSignature: []string{
			"tool_call:git.checkout_branch:branch_name,repo_path",
			"file_mutation:update_manifest_version:path,version",
			"tool_call:cargo.package_dry_run:release_target,version",
		},
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "git.checkout_branch", SideEffects: []trace.SideEffect{
				{Kind: "git_ref", Target: "release-branch", Capability: "git.write"},
			}},
			{Index: 2, Kind: trace.KindFileMutation, Name: "update_manifest_version", SideEffects: []trace.SideEffect{
				{Kind: "file_write", Target: "harn.toml", Capability: "fs.write"},
			}},
			{Index: 3, Kind: trace.KindToolCall, Name: "cargo.package_dry_run"},
		},
		ExpectedReceipts: []any{receipt},
	}
	for _, e := range examples {
		c.Examples = append(c.Examples, candidate.Example{TraceID: e.ID, SourceHash: e.SourceHash, ActionIDs: []string{}})
	}
	return c
}

func TestConformanceRelease(t *testing.T) {
	requireFixtures(t)
	var sources []*trace.Trace
	for _, f := range []string{"mine/release_0.json", "mine/release_1.json", "mine/release_2.json"} {
		sources = append(sources, load(t, f, nil))
	}
	holdout := load(t, "holdout-pass/release_3.json", nil)
	c := releaseCandidate(t, sources)

	rep := replay.Shadow(c, sources, []*trace.Trace{holdout})
	if !rep.Pass || rep.ComparedTraces != 4 || len(rep.Failures) != 0 {
		t.Fatalf("Shadow = pass %v, compared %d, failures %v; want pass, 4 compared, no failures", rep.Pass, rep.ComparedTraces, rep.Failures)
	}
	for _, st := range rep.Traces {
		if st.Status != candidate.StatusPass || st.Fitness != 1 || st.ComparedReceipts != 1 || st.ReplayOracle == nil || !st.ReplayOracle.Passed {
			t.Errorf("trace %s: status %s, fitness %v, receipts %d, oracle %+v; want a pass with one receipt", st.TraceID, st.Status, st.Fitness, st.ComparedReceipts, st.ReplayOracle)
		}
		if st.ReplayOracle != nil && len(st.ReplayOracle.Warnings) != 0 {
			t.Errorf("trace %s: oracle warnings %v", st.TraceID, st.ReplayOracle.Warnings)
		}
	}

	// holdout-drift in the original: same actions, another receipt hash.
	drift := load(t, "holdout-pass/release_3.json", func(b []byte) []byte {
		return []byte(replaceOnce(t, string(b), `"sha256": "receipt-stable-release-flow"`, `"sha256": "receipt-drifted"`))
	})
	rep = replay.Shadow(c, sources, []*trace.Trace{drift})
	if rep.Pass {
		t.Fatal("Shadow passed a drifted receipt")
	}
	st := rep.Traces[len(rep.Traces)-1]
	want := &candidate.Divergence{
		Path:    "/effect_receipts/0/sha256",
		Left:    "receipt-drifted",
		Right:   "receipt-stable-release-flow",
		Message: "values differ",
	}
	if diff := cmp.Diff(want, st.ReplayOracle.Divergence); diff != "" {
		t.Errorf("divergence (-want +got):\n%s", diff)
	}
	wantFailures := []candidate.Problem{{
		Code:    candidate.CodeShadowFailed,
		Message: "heldout trace trace_release_3_holdout failed shadow comparison: receipt_drift",
		TraceID: "trace_release_3_holdout",
	}}
	if diff := cmp.Diff(wantFailures, rep.Failures); diff != "" {
		t.Errorf("Failures (-want +got):\n%s", diff)
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("fixture no longer contains %s", old)
	}
	return s[:i] + new + s[i+len(old):]
}
