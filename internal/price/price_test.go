package price

import (
	"math"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		model, family string
		ok            bool
	}{
		// Logs write the family with a snapshot date.
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", true},
		{"claude-opus-4-1-20250805", "claude-opus-4-1", true},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5", true},
		{"claude-sonnet-4-6", "claude-sonnet-4-6", true},
		{"claude-3-5-sonnet-20241022", "claude-3-5-sonnet", true},
		{"claude-3-5-sonnet-latest", "claude-3-5-sonnet", true},
		{"gpt-5-2025-08-07", "gpt-5", true},
		{"gpt-5-codex", "gpt-5-codex", true},
		{"gpt-4o-2024-08-06", "gpt-4o", true},
		{"gpt-4.1-mini-2025-04-14", "gpt-4.1-mini", true},
		{"gemini-2.5-flash-lite", "gemini-2.5-flash-lite", true},
		// Providers' spellings of the same family.
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-6[1m]", "claude-sonnet-4-6", true},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", true},
		{"Claude-Sonnet-4-5-20250929", "claude-sonnet-4-5", true},
		// A model the table does not know is not priced as a neighbour.
		{"claude-sonnet-4-7", "", false},
		{"claude-opus-4-9-20270101", "", false},
		{"gpt-5.5", "", false},
		{"gpt-5.4-mini", "", false},
		{"gemini-2.5-pro-preview-06-05", "", false},
		{"o3", "", false},
		{"<synthetic>", "", false},
		{"", "", false},
	}
	table := Default()
	for _, tt := range tests {
		_, family, ok := table.Lookup(tt.model)
		if family != tt.family || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v, want %q, %v", tt.model, family, ok, tt.family, tt.ok)
		}
	}
}

func TestCost(t *testing.T) {
	p, _, _ := Default().Lookup("claude-sonnet-4-5-20250929")
	// 1,000 plain input tokens at $3, 20,000 cache reads at $0.30, 1,000
	// cache writes at $3.75 and 60 output tokens at $15, per million.
	got := p.Cost(Usage{Input: 22000, CacheRead: 20000, CacheWrite: 1000, Output: 60})
	want := (1000*3 + 20000*0.30 + 1000*3.75 + 60*15) / 1e6
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("Cost = %v, want %v", got, want)
	}
	// Cached tokens beyond the input are not a negative plain count.
	if got := (Price{Input: 1, CacheRead: 1}).Cost(Usage{Input: 10, CacheRead: 20}); math.Abs(got-20e-6) > 1e-12 {
		t.Errorf("Cost(more cached than input) = %v, want %v", got, 20e-6)
	}
}

func TestWith(t *testing.T) {
	base := Default()
	table := base.With(map[string]Price{
		"claude-sonnet-4-5": {Input: 1, Output: 2},
		"My-Finetune":       {Input: 7, Output: 8},
	})
	if p, _, _ := table.Lookup("claude-sonnet-4-5-20250929"); p.Input != 1 || p.Output != 2 {
		t.Errorf("overridden Lookup = %+v, want input 1, output 2", p)
	}
	if p, _, ok := table.Lookup("my-finetune"); !ok || p.Input != 7 {
		t.Errorf("added Lookup = %+v, %v, want input 7", p, ok)
	}
	// The table it was made from is unchanged.
	if p, _, _ := base.Lookup("claude-sonnet-4-5-20250929"); p.Input != 3 {
		t.Errorf("base Lookup after With = %+v, want input 3", p)
	}
}

// TestEntries checks that every entry says where its figures come from
// and prices what it can.
func TestEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Entries() {
		if e.Source == "" || e.Input <= 0 || e.Output <= 0 || e.CacheRead <= 0 || e.CacheWrite <= 0 {
			t.Errorf("entry %s: %+v: a source and four positive prices are required", e.Model, e)
		}
		if seen[e.Model] || normalize(e.Model) != e.Model {
			t.Errorf("entry %s: repeated, or not in the form Lookup keys", e.Model)
		}
		seen[e.Model] = true
	}
}

// Dollars takes a log's own dollars first, prices tokens by the table,
// and says when it cannot rather than answer $0.
func TestDollars(t *testing.T) {
	tab := Default().With(map[string]Price{"house-model": {Input: 2, Output: 10}})
	tests := []struct {
		model  string
		u      Usage
		logged float64
		want   float64
		ok     bool
	}{
		{"house-model", Usage{Input: 1_000_000, Output: 100_000}, 0, 3, true},
		{"house-model", Usage{Input: 1_000_000}, 0.5, 0.5, true},
		{"unknown-model", Usage{Input: 10}, 0, 0, false},
		{"unknown-model", Usage{Input: 10}, 0.25, 0.25, true},
		{"unknown-model", Usage{}, 0, 0, true},
	}
	for _, tt := range tests {
		got, ok := tab.Dollars(tt.model, tt.u, tt.logged)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Dollars(%q, %+v, %v) = %v, %v, want %v, %v", tt.model, tt.u, tt.logged, got, ok, tt.want, tt.ok)
		}
	}
}
