package bundle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// kindOf classifies a candidate as the package comment describes.
func kindOf(c *candidate.Candidate) string {
	if c == nil || !c.Safe() {
		return KindRejected
	}
	for _, se := range c.SideEffects {
		if !dataPlane(se) {
			return KindCandidate
		}
	}
	return KindPlanOnly
}

// dataPlane reports whether a side effect stays in the tool's own data
// plane: receipts, event-log appends and plan stashes, which a host can
// roll back or ignore and which touch nothing outside it.
func dataPlane(se trace.SideEffect) bool {
	switch se.Kind {
	case "receipt", "receipt_write", "event_log", "plan", "plan_stash", "tenant_event_log":
		return true
	}
	switch se.Target {
	case "tenant_event_log", "event_log":
		return true
	}
	return false
}

// writeWords are the words that make a capability or mutation write-class.
var writeWords = []string{"write", "publish", "push", "delete", "deploy", "release", "admin"}

func writeClass(s string) bool {
	s = strings.ToLower(s)
	for _, w := range writeWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// riskOf rates a candidate as the package comment describes.
func riskOf(c *candidate.Candidate, kind string) string {
	if c == nil || kind == KindPlanOnly {
		return RiskLow
	}
	external, writes := false, false
	for _, se := range c.SideEffects {
		if dataPlane(se) {
			continue
		}
		external = true
		if writeClass(se.Capability) || writeClass(se.Mutation) || writeClass(se.Kind) {
			writes = true
		}
	}
	if !external {
		return RiskLow
	}
	fuzzy := slices.ContainsFunc(c.Steps, func(s candidate.Step) bool { return s.Segment == candidate.Fuzzy })
	if writes && (len(c.RequiredSecrets) > 0 || fuzzy) {
		return RiskHigh
	}
	return RiskMedium
}

// blockers returns the reasons that block promotion of c, in the order of
// the package comment.
func blockers(c *candidate.Candidate, samples int, divergences []DivergenceRecord, minExamples int, minConfidence float64) []Reason {
	var rs []Reason
	add := func(code, format string, args ...any) {
		rs = append(rs, Reason{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if c == nil {
		add(ReasonNoCandidate, "no safe candidate was selected")
		// A rejected bundle records the drift that rejected its
		// candidates; it can only add a blocking reason.
		if len(divergences) > 0 {
			d := divergences[0]
			add(ReasonReceiptDrift, "replay receipts drifted on %d trace(s); first: %s at %s", len(divergences), d.TraceID, d.Path)
		}
		return rs
	}
	if !c.Safe() {
		codes := make([]string, 0, len(c.RejectionReasons))
		for _, p := range c.RejectionReasons {
			if !slices.Contains(codes, p.Code) {
				codes = append(codes, p.Code)
			}
		}
		add(ReasonCandidateRejected, "the candidate is rejected (%s)", strings.Join(codes, ", "))
	}
	sh := c.Shadow
	switch {
	case sh == nil:
		add(ReasonShadowMissing, "shadow comparison has not run")
	case !sh.Pass:
		add(ReasonShadowFailed, "shadow comparison did not pass: %d of %d compared traces passed", countStatus(sh, "", candidate.StatusPass), sh.ComparedTraces)
	}
	if sh != nil {
		passed, failed := countStatus(sh, candidate.RoleHeldout, candidate.StatusPass), countStatus(sh, candidate.RoleHeldout, candidate.StatusFail)
		switch {
		case passed == 0 && failed > 0:
			add(ReasonHeldoutFailed, "none of the %d compared held-out traces passed", failed)
		case passed == 0:
			add(ReasonHeldoutRequired, "no held-out trace containing the procedure was compared (%d unmatched); pass --shadow-from", countStatus(sh, candidate.RoleHeldout, candidate.StatusUnmatched))
		}
	}
	if len(divergences) > 0 {
		d := divergences[0]
		add(ReasonReceiptDrift, "replay receipts drifted on %d trace(s); first: %s at %s", len(divergences), d.TraceID, d.Path)
	}
	if samples < minExamples {
		add(ReasonInsufficientExamples, "%d examples, fewer than the %d required", samples, minExamples)
	}
	if c.Confidence < minConfidence {
		add(ReasonLowConfidence, "confidence %.4g is below the minimum %.4g", c.Confidence, minConfidence)
	}
	return rs
}

// countStatus counts the shadow traces with the given status, of the
// given role or of any role when role is "", the passing source examples
// the report counts without listing them included.
func countStatus(sh *candidate.ShadowReport, role, status string) int {
	n := 0
	if status == candidate.StatusPass && (role == "" || role == candidate.RoleSource) {
		n = sh.PassedNotListed
	}
	for _, t := range sh.Traces {
		if (role == "" || t.Role == role) && t.Status == status {
			n++
		}
	}
	return n
}

// divergencesOf lists the replay-oracle divergences of the shadow traces.
func divergencesOf(sh *candidate.ShadowReport) []DivergenceRecord {
	out := []DivergenceRecord{}
	if sh == nil {
		return out
	}
	for _, t := range sh.Traces {
		if t.ReplayOracle == nil || t.ReplayOracle.Divergence == nil {
			continue
		}
		d := t.ReplayOracle.Divergence
		out = append(out, DivergenceRecord{TraceID: t.TraceID, Path: d.Path, Message: d.Message, Left: d.Left, Right: d.Right})
	}
	return out
}

// approvalCodes are the reasons the approval state adds; every other
// reason blocks.
func approvalReason(code string) bool {
	return code == ReasonApprovalRequired || code == ReasonApprovalRejected
}

// settle sets the status and reasons of the criteria from the blocking
// reasons already in them and the approval history: blocked when any
// blocking reason remains, else ready when the latest decision for the
// candidate and workflow hash is an approval, else needs_approval.
func settle(m *Manifest) {
	settleCriteria(&m.Promotion.Criteria, latestDecision(m))
}

// settleCriteria is settle for criteria whose latest approval decision is
// decision ("" when there is none).
func settleCriteria(cr *Criteria, decision string) {
	var rs []Reason
	for _, r := range cr.Reasons {
		if !approvalReason(r.Code) {
			rs = append(rs, r)
		}
	}
	switch {
	case len(rs) > 0:
		cr.Status = StatusBlocked
	default:
		switch decision {
		case DecisionApproved:
			cr.Status = StatusReady
		case DecisionRejected:
			cr.Status = StatusNeedsApproval
			rs = append(rs, Reason{Code: ReasonApprovalRejected, Message: "the latest decision on this workflow is a rejection; regenerate or approve it"})
		default:
			cr.Status = StatusNeedsApproval
			rs = append(rs, Reason{Code: ReasonApprovalRequired, Message: "a human approval of this candidate and workflow is required (crystallize approve)"})
		}
	}
	if rs == nil {
		rs = []Reason{}
	}
	cr.Reasons = rs
}

// latestDecision returns the decision of the latest approval record for the
// manifest's candidate id and workflow sha256, or "".
func latestDecision(m *Manifest) string {
	h := m.Promotion.ApprovalHistory
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].CandidateID == m.CandidateID && h[i].WorkflowSHA256 == m.Workflow.SHA256 {
			return h[i].Decision
		}
	}
	return ""
}

// Promote sets the promotion state of every candidate of r, the rejected
// ones included, from the evidence the report holds: the candidate's
// rejection reasons, its shadow report and the replay divergences in it,
// its examples and confidence, against opts.MinExamples and
// opts.MinConfidence (defaulted as Write defaults them). It is what the
// manifest's promotion says of a bundle's candidate, without the
// bundle's own metadata; approval_history is empty, since approval is
// recorded on a bundle (Approve), never in a mining report. Promote is
// idempotent; Write calls it on its report.
func Promote(r *candidate.Report, opts Options) {
	if r == nil {
		return
	}
	minExamples, minConfidence := opts.MinExamples, opts.minConfidence()
	if minExamples == 0 {
		minExamples = r.Mining.MinExamples
	}
	if minExamples == 0 {
		minExamples = DefaultMinExamples
	}
	meta := opts.promotionMetadata(r.GeneratedAt)
	set := func(c *candidate.Candidate) {
		div := divergencesOf(c.Shadow)
		p := &candidate.Promotion{
			SampleCount:       len(c.Examples),
			DivergenceHistory: div,
			ApprovalHistory:   []ApprovalRecord{},
			Criteria: Criteria{
				MinExamples:           minExamples,
				MinConfidence:         minConfidence,
				RequiresShadowPass:    true,
				RequiresHeldoutPass:   true,
				RequiresHumanApproval: true,
				Reasons:               blockers(c, len(c.Examples), div, minExamples, minConfidence),
			},
		}
		settleCriteria(&p.Criteria, "")
		p.Status, p.Reasons = p.Criteria.Status, p.Criteria.Reasons
		p.PromotionMetadata = meta
		c.Promotion = p
	}
	for i := range r.Candidates {
		set(&r.Candidates[i])
	}
	for i := range r.RejectedCandidates {
		set(&r.RejectedCandidates[i])
	}
}

// recompute derives the blocking reasons of a manifest from its own
// recorded evidence (rejection reasons, shadow report, sample count,
// confidence and thresholds) instead of trusting its stored reasons, so
// that an edited status or reason list does not unblock a candidate.
func recompute(m *Manifest) []Reason {
	cr := m.Promotion.Criteria
	if m.CandidateID == "" {
		return blockers(nil, 0, m.Promotion.DivergenceHistory, cr.MinExamples, cr.MinConfidence)
	}
	rejections := m.RejectionReasons
	c := &candidate.Candidate{
		ID:               m.CandidateID,
		Confidence:       m.Confidence,
		RejectionReasons: rejections,
		Shadow:           m.Shadow,
	}
	return blockers(c, m.Promotion.SampleCount, divergencesOf(m.Shadow), cr.MinExamples, cr.MinConfidence)
}

// Attempted returns the candidate a bundle of r should hold: the selected
// one, or, when none is selected, the first rejected candidate that
// replay rejected for receipt drift. Such a candidate was safe until its
// receipts drifted from the recorded ones, so its bundle (of kind
// rejected, blocked) is what a reviewer needs to see what was attempted
// and where the receipts diverged. It returns nil when neither exists.
func Attempted(r *candidate.Report) *candidate.Candidate {
	if sel := r.Selected(); sel != nil {
		return sel
	}
	for i := range r.RejectedCandidates {
		c := &r.RejectedCandidates[i]
		if slices.ContainsFunc(c.RejectionReasons, func(p candidate.Problem) bool { return p.Code == candidate.CodeReceiptDrift }) {
			return c
		}
	}
	return nil
}

// Candidate returns the bundle's candidate as its report.json records it
// (steps with their kinds, capabilities, side effects and expected
// outputs), or nil for a bundle that holds none. A runtime reads it to
// record a run's steps as the candidate describes them.
func (b *Bundle) Candidate() (*candidate.Candidate, error) {
	if b.Manifest == nil || b.Manifest.CandidateID == "" {
		return nil, nil
	}
	return readCandidate(b.Dir, b.Manifest.CandidateID)
}

// ExampleActions returns, for each example of the bundle's candidate
// whose trace the bundle holds as a source fixture, the actions its steps
// matched (by action id, in step order): what the agent did, and spent,
// on the procedure in that session. Examples of traces the bundle does not
// hold, or whose actions are not all found, are left out; a fixture that
// cannot be read safely is an error. A bundle without a candidate has no
// examples.
func (b *Bundle) ExampleActions() ([][]trace.Action, error) {
	c, err := b.Candidate()
	if err != nil || c == nil {
		return nil, err
	}
	fixtures := map[string]Fixture{}
	for _, f := range b.Manifest.Fixtures {
		if f.Role == candidate.RoleSource {
			fixtures[f.TraceID+"\x00"+f.SourceHash] = f
		}
	}
	var out [][]trace.Action
	for _, ex := range c.Examples {
		f, ok := fixtures[ex.TraceID+"\x00"+ex.SourceHash]
		if !ok || len(ex.ActionIDs) == 0 {
			continue
		}
		t, err := readFixture(b.Dir, f)
		if err != nil {
			return nil, err
		}
		byID := map[string]int{}
		for i := range t.Actions {
			byID[t.Actions[i].ID] = i
		}
		var acts []trace.Action
		for _, id := range ex.ActionIDs {
			i, ok := byID[id]
			if !ok {
				acts = nil
				break
			}
			acts = append(acts, t.Actions[i])
		}
		if acts != nil {
			out = append(out, acts)
		}
	}
	return out, nil
}

// promotionMetadata is the promotion metadata opts give every candidate
// of a report generated at generatedAt, as newManifest records it for a
// bundle's: the owner is the author, since nobody else is named, and the
// dates and version default as a bundle's do.
func (opts Options) promotionMetadata(generatedAt string) candidate.PromotionMetadata {
	version := opts.PackageVersion
	if version == "" {
		version = DefaultPackageVersion
	}
	created := opts.GeneratedAt
	if created == "" {
		created = generatedAt
	}
	return candidate.PromotionMetadata{
		Author:          strPtr(opts.Author),
		Owner:           strPtr(opts.Author),
		Approver:        strPtr(opts.Approver),
		PackageName:     opts.PackageName,
		WorkflowVersion: version,
		RollbackTarget:  RollbackTarget,
		CreatedAt:       created,
		EvalPackLink:    strPtr(opts.EvalPackLink),
	}
}
