package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// Approval is a human decision on a bundle's candidate.
type Approval struct {
	// Actor is who decides (--approver); required.
	Actor string
	// Reason is why, free text.
	Reason string
	// At is when, as recorded_at (RFC 3339); required, so that the
	// caller, not this package, decides what time it is.
	At string
	// Reject records a rejection instead of an approval.
	Reject bool
	// Record, when set, is called with the decision once it is in
	// candidate.json, while the bundle is still locked: the approval
	// ledger's append, so that decisions taken at once reach the ledger
	// in the order they reach approval_history. An error is returned by
	// Approve, with the manifest it wrote.
	Record func(ApprovalRecord) error
	// AllowSelfApproval lets the bundle's recorded author approve it. By
	// default an approval must come from someone else, as a change
	// needs a reviewer who is not its author; a project where one person
	// does both says so in its configuration ([approvals]
	// allow_self_approval), never per decision.
	AllowSelfApproval bool
}

// ErrSelfApproval is returned (wrapped, naming the author) by Approve for
// an approval whose actor is the bundle's recorded author.
var ErrSelfApproval = errors.New("the author of a bundle cannot approve it")

// IsAuthor reports whether actor is the author m records
// (promotion.author): the same name once surrounding space and case are
// ignored, or once actor is redacted as the author was when the bundle
// was written. A bundle without an author has none to refuse.
func IsAuthor(m *Manifest, actor string) bool {
	if m.Promotion.Author == nil {
		return false
	}
	author := strings.TrimSpace(*m.Promotion.Author)
	actor = strings.TrimSpace(actor)
	if author == "" || actor == "" {
		return false
	}
	return strings.EqualFold(author, actor) || strings.EqualFold(author, redactID(actor))
}

// ErrBlocked is returned (wrapped, with the blocking reasons) by Approve
// for a candidate whose promotion is blocked.
var ErrBlocked = errors.New("promotion is blocked")

// Approve records a decision on the bundle in dir: it appends
// {actor, decision, recorded_at, reason, candidate_id, workflow_sha256} to
// promotion.approval_history, recomputes the status (needs_approval
// becomes ready on an approval) and rewrites candidate.json atomically. It
// refuses a bundle without a candidate, an approval by the bundle's
// author (unless a.AllowSelfApproval), a blocked candidate (naming the
// blocking reasons, recomputed from the manifest's evidence rather than
// read from its status), and a workflow file that no longer has the
// sha256 the manifest records: a decision must be about the bytes the
// bundle was made with. The bundle is locked throughout (see lock.go), so
// decisions taken at once are all kept, one after the other.
func Approve(dir string, a Approval) (*Manifest, error) {
	if strings.TrimSpace(a.Actor) == "" {
		return nil, errors.New("approving bundle: no actor")
	}
	if strings.TrimSpace(a.At) == "" {
		return nil, errors.New("approving bundle: no time")
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := Read(dir)
	if err != nil {
		return nil, err
	}
	m := b.Manifest
	if m.CandidateID == "" {
		return nil, fmt.Errorf("approving bundle %s: it holds no candidate (kind %s)", dir, m.Kind)
	}
	if !a.Reject && !a.AllowSelfApproval && IsAuthor(m, a.Actor) {
		return nil, fmt.Errorf("approving bundle %s: %w: %s wrote it; another person must approve it (or set [approvals] allow_self_approval = true in crystallize.toml)", dir, ErrSelfApproval, *m.Promotion.Author)
	}
	if rs := recompute(m); len(rs) > 0 {
		codes := make([]string, len(rs))
		for i, r := range rs {
			codes[i] = r.Code + ": " + r.Message
		}
		return nil, fmt.Errorf("approving bundle %s: %w: %s", dir, ErrBlocked, strings.Join(codes, "; "))
	}
	wf := filepath.Join(dir, filepath.FromSlash(m.Workflow.Path))
	if err := checkBundlePath(dir, m.Workflow.Path); err != nil {
		return nil, fmt.Errorf("approving bundle %s: %w", dir, err)
	}
	src, err := os.ReadFile(wf)
	if err != nil {
		return nil, fmt.Errorf("approving bundle: %w", err)
	}
	if sum := hexSHA(src); sum != m.Workflow.SHA256 {
		return nil, fmt.Errorf("approving bundle %s: %s has sha256 %s, not the %s the bundle was written with; regenerate the bundle", dir, m.Workflow.Path, sum, m.Workflow.SHA256)
	}
	decision := DecisionApproved
	if a.Reject {
		decision = DecisionRejected
	}
	m.Promotion.ApprovalHistory = append(m.Promotion.ApprovalHistory, ApprovalRecord{
		Actor: a.Actor, Decision: decision, RecordedAt: a.At, Reason: a.Reason,
		CandidateID: m.CandidateID, WorkflowSHA256: m.Workflow.SHA256,
	})
	m.Promotion.Criteria.Reasons = nil
	settle(m)
	data, err := encodeManifest(m)
	if err != nil {
		return nil, err
	}
	if err := replaceFile(filepath.Join(dir, ManifestFile), data); err != nil {
		return nil, fmt.Errorf("approving bundle: %w", err)
	}
	if a.Record != nil {
		if err := a.Record(m.Promotion.ApprovalHistory[len(m.Promotion.ApprovalHistory)-1]); err != nil {
			return m, err
		}
	}
	return m, nil
}

// checkBundlePath refuses a manifest path that could leave the bundle or
// pass through a symlink.
func checkBundlePath(dir, p string) error {
	x := &validator{dir: dir, v: &Validation{}}
	if !x.safePath(p, "") {
		return fmt.Errorf("%s", x.v.Problems[0].Message)
	}
	cur := dir
	for _, part := range strings.Split(p, "/") {
		cur = filepath.Join(cur, part)
		if st, err := os.Lstat(cur); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink", p)
		}
	}
	return nil
}

// replaceFile replaces name with data (mode 0644) through
// atomicfile.Write, so a reader sees the old or the new file, never a
// mix, and the new one survives a crash once it is in place.
func replaceFile(name string, data []byte) error {
	return atomicfile.Write(name, data, 0o644)
}
