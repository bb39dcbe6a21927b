package cli

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestShadowSummaryCountsUnlisted checks that the text summary of a
// shadow report counts the passing source examples it does not list,
// and says so only when there are some.
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

	sh.PassedNotListed, sh.ComparedTraces = 0, 3
	if got := shadowSummary(sh); strings.Contains(got, "not listed") || !strings.Contains(got, "1/2 source examples replay;") && !strings.Contains(got, "1/2 source examples replay,") {
		t.Errorf("summary without unlisted examples: %q", got)
	}
}
