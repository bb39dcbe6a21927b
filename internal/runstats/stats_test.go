package runstats

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestReadStatsBadRecords(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"not-json":  "{",
		"not-a-run": `{"version":1,"id":"x","actions":[]}`,
		"no-status": `{"version":1,"id":"x","actions":[],"metadata":{"crystallize_run":{"workflow":"wf"}}}`,
	} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		os.WriteFile(filepath.Join(dir, name, runstate.TraceFile), []byte(data), 0o644)
	}
	st, err := ReadStats(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workflows) != 0 || len(st.Skipped) != 3 {
		t.Fatalf("ReadStats = %+v, want three skipped runs and no workflow", st)
	}
	for _, s := range st.Skipped {
		if s.Error == "" {
			t.Errorf("%s skipped without a reason", s.Dir)
		}
	}
	if _, err := ReadStats(filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("ReadStats of a missing directory succeeded")
	}
}

// A call's spend is its actions' recorded model calls and tokens, its
// dollars the log's own or the price table's, and a model no table
// knows is listed, not priced at $0.
func TestSpend(t *testing.T) {
	tab := price.Default().With(map[string]price.Price{"house-model": {Input: 2, Output: 10}})
	actions := []trace.Action{
		{ID: "a", Kind: trace.KindModelCall, Cost: &trace.Cost{Model: "house-model", ModelCalls: 1, InputTokens: 1_000_000, OutputTokens: 100_000}},
		{ID: "b", Kind: trace.KindModelCall, Cost: &trace.Cost{Model: "mystery", ModelCalls: 1, InputTokens: 50, TotalCostUSD: 0.5}},
		{ID: "c", Kind: trace.KindModelCall, Cost: &trace.Cost{Model: "mystery", ModelCalls: 2, InputTokens: 10, OutputTokens: 5}},
		{ID: "d", Kind: trace.KindToolCall},
	}
	got, unpriced := spend(actions, tab)
	want := Spend{ModelCalls: 4, Tokens: 1_100_065, CostUSD: 3.5}
	if got != want || len(unpriced) != 1 || unpriced[0] != "mystery" {
		t.Errorf("spend = %+v, %v, want %+v, [mystery]", got, unpriced, want)
	}
}

// The comparison is of medians: one session that wandered does not
// make the procedure look dearer than it typically is.
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{1, 100, 3}, 3},
		{[]float64{4, 1, 100, 2}, 3},
	} {
		var spends []Spend
		for _, v := range tc.in {
			spends = append(spends, Spend{ModelCalls: v, Tokens: v * 10, CostUSD: v / 10})
		}
		want := Spend{ModelCalls: tc.want, Tokens: tc.want * 10, CostUSD: tc.want / 10}
		if got := median(spends); got != want {
			t.Errorf("median(%v) = %+v, want %+v", tc.in, got, want)
		}
	}
}
