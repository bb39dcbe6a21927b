package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// releaseOrigin is the bundle the test candidates come from.
var releaseOrigin = Origin{Dir: "bundle", Manifest: "bundle/candidate.json", Title: "Cut a release", Workflow: "cut_release"}

// releaseCandidate is the shape mining gives release traces, with one step
// of every lowering: deterministic tool calls with constant, parameter,
// binding and secret arguments, a read-only model step, a fuzzy step that
// writes, a human approval and an approval point on a later step.
func releaseCandidate() candidate.Candidate {
	return candidate.Candidate{
		ID:   "candidate_0123456789abcdef",
		Name: "cut_release",
		Parameters: []candidate.Parameter{
			{Name: "version", Key: "version", Type: "string", Required: true, Examples: []any{"v1.2.0", "v1.3.0"}},
		},
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "git.tag", Segment: candidate.Deterministic,
				Capabilities: []string{"git.write"},
				SideEffects:  []trace.SideEffect{{Kind: "git_ref", Target: "tags"}},
				Arguments: []candidate.Argument{
					{Key: "tag", Kind: candidate.ArgParameter, Parameter: "version"},
					{Key: "sign", Kind: candidate.ArgConstant, Value: true},
					{Key: "repo", Kind: candidate.ArgConstant, Value: "acme/app"},
				}},
			{Index: 2, Kind: trace.KindModelCall, Name: "summarize_changes", Segment: candidate.Fuzzy},
			{Index: 3, Kind: trace.KindHumanApproval, Name: "release_manager", Segment: candidate.Deterministic,
				Approval: &trace.Approval{Prompt: "Publish the release?", Required: true, Boundary: "publish"}},
			{Index: 4, Kind: trace.KindToolCall, Name: "notes.edit", Segment: candidate.Fuzzy,
				Capabilities: []string{"fs.write"},
				SideEffects:  []trace.SideEffect{{Kind: "file_write", Target: "CHANGELOG.md"}}},
			{Index: 5, Kind: trace.KindExternalAPICall, Name: "github.release", Segment: candidate.Deterministic,
				Capabilities: []string{"github.write"},
				Arguments: []candidate.Argument{
					{Key: "tag", Kind: candidate.ArgBinding, Binding: &candidate.Binding{Step: 5, FromStep: 1, FromField: "output", FromPath: "$.tag"}},
					{Key: "token", Kind: candidate.ArgSecret, Secret: "github_token"},
				}},
		},
		ApprovalPoints: []candidate.ApprovalPoint{{Step: 5, Boundary: "external api", Required: true}},
	}
}

func TestFromCandidate(t *testing.T) {
	c := releaseCandidate()
	data, err := FromCandidate(&c, releaseOrigin)
	if err != nil {
		t.Fatalf("FromCandidate: %v", err)
	}
	p, err := Parse(data, "plan.json")
	if err != nil {
		t.Fatalf("Parse(FromCandidate) = %v", err)
	}
	if got, want := p.Objective, releaseOrigin.Title; got != want {
		t.Errorf("FromCandidate objective = %q, want %q (the origin's title)", got, want)
	}
	if !strings.Contains(string(data), `"workflow": "cut_release"`) {
		t.Errorf("FromCandidate does not record the origin's workflow:\n%s", data)
	}
	type node struct {
		ID, Kind  string
		Tools     []string
		Command   map[string]any
		HumanGate map[string]any
	}
	var got []node
	for _, n := range p.Nodes {
		got = append(got, node{n.ID, n.Kind, n.Tools, n.Command, n.HumanGate})
	}
	want := []node{
		{ID: "s01_step_git_tag", Kind: "deterministic_command", Tools: []string{"git.tag"},
			Command: map[string]any{"tool": "git.tag", "args": []any{"tag={{version}}", "sign=true", "repo=acme/app"}}},
		{ID: "s02_step_summarize_changes", Kind: "read_fact"},
		{ID: "s03_approve", Kind: "human_gate",
			HumanGate: map[string]any{"approval_id": "publish", "prompt": "Publish the release?", "skippable": false}},
		{ID: "s04_step_notes_edit", Kind: "agent_loop", Tools: []string{"notes.edit"}},
		{ID: "s05_approve", Kind: "human_gate",
			HumanGate: map[string]any{"approval_id": "external_api", "prompt": "approve step 5 (github.release)", "skippable": false}},
		{ID: "s05_step_github_release", Kind: "deterministic_command", Tools: []string{"github.release"},
			Command: map[string]any{"tool": "github.release", "args": []any{"tag={{steps.1.output:$.tag}}", "token={{secret:github_token}}"}}},
		{ID: ShadowGateNode, Kind: "verify"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromCandidate nodes (-want +got):\n%s", diff)
	}
	var chain []string
	for _, e := range p.Edges {
		chain = append(chain, e.From+">"+e.To)
	}
	wantChain := []string{
		"s01_step_git_tag>s02_step_summarize_changes",
		"s02_step_summarize_changes>s03_approve",
		"s03_approve>s04_step_notes_edit",
		"s04_step_notes_edit>s05_approve",
		"s05_approve>s05_step_github_release",
		"s05_step_github_release>shadow_gate",
	}
	if diff := cmp.Diff(wantChain, chain); diff != "" {
		t.Errorf("FromCandidate edges (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"git.tag", "github.release", "notes.edit"}, p.Capabilities["tools"]); diff != "" {
		t.Errorf("FromCandidate capabilities.tools (-want +got):\n%s", diff)
	}
	if got, want := p.Capabilities["side_effect_level"], "external"; got != want {
		t.Errorf("FromCandidate side_effect_level = %v, want %v", got, want)
	}
	if got := p.Node(ShadowGateNode).Verify["command"]; got != "crystallize shadow bundle" {
		t.Errorf("FromCandidate shadow gate command = %v", got)
	}
	if got := p.Node("s04_step_notes_edit").AgentLoop["done_sentinel"]; got != "DONE" {
		t.Errorf("FromCandidate agent_loop.done_sentinel = %v, want DONE", got)
	}
	if !strings.Contains(string(data), `"placeholder": "{{version}}"`) {
		t.Errorf("FromCandidate does not document the parameter placeholder:\n%s", data)
	}
	again, err := FromCandidate(&c, releaseOrigin)
	if err != nil || string(again) != string(data) {
		t.Errorf("FromCandidate is not deterministic: %v", err)
	}
	if _, err := Compile(p); err != nil {
		t.Errorf("Compile(FromCandidate) = %v", err)
	}
}

// TestFromCandidateLong checks that a candidate longer than the default
// budgets still gives a plan that validates, its budgets raised to its
// bounds.
func TestFromCandidateLong(t *testing.T) {
	c := releaseCandidate()
	c.Steps, c.ApprovalPoints = nil, nil
	for i := 1; i <= 40; i++ {
		c.Steps = append(c.Steps, candidate.Step{Index: i, Kind: trace.KindToolCall, Name: fmt.Sprintf("tool%d", i), Segment: candidate.Deterministic})
	}
	data, err := FromCandidate(&c, releaseOrigin)
	if err != nil {
		t.Fatalf("FromCandidate: %v", err)
	}
	p, err := Parse(data, "plan.json")
	if err != nil {
		t.Fatalf("Parse(FromCandidate) = %v", err)
	}
	if got, want := p.Nodes[0].ID, "s01_step_tool1"; got != want {
		t.Errorf("first node = %s, want %s", got, want)
	}
	if got, want := len(p.Nodes), 41; got != want {
		t.Errorf("node count = %d, want %d", got, want)
	}
	if p.Budgets["max_nodes"] == nil || p.Budgets["max_depth"] == nil {
		t.Errorf("budgets = %v, want max_nodes and max_depth raised", p.Budgets)
	}
}
