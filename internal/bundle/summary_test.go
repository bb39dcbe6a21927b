package bundle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

func TestManifestSummary(t *testing.T) {
	m := &Manifest{Kind: "candidate", RiskLevel: "medium"}
	m.Promotion.Criteria = Criteria{Status: StatusBlocked, Reasons: []Reason{{Code: "heldout_required"}, {Code: "low_confidence"}}}
	want := Summary{Path: "out/b", Kind: "candidate", RiskLevel: "medium", PromotionStatus: StatusBlocked, PromotionReasons: []string{"heldout_required", "low_confidence"}}
	if diff := cmp.Diff(want, m.Summary("out/b")); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
	// No reason is [] in JSON, never null.
	m.Promotion.Criteria.Reasons = nil
	b, err := candidate.EncodeJSON(m.Summary("b"))
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{
  "kind": "candidate",
  "path": "b",
  "promotion_reasons": [],
  "promotion_status": "blocked",
  "risk_level": "medium"
}
`
	if string(b) != wantJSON {
		t.Errorf("Summary as JSON = %s, want %s", b, wantJSON)
	}
}
