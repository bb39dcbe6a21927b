package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixturesDir is the shared conformance corpus (traces from the original
// tool's own tests), read in place and never copied into the project.
const fixturesDir = "../../../shared/fixtures/harn"

func requireFixtures(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fixturesDir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixtures %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1): %v", fixturesDir, err)
		}
		t.Skipf("conformance fixtures %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", fixturesDir)
	}
}

// TestConformanceReleaseTraces loads the original tool's release traces
// and checks the source hashes its candidate ids are computed from.
func TestConformanceReleaseTraces(t *testing.T) {
	requireFixtures(t)
	res, err := Load(context.Background(), filepath.Join(fixturesDir, "crystallize_v2_release/mine"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		ID, Source, Hash string
		Signatures       []string
	}
	var gots []got
	for _, tr := range res.Traces {
		g := got{ID: tr.ID, Source: tr.Source, Hash: tr.SourceHash}
		for i := range tr.Actions {
			g.Signatures = append(g.Signatures, tr.Actions[i].Signature())
		}
		gots = append(gots, g)
	}
	sigs := []string{
		"tool_call:git.checkout_branch:branch_name,repo_path",
		"file_mutation:update_manifest_version:path,version",
		"tool_call:cargo.package_dry_run:release_target,version",
	}
	want := []got{
		{"trace_release_0", "release_0.json", "sha256:49eab89d31191f75ad5f9d80b69768dcffbee2c023b6f27c6dea16f00425cd25", sigs},
		{"trace_release_1", "release_1.json", "sha256:6932385b8d1546edc6755069e93d8f54454878cb13e91b7f141295ab8b58a9d7", sigs},
		{"trace_release_2", "release_2.json", "sha256:ecf9e1cebf0785a94b0e21b29d353670324381c2f1f1ec6fb7473cdc92bd7b9c", sigs},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("release traces (-want +got):\n%s", diff)
	}

	hold, err := Load(context.Background(), filepath.Join(fixturesDir, "crystallize_v2_release/holdout-pass"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := hold.Traces[0].SourceHash; h != "sha256:6e78e25d0c0ce3e9f80a3313a6358b0723f33d484f32734d194815999a7f445f" {
		t.Errorf("holdout source hash = %s", h)
	}
}

// TestConformanceScenarios loads every scenario directory and checks the
// policy marker of the policy-exclusion scenario.
func TestConformanceScenarios(t *testing.T) {
	requireFixtures(t)
	dirs, err := filepath.Glob(filepath.Join(fixturesDir, "scenarios", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, dir := range dirs {
		res, err := Load(context.Background(), dir, Options{})
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		var blocked []string
		for _, tr := range res.Traces {
			if _, ok := tr.PolicyViolation(); ok {
				blocked = append(blocked, tr.ID)
			}
		}
		want := []string(nil)
		if filepath.Base(dir) == "unit_policy_exclusion" {
			want = []string{"trace_policy_blocked"}
		}
		if diff := cmp.Diff(want, blocked); diff != "" {
			t.Errorf("%s: traces with policy violations (-want +got):\n%s", dir, diff)
		}
	}
}
