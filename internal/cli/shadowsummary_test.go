package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestShadowSummaryCountsUnlisted checks that the text and JSON summaries
// of a shadow report count the passing source examples it does not list,
// and say so only when there are some.
func TestShadowSummaryCountsUnlisted(t *testing.T) {
	sh := &candidate.ShadowReport{
		Pass: false, ComparedTraces: 1203, PassedNotListed: 1200,
		Traces: []candidate.ShadowTrace{
			{TraceID: "a", Role: candidate.RoleSource, Status: candidate.StatusPass},
			{TraceID: "b", Role: candidate.RoleSource, Status: candidate.StatusFail, Details: []candidate.Problem{{Code: "x", Message: "differs"}}},
			{TraceID: "h", Role: candidate.RoleHeldout, Status: candidate.StatusPass},
		},
	}
	got := shadowSummary(sh)
	for _, want := range []string{"1201/1202 source examples replay (1200 of them counted, not listed, in the report)", "1/1 held-out traces pass", "b x: differs"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q does not say %q", got, want)
		}
	}
	b, err := json.Marshal(newSummaryShadow(sh))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"compared":1203`) || !strings.Contains(string(b), `"source_passed":1201`) || !strings.Contains(string(b), `"source_passed_not_listed":1200`) {
		t.Errorf("JSON summary %s does not count the unlisted examples", b)
	}

	sh.PassedNotListed, sh.ComparedTraces = 0, 3
	if got := shadowSummary(sh); strings.Contains(got, "not listed") || !strings.Contains(got, "1/2 source examples replay;") && !strings.Contains(got, "1/2 source examples replay,") {
		t.Errorf("summary without unlisted examples: %q", got)
	}
	if b, _ := json.Marshal(newSummaryShadow(sh)); strings.Contains(string(b), "not_listed") {
		t.Errorf("JSON summary without unlisted examples names them: %s", b)
	}
}
