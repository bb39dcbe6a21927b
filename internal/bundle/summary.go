package bundle

import "path/filepath"

// Summary is what a command that wrote a bundle says of it in its --json
// summary (mine, session codify, ingest, persona): where it is, what it
// holds and how far it is from promotion. Each command adds its own
// fields beside these.
type Summary struct {
	// Path is the bundle's directory, as given, in slash form.
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	RiskLevel string `json:"risk_level"`
	// PromotionStatus and PromotionReasons are the manifest's promotion
	// criteria: the status and the codes of its reasons.
	PromotionStatus  string   `json:"promotion_status"`
	PromotionReasons []string `json:"promotion_reasons"`
}

// Summary is m's Summary, for the bundle written into dir.
func (m *Manifest) Summary(dir string) Summary {
	return Summary{
		Path: filepath.ToSlash(dir), Kind: m.Kind, RiskLevel: m.RiskLevel,
		PromotionStatus: m.Promotion.Criteria.Status, PromotionReasons: m.PromotionCodes(),
	}
}

// PromotionCodes lists the codes of the reasons for m's promotion
// status, in their order; never nil, so that JSON says [] for none.
func (m *Manifest) PromotionCodes() []string {
	codes := []string{}
	for _, r := range m.Promotion.Criteria.Reasons {
		codes = append(codes, r.Code)
	}
	return codes
}
