package runner

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"
)

// TestSummaryKeys pins the keys of a run's Summary, the contract that
// `crystallize run --json` and an MCP tool result share: every one is
// present even for an empty result, and lists are [] rather than null.
func TestSummaryKeys(t *testing.T) {
	data, err := json.Marshal((&Result{}).Summary())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{
		"allow_unapproved", "approvals", "commands", "cost_usd", "dir", "dry_run", "dry_run_calls",
		"duration_ms", "error", "fallbacks", "model_calls", "output", "pending", "receipts", "refusals",
		"run_id", "status", "steps", "tokens_used", "tool_calls", "verification", "workflow",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("Summary keys = %v, want %v", keys, want)
	}
	for _, k := range []string{"refusals", "commands", "dry_run_calls", "fallbacks"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("Summary %s = %v, want []", k, m[k])
		}
	}
}
