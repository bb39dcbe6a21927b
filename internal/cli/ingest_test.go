package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
)

// runIngestCmd runs the command line args, returning the exit code,
// stdout and stderr.
func runIngestCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}
	code := run(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

// sampleFixture is the release-harness sample of the shared conformance
// fixtures, read in place.
const sampleFixture = "../../../shared/fixtures/harn/release_harn_sample"

func requireSample(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sampleFixture, "manifest.json")); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixture %s: %v", sampleFixture, err)
		}
		t.Skipf("conformance fixture %s not present (set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require it): %v", sampleFixture, err)
	}
	return sampleFixture
}

// TestIngestConformance runs ingest on the release-harness sample and
// checks the numbers the release-harness spec gives for it, the bundle, and a
// v3 copy of the sample with side-effect evidence.
func TestIngestConformance(t *testing.T) {
	from := requireSample(t)
	dir := t.TempDir()
	b, rep := filepath.Join(dir, "B"), filepath.Join(dir, "report.json")
	code, out, errOut := runIngestCmd(t, "ingest", "--from", from, "--bundle", b, "--shadow", "--report", rep)
	if code != exitOK {
		t.Fatalf("ingest exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, re := range []string{
		`(?m)^Ingest: from=` + regexp.QuoteMeta(from) + ` run_id=sample-0\.7\.52-to-0\.7\.53 version=0\.7\.52->0\.7\.53 candidate=candidate_[0-9a-f]{16}$`,
		`(?m)^Bundle: ` + regexp.QuoteMeta(b) + ` \(kind=candidate schema_version=1 fixtures=1\)$`,
		`(?m)^Segments: deterministic=7 agentic=4 \(review-required: 4\)$`,
		`(?m)^Recovery: shell_failures=1 recovery_runs=1 fed_into_agent=true$`,
		`(?m)^Shadow replay: candidate_id=candidate_[0-9a-f]{16} compared=1 pass=true$`,
		`(?m)^Promotion: blocked \(heldout_required\) risk=medium$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("ingest stdout does not match %s:\n%s", re, out)
		}
	}

	var r candidate.Report
	if err := json.Unmarshal([]byte(readFileT(t, rep)), &r); err != nil {
		t.Fatal(err)
	}
	if r.Selected() == nil {
		t.Fatal("report selects no candidate")
	}
	if got := r.RecoverySummary; got == nil || !cmp.Equal(got.FailedSteps, []string{"push"}) || got.ShellFailuresSeen != 1 || !got.FailuresFedIntoAgent {
		t.Errorf("recovery_summary = %+v; want failed steps [push], 1 failure, fed into agent", got)
	}
	seg := r.SegmentSummary
	if seg == nil || seg.DeterministicCount != 7 || seg.AgenticCount != 4 {
		t.Fatalf("segment_summary = %+v", seg)
	}
	for _, want := range []string{"failed step push", "agent review attempt release_audit", "agent recovery advice for push"} {
		if !slices.ContainsFunc(seg.RequiresHumanReview, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("segment_summary.requires_human_review = %q; want an entry starting %q", seg.RequiresHumanReview, want)
		}
	}
	// The bundle's report is the same report, redacted.
	if br := readFileT(t, filepath.Join(b, "report.json")); !strings.Contains(br, `"segment_summary"`) || !strings.Contains(br, `"recovery_summary"`) {
		t.Error("bundle report.json lacks segment_summary or recovery_summary")
	}
	if v := bundle.Validate(b); !v.OK {
		t.Errorf("bundle.Validate(%s) problems: %+v", b, v.Problems)
	}
	if sc, err := bundle.ReplayShadow(b); err != nil || !sc.Pass || !sc.Matches || sc.Compared != 1 {
		t.Errorf("bundle.ReplayShadow = %+v, %v; want a matching pass over 1 trace", sc, err)
	}
	// No step that failed, or runs a failed step again, is reached without
	// an approval right before it.
	wf := readFileT(t, filepath.Join(b, "workflow.star"))
	// Every agent-authored step waits for a person: the review artifacts
	// too, not only the review attempt and the recovery advice.
	if i := strings.Index(wf, `ctx.tool("agent_review_artifacts"`); i < 0 {
		t.Error("workflow.star lacks the agent_review_artifacts step")
	} else if before := wf[:i]; !strings.Contains(before[strings.LastIndex(before, "\n    # step"):], `ctx.approve(`) {
		t.Errorf("workflow.star runs agent_review_artifacts without an approval before it:\n%s", before[strings.LastIndex(before, "\n    # step"):])
	}
	// The failed push is recorded as a release step and as a tool
	// observation: one failure, so the workflow runs it once. Its branch
	// is the workflow's parameter, not this release's.
	if n := strings.Count(wf, `"git push -u origin " + target_release_branch`); n != 1 {
		t.Errorf("workflow.star makes the failed git push's command %d times, want once:\n%s", n, wf)
	}
	if n := strings.Count(wf, `ctx.tool("push", command = push_command)`); n != 1 {
		t.Errorf("workflow.star runs the failed git push %d times, want once:\n%s", n, wf)
	}
	if strings.Contains(wf, "0.7.53") {
		t.Errorf("workflow.star names the recorded release's next version 0.7.53; it is a parameter:\n%s", wf)
	}
	for _, call := range []string{`ctx.tool("push", `, `"push-no-verify-after-green-hook-budget",`, "ctx.model(\n        \"agent_recovery_advice.push\",\n        inputs = {"} {
		i := strings.Index(wf, call)
		if i < 0 {
			t.Errorf("workflow.star lacks %s", call)
			continue
		}
		before := wf[:i]
		last := before[strings.LastIndex(before, "\n    # step"):]
		if !strings.Contains(last, `ctx.approve(`) || !strings.Contains(last, `"recovery_review"`) {
			t.Errorf("workflow.star runs %s without a recovery_review approval before it:\n%s", call, last)
		}
	}

	// A v3 copy with side-effect evidence: the pushes write a git ref, so
	// the risk is not low.
	v3 := writeV3Sample(t, from)
	b3 := filepath.Join(dir, "B3")
	code, out, errOut = runIngestCmd(t, "ingest", "--from", v3, "--bundle", b3, "--shadow", "--json")
	if code != exitOK {
		t.Fatalf("ingest v3 exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var s pipeline.IngestSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("ingest --json output: %v\n%s", err, out)
	}
	if s.Schema != "release_harn.crystallization_input.v3" || s.Bundle.RiskLevel != "high" || s.Segments.Deterministic != 7 || s.Shadow == nil || !s.Shadow.Pass {
		t.Errorf("ingest v3 summary = %+v; want schema v3, risk high (not low: pushes write a git ref and agent steps are fuzzy), 7 deterministic, shadow pass", s)
	}
	if v := bundle.Validate(b3); !v.OK {
		t.Errorf("bundle.Validate(%s) problems: %+v", b3, v.Problems)
	}
}

// writeV3Sample writes a v3 copy of the sample into a temporary directory:
// the same events, with side_effects_known and side_effects on every
// release step and tool observation.
func writeV3Sample(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	effects := map[string][]map[string]any{
		"setup-release-branch":                   {{"kind": "git_ref", "target": "release/v0.7.53", "capability": "git.write", "mutation": "create"}},
		"prepare":                                {{"kind": "file_write", "target": "Cargo.toml", "capability": "fs.write", "mutation": "update"}},
		"commit":                                 {{"kind": "git_commit", "target": "release/v0.7.53", "capability": "git.write", "mutation": "create"}},
		"push":                                   {{"kind": "git_ref", "target": "origin/release/v0.7.53", "capability": "git.push", "mutation": "push"}},
		"push-no-verify-after-green-hook-budget": {{"kind": "git_ref", "target": "origin/release/v0.7.53", "capability": "git.push", "mutation": "push"}},
		"create-pr":                              {{"kind": "pull_request", "target": "main", "capability": "github.write", "mutation": "create"}},
	}
	for _, name := range []string{"manifest.json", "deterministic-events.jsonl", "agent-events.jsonl", "tool-observations.jsonl"} {
		src := strings.ReplaceAll(readFileT(t, filepath.Join(from, name)), "crystallization_input.v1", "crystallization_input.v3")
		if strings.HasSuffix(name, ".jsonl") {
			var lines []string
			for line := range strings.SplitSeq(strings.TrimSpace(src), "\n") {
				var row map[string]any
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatal(err)
				}
				data, _ := row["data"].(map[string]any)
				switch row["event_type"] {
				case "release_step_recorded":
					data["side_effects_known"] = true
					data["side_effects"] = effects[data["name"].(string)]
				case "tool_observation":
					data["side_effects_known"] = true
					data["side_effects"] = []any{}
					if step, _ := data["step_name"].(string); step != "" {
						data["side_effects"] = effects[step]
					}
				}
				out, err := json.Marshal(row)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, string(out))
			}
			src = strings.Join(lines, "\n") + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
