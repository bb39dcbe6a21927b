package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

const miniHarness = "testdata/releaseharness/mini"

// copyHarness copies the fixture directory src into a temporary directory
// and applies edit (file name → new content; "" removes the file).
func copyHarness(t *testing.T, src string, edit map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range edit {
		p := filepath.Join(dir, name)
		if content == "" {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadReleaseHarness(t *testing.T) {
	tr, rh, err := LoadReleaseHarness(miniHarness)
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		ID, Kind, Name, Boundary string
		Fuzzy                    bool
	}
	var got []step
	for _, a := range tr.Actions {
		s := step{ID: a.ID, Kind: string(a.Kind), Name: a.Name, Fuzzy: a.Fuzzy != nil && *a.Fuzzy}
		if a.Approval != nil && a.Approval.Required {
			s.Boundary = a.Approval.Boundary
		}
		got = append(got, s)
	}
	// Timestamp order. The tool observation of the failed push records the
	// same failure in another stream: it is folded into the push, not a
	// second step that would run the failed command again. The failed push
	// and the retry wait for a person.
	want := []step{
		{ID: "deterministic-events.jsonl:1", Kind: "release_analysis", Name: "analyze_release"},
		{ID: "deterministic-events.jsonl:2", Kind: "release_finding", Name: "record_finding"},
		{ID: "deterministic-events.jsonl:3", Kind: "release_step", Name: "push", Boundary: BoundaryRecovery},
		{ID: "deterministic-events.jsonl:5", Kind: "release_step", Name: "push-retry", Boundary: BoundaryRecovery},
		{ID: "agent-events.jsonl:1", Kind: "model_call", Name: "agent_recovery_advice.push", Boundary: BoundaryRecovery, Fuzzy: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadReleaseHarness(%s) actions (-want +got):\n%s", miniHarness, diff)
	}
	if tr.ID != "release_harn_mini-1.0.0-to-1.0.1" || tr.Source != "mini" || !strings.HasPrefix(tr.SourceHash, "sha256:") {
		t.Errorf("trace id, source, hash = %q, %q, %q", tr.ID, tr.Source, tr.SourceHash)
	}
	if rh.Schema != ReleaseHarnessV1 || rh.CurrentVersion != "1.0.0" || rh.NextVersion != "1.0.1" || rh.Run != nil {
		t.Errorf("harness = %+v", rh)
	}
	// v1 rows do not declare side effects: unknown, which is not none.
	push := tr.Actions[2]
	if len(push.SideEffects) != 1 || push.SideEffects[0].Kind != UnknownSideEffects || push.Metadata["side_effects_known"] != false {
		t.Errorf("v1 push side effects = %+v, metadata %v; want one %s record and side_effects_known false", push.SideEffects, push.Metadata, UnknownSideEffects)
	}
	if diff := cmp.Diff([]any{"tool-observations.jsonl:1"}, push.Metadata["also_recorded_at"]); diff != "" {
		t.Errorf("push also_recorded_at (-want +got):\n%s", diff)
	}
	if advice := tr.Actions[4]; advice.Cost == nil || advice.Cost.InputTokens != 10 || len(advice.SideEffects) != 0 {
		t.Errorf("advice cost %+v side effects %+v; want 10 input tokens and no side effects", advice.Cost, advice.SideEffects)
	}

	seg := rh.Segments()
	wantSafe := []string{"release_analysis", "step push-retry (re-runs failed step push; waits for recovery_review)"}
	if diff := cmp.Diff(wantSafe, seg.SafeToAutomate); diff != "" {
		t.Errorf("Segments().SafeToAutomate (-want +got):\n%s", diff)
	}
	if len(seg.RequiresHumanReview) != 3 || !strings.HasPrefix(seg.RequiresHumanReview[1], "failed step push") {
		t.Errorf("Segments().RequiresHumanReview = %q; want finding, failed push, advice", seg.RequiresHumanReview)
	}
	rec := rh.Recovery()
	rec.Representation = ""
	if diff := cmp.Diff(Recovery{ShellFailures: 1, RecoveryRuns: 1, FedIntoAgent: true, FailedSteps: []string{"push"}}, rec); diff != "" {
		t.Errorf("Recovery() (-want +got):\n%s", diff)
	}
}

// TestReleaseHarnessFailureRecordedTwiceIsOneStep: a failure recorded both
// as a release step and as a tool observation is one step, so the workflow
// runs the failing command once; a later observation of the same command
// failing again is a second failure and stays a step, behind an approval.
func TestReleaseHarnessFailureRecordedTwiceIsOneStep(t *testing.T) {
	tools := readFile(t, filepath.Join(miniHarness, "tool-observations.jsonl"))
	again := strings.Replace(strings.TrimSpace(tools), "10:00:02Z", "10:00:03.5Z", 1)
	dir := copyHarness(t, miniHarness, map[string]string{"tool-observations.jsonl": tools + again + "\n"})
	tr, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pushes []string
	for _, a := range tr.Actions {
		if cmd, _ := a.Parameters["command"].(string); cmd == "git push origin release/v1.0.1" {
			if a.Approval == nil || a.Approval.Boundary != BoundaryRecovery {
				t.Errorf("%s runs the failed push without a %s approval", a.ID, BoundaryRecovery)
			}
			pushes = append(pushes, a.ID)
		}
	}
	want := []string{"deterministic-events.jsonl:3", "tool-observations.jsonl:2"}
	if diff := cmp.Diff(want, pushes); diff != "" {
		t.Errorf("steps running the failed push (-want +got):\n%s", diff)
	}
	if len(rh.Events) != len(tr.Actions) {
		t.Errorf("%d events but %d actions", len(rh.Events), len(tr.Actions))
	}
}

// TestReleaseHarnessAgentStepsWaitForApproval: every agent-authored step
// (review artifacts, a tool the agent ran, a row type this version does
// not know) has a required approval, not only review attempts and advice.
func TestReleaseHarnessAgentStepsWaitForApproval(t *testing.T) {
	const row = `{"schema_version":"release_harn.crystallization_input.v1","event_type":%q,"source":"agent","timestamp":"2026-05-02T10:00:05Z","data":%s}` + "\n"
	agent := readFile(t, filepath.Join(miniHarness, "agent-events.jsonl")) +
		fmt.Sprintf(row, "agent_review_artifacts", `{"draft_changelog_md":"## 1.0.1"}`) +
		fmt.Sprintf(row, "agent_plan_note", `{"text":"bump"}`)
	tools := readFile(t, filepath.Join(miniHarness, "tool-observations.jsonl")) +
		strings.Replace(fmt.Sprintf(row, "tool_observation", `{"tool":"shell","command":"git tag v1.0.1","success":true,"status":0}`), "10:00:05Z", "10:00:06Z", 1)
	dir := copyHarness(t, miniHarness, map[string]string{"agent-events.jsonl": agent, "tool-observations.jsonl": tools})
	tr, _, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	agentSteps := 0
	for _, a := range tr.Actions {
		if a.Metadata["stream"] != string(StreamAgent) && a.Metadata["source"] != "agent" {
			continue
		}
		agentSteps++
		if a.Approval == nil || !a.Approval.Required || a.Approval.Boundary == "" {
			t.Errorf("agent step %s (%s) has no required approval: %+v", a.ID, a.Name, a.Approval)
		}
	}
	if agentSteps != 4 {
		t.Errorf("%d agent steps, want 4 (advice, artifacts, unknown row, agent tool call)", agentSteps)
	}
}

func TestReleaseHarnessV3SideEffects(t *testing.T) {
	det := readFile(t, filepath.Join(miniHarness, "deterministic-events.jsonl"))
	det = strings.ReplaceAll(det, "crystallization_input.v1", "crystallization_input.v3")
	// The failed push declares what it touched; the retry says it does not
	// know.
	det = strings.Replace(det, `"classification":"hook_budget_exceeded"}`,
		`"classification":"hook_budget_exceeded","side_effects_known":true,"side_effects":[{"kind":"git_ref","target":"origin/release/v1.0.1","capability":"git.write","mutation":"push"}]}`, 1)
	det = strings.Replace(det, `"status":0}}`, `"status":0,"side_effects_known":false}}`, 1)
	dir := copyHarness(t, miniHarness, map[string]string{
		"manifest.json":              strings.ReplaceAll(readFile(t, filepath.Join(miniHarness, "manifest.json")), ".v1", ".v3"),
		"deterministic-events.jsonl": det,
		"tool-observations.jsonl":    strings.ReplaceAll(readFile(t, filepath.Join(miniHarness, "tool-observations.jsonl")), ".v1", ".v3"),
		"agent-events.jsonl":         strings.ReplaceAll(readFile(t, filepath.Join(miniHarness, "agent-events.jsonl")), ".v1", ".v3"),
	})
	tr, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rh.Schema != ReleaseHarnessV3 {
		t.Errorf("Schema = %q, want %q", rh.Schema, ReleaseHarnessV3)
	}
	want := []trace.SideEffect{{Kind: "git_ref", Target: "origin/release/v1.0.1", Capability: "git.write", Mutation: "push"}}
	if diff := cmp.Diff(want, tr.Actions[2].SideEffects); diff != "" {
		t.Errorf("v3 push side effects (-want +got):\n%s", diff)
	}
	if tr.Actions[2].Metadata["side_effects_known"] != true {
		t.Errorf("v3 push side_effects_known = %v, want true", tr.Actions[2].Metadata["side_effects_known"])
	}
	retry := tr.Actions[3]
	if len(retry.SideEffects) != 1 || retry.SideEffects[0].Kind != UnknownSideEffects ||
		retry.SideEffects[0].Metadata["reason"] != "the row says its side effects are not known" {
		t.Errorf("v3 retry with side_effects_known false: side effects %+v; want an %s record", retry.SideEffects, UnknownSideEffects)
	}
}

func TestLoadReleaseHarnessOptionalStreams(t *testing.T) {
	dir := copyHarness(t, miniHarness, map[string]string{
		"agent-events.jsonl":      "",
		"tool-observations.jsonl": "",
		"release-run.json":        `{"ok": true}`,
	})
	tr, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != 4 || rh.Run == nil {
		t.Errorf("got %d actions, run %v; want 4 and the run payload", len(tr.Actions), rh.Run)
	}
	rec := rh.Recovery()
	if rec.FedIntoAgent || rec.RecoveryRuns != 0 || rec.ShellFailures != 1 {
		t.Errorf("Recovery() without agent events = %+v", rec)
	}
}

func TestRecoveryFedOnlyWhenAdviceNamesFailedStep(t *testing.T) {
	advice := strings.Replace(readFile(t, filepath.Join(miniHarness, "agent-events.jsonl")), `"step_name":"push"`, `"step_name":"create-pr"`, 1)
	dir := copyHarness(t, miniHarness, map[string]string{"agent-events.jsonl": advice})
	_, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A failure and a recovery run, but the advice is about a step that
	// did not fail: counts alone must not claim the failure was fed in.
	if rec := rh.Recovery(); rec.FedIntoAgent || rec.ShellFailures != 1 || rec.RecoveryRuns != 1 {
		t.Errorf("Recovery() = %+v; want fed_into_agent false with 1 failure and 1 run", rec)
	}
}

func TestLoadReleaseHarnessRefusals(t *testing.T) {
	manifest := readFile(t, filepath.Join(miniHarness, "manifest.json"))
	tests := []struct {
		name   string
		edit   map[string]string
		is     error
		substr string
	}{
		{
			name:   "wrong manifest marker",
			edit:   map[string]string{"manifest.json": strings.Replace(manifest, ".v1", ".v2", 1)},
			is:     ErrReleaseHarnessSchema,
			substr: `manifest.json: $.schema_version: unsupported release-harness schema "release_harn.crystallization_input.v2"`,
		},
		{
			name:   "missing manifest",
			edit:   map[string]string{"manifest.json": ""},
			is:     fs.ErrNotExist,
			substr: "reading release-harness manifest: ",
		},
		{
			name: "zero actions",
			edit: map[string]string{
				"deterministic-events.jsonl": "\n", "agent-events.jsonl": "", "tool-observations.jsonl": "",
			},
			is:     ErrNoActions,
			substr: "release-harness fixture yields no actions",
		},
		{
			name:   "malformed line",
			edit:   map[string]string{"agent-events.jsonl": "{\"event_type\":\"agent_review_attempt\",\"timestamp\":\"2026-05-02T10:00:05Z\"}\n{\"event_type\": oops}\n"},
			substr: "agent-events.jsonl:2:16: invalid JSON",
		},
		{
			name:   "wrong row marker",
			edit:   map[string]string{"tool-observations.jsonl": `{"schema_version":"other.v1","event_type":"tool_observation","timestamp":"2026-05-02T10:00:02Z"}`},
			is:     nil,
			substr: `tool-observations.jsonl:1: $.schema_version: unsupported release-harness schema "other.v1"`,
		},
		{
			name:   "missing timestamp",
			edit:   map[string]string{"agent-events.jsonl": `{"event_type":"agent_review_attempt","data":{"success":"yes"}}`},
			substr: "agent-events.jsonl:1: $.timestamp: missing required field",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyHarness(t, miniHarness, tt.edit)
			_, _, err := LoadReleaseHarness(dir)
			if err == nil {
				t.Fatalf("LoadReleaseHarness = nil error, want %q", tt.substr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("LoadReleaseHarness error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("LoadReleaseHarness error = %q, want it to contain %q", err, tt.substr)
			}
		})
	}
}

// TestLoadReleaseHarnessReportsEveryProblem checks that one pass reports
// the problems of every stream, each at its file and line.
func TestLoadReleaseHarnessReportsEveryProblem(t *testing.T) {
	dir := copyHarness(t, miniHarness, map[string]string{
		"agent-events.jsonl":      "[1]\n",
		"tool-observations.jsonl": `{"event_type":"tool_observation","timestamp":"yesterday","data":{"success":1}}` + "\n",
	})
	_, _, err := LoadReleaseHarness(dir)
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("LoadReleaseHarness error %v is not an ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, filepath.Base(e.File)+":"+e.Path+": "+e.Msg)
	}
	want := []string{
		"agent-events.jsonl:$: expected object, got array",
		`tool-observations.jsonl:$.timestamp: "yesterday" is not an RFC 3339 time`,
		"tool-observations.jsonl:$.data.success: expected boolean, got number",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func FuzzLoadReleaseHarness(f *testing.F) {
	for _, name := range []string{"deterministic-events.jsonl", "agent-events.jsonl", "tool-observations.jsonl"} {
		b, err := os.ReadFile(filepath.Join(miniHarness, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	manifest, err := os.ReadFile(filepath.Join(miniHarness, "manifest.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "deterministic-events.jsonl"), stream, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, rh, err := LoadReleaseHarness(dir)
		if err != nil {
			return
		}
		if len(tr.Actions) == 0 || len(tr.Actions) != len(rh.Events) {
			t.Fatalf("%d actions for %d events", len(tr.Actions), len(rh.Events))
		}
		rh.Segments()
		rh.Recovery()
	})
}

// TestReleaseHarnessV3ListedRunMissing checks a v3 directory whose
// manifest lists release-run.json (and a stream) without shipping them:
// it still loads, and Missing names each absent file at its manifest
// entry.
func TestReleaseHarnessV3ListedRunMissing(t *testing.T) {
	v3 := func(name string) string {
		return strings.ReplaceAll(readFile(t, filepath.Join(miniHarness, name)), ".v1", ".v3")
	}
	manifest := `{
  "schema_version": "release_harn.crystallization_input.v3",
  "run_id": "mini-1.0.0-to-1.0.1",
  "release": {"mode": "ship-pr", "current_version": "1.0.0", "next_version": "1.0.1"},
  "files": {
    "manifest_json": "manifest.json",
    "release_run_json": "release-run.json",
    "deterministic_events_jsonl": "deterministic-events.jsonl",
    "agent_events_jsonl": "agent-events.jsonl",
    "tool_observations_jsonl": "tool-observations.jsonl",
    "readme_md": "README.md"
  }
}`
	dir := copyHarness(t, miniHarness, map[string]string{
		"manifest.json":              manifest,
		"deterministic-events.jsonl": v3("deterministic-events.jsonl"),
		"agent-events.jsonl":         v3("agent-events.jsonl"),
		"tool-observations.jsonl":    "",
	})
	tr, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatalf("LoadReleaseHarness: %v", err)
	}
	if rh.Schema != ReleaseHarnessV3 || rh.Run != nil || len(tr.Actions) == 0 {
		t.Fatalf("Schema %q, Run %v, %d actions; want v3, no run, actions", rh.Schema, rh.Run, len(tr.Actions))
	}
	var got []string
	for _, m := range rh.Missing {
		got = append(got, m.Name+" "+m.Path)
	}
	want := []string{"release-run.json $.files.release_run_json", "tool-observations.jsonl $.files.tool_observations_jsonl"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	if msg := rh.Missing[0].String(); !strings.Contains(msg, "manifest.json: $.files.release_run_json: release-run.json is listed but not in the fixture directory") {
		t.Errorf("Missing[0] = %q, want it to name the manifest entry and the file", msg)
	}

	// The default layout without release-run.json, the manifest listing
	// nothing: nothing was promised, nothing is missing.
	_, rh, err = LoadReleaseHarness(copyHarness(t, miniHarness, nil))
	if err != nil || len(rh.Missing) != 0 {
		t.Errorf("mini fixture: err %v, Missing %v; want none", err, rh.Missing)
	}
}

// TestReleaseHarnessParameters: the release's identity is read from the
// manifest's release member, then from the release analysis (the harness
// writes the bump there only); mode, repo and the other members are not
// parameters, and an empty value is none.
func TestReleaseHarnessParameters(t *testing.T) {
	manifest := `{"schema_version": "release_harn.crystallization_input.v1", "run_id": "p",
	  "release": {"repo": "/work/repo", "mode": "ship-pr", "mock": true, "current_version": "1.0.0", "next_version": "1.0.1",
	    "starting_branch": "main", "target_release_branch": "release/v1.0.1", "base_branch": "main", "latest_tag": ""}}`
	analysis := `{"schema_version":"release_harn.crystallization_input.v1","event_type":"release_analysis","source":"deterministic","timestamp":"2026-05-02T10:00:00Z","data":{"bump":"patch","next_version":"9.9.9","latest_tag":"v1.0.0"}}` + "\n"
	dir := copyHarness(t, miniHarness, map[string]string{"manifest.json": manifest, "deterministic-events.jsonl": analysis})
	_, rh, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"current_version": "1.0.0", "next_version": "1.0.1", "bump": "patch", "latest_tag": "v1.0.0",
		"base_branch": "main", "target_release_branch": "release/v1.0.1",
	}
	if diff := cmp.Diff(want, rh.Parameters()); diff != "" {
		t.Errorf("Parameters (-want +got):\n%s", diff)
	}
}

// TestReleaseHarnessReadsAreObservations: a tool observation that only
// reads (read_file, or a shell command the normalize tables read as a
// read) is an observation, whose output mining keeps as observed state;
// one that changes something, or runs a script, or a compound command
// with a write in it, stays a tool call.
func TestReleaseHarnessReadsAreObservations(t *testing.T) {
	const row = `{"schema_version":"release_harn.crystallization_input.v1","event_type":"tool_observation","source":"deterministic","timestamp":"2026-05-02T10:00:01Z","data":{"tool":%q,%s,"success":true,"status":0,"stdout":"x","stderr":""}}` + "\n"
	cases := []struct {
		tool, arg string
		want      trace.Kind
	}{
		{"shell", `"command":"git log --oneline --no-merges v1.0.0..HEAD"`, trace.KindObservation},
		{"shell", `"command":"git diff HEAD --stat"`, trace.KindObservation},
		{"shell", `"command":"git status --porcelain"`, trace.KindObservation},
		{"shell", `"command":"cat CHANGELOG.md"`, trace.KindObservation},
		{"read_file", `"path":"CHANGELOG.md"`, trace.KindObservation},
		{"shell", `"command":"git tag v1.0.1"`, trace.KindToolCall},
		{"shell", `"command":"git log --oneline > notes.txt"`, trace.KindToolCall},
		{"shell", `"command":"git status && git push origin main"`, trace.KindToolCall},
		{"shell", `"command":"./scripts/changelog.sh"`, trace.KindToolCall},
		{"gh", `"command":"gh pr view 1"`, trace.KindToolCall},
	}
	var tools strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&tools, row, c.tool, c.arg)
	}
	dir := copyHarness(t, miniHarness, map[string]string{"tool-observations.jsonl": tools.String()})
	tr, _, err := LoadReleaseHarness(dir)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, a := range tr.Actions {
		if a.Metadata["event_type"] != "tool_observation" {
			continue
		}
		if c := cases[i]; a.Kind != c.want {
			t.Errorf("%s {%s}: kind %s, want %s", c.tool, c.arg, a.Kind, c.want)
		}
		if a.ObservedOutput == nil {
			t.Errorf("%s: observed output dropped", a.ID)
		}
		i++
	}
	if i != len(cases) {
		t.Fatalf("%d tool observations in the trace, want %d", i, len(cases))
	}
}
