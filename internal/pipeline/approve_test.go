package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/review"
)

// TestApproveBundle approves a bundle the pipeline wrote: the decision is
// in its manifest and in the approval ledger of the state directory a run
// checks it against.
func TestApproveBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, _, err := MineDir(context.Background(), MineDirOptions{
		Corpus:  CorpusOptions{Dir: "../../examples/traces", Mine: mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z"}},
		Heldout: HeldoutOptions{Dirs: []string{"../../examples/heldout"}},
		Outputs: Outputs{Bundle: dir, BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z", MinExamples: 2, MinConfidence: 0.8}},
	}); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	m, err := review.ApproveBundle(dir, state, bundle.Approval{Actor: "lead", At: "2026-01-02T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if h := m.Promotion.ApprovalHistory; len(h) != 1 || h[0].Actor != "lead" {
		t.Errorf("approval history = %+v", h)
	}
	ledger, err := os.ReadFile(filepath.Join(state, ledger.File))
	if err != nil || !strings.Contains(string(ledger), m.CandidateID) {
		t.Errorf("ledger = %q, %v; want the decision on %s", ledger, err, m.CandidateID)
	}
	if _, err := review.ApproveBundle(t.TempDir(), state, bundle.Approval{Actor: "lead", At: "2026-01-02T00:00:00Z"}); err == nil {
		t.Error("ApproveBundle of a directory without a bundle succeeded")
	}
}
