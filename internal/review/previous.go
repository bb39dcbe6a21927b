package review

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
	"github.com/crystallize-dev/crystallize/internal/textdiff"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// previousVersion finds the last approved version of p's workflow among
// the other bundles the server shows: a bundle of the same workflow
// (same name) whose recomputed status is ready, so its latest decision
// approves the bytes it holds now; of several, the one generated last.
// Mining again into a new directory next to the approved bundle, and
// reviewing both, shows what changed in code and side effects since the
// approval. Nil when there is none, or it has the same bytes.
func previousVersion(p *Page, dirs []string) *Previous {
	if p.Manifest == nil || len(p.Source) == 0 {
		return nil
	}
	var best *bundle.Manifest
	var bestDir string
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(p.Dir) {
			continue
		}
		b, err := bundle.Read(d)
		if err != nil || b.Manifest.Workflow.Name != p.Manifest.Workflow.Name || b.Manifest.Workflow.SHA256 == p.SourceSHA256 {
			continue
		}
		if !bundle.Ready(d).OK() {
			continue
		}
		if best == nil || b.Manifest.GeneratedAt > best.GeneratedAt {
			best, bestDir = b.Manifest, d
		}
	}
	if best == nil {
		return nil
	}
	old, err := readInside(bestDir, best.Workflow.Path)
	if err != nil {
		return nil
	}
	cur, err := readInside(p.Dir, p.Manifest.Workflow.Path)
	if err != nil {
		return nil
	}
	return &Previous{Label: "approved in " + bestDir, SHA256: best.Workflow.SHA256,
		Diff:    diffLines(textdiff.Unified(bestDir+"/"+best.Workflow.Path, p.Dir+"/"+p.Manifest.Workflow.Path, old, cur)),
		Effects: effectsDiff(best.SideEffects, p.Manifest.SideEffects)}
}

// archivedVersion finds the last approved version of p's workflow in
// the state directory: the ledger's most recent approval of a workflow
// of the same name with other bytes, read from the archive approving
// keeps (ledger.LastApproved). A bundle mined again in place holds no
// copy of what was approved before; the archive does. A copy that is
// missing or was changed since, or a ledger that cannot be read, is a
// Previous with Err saying so, never a diff against bytes nobody
// approved. Nil when the ledger holds no such approval.
func archivedVersion(p *Page, stateDir string) *Previous {
	if p.Manifest == nil || len(p.Source) == 0 {
		return nil
	}
	v, err := ledger.LastApproved(stateDir, p.Manifest.Workflow.Name, p.SourceSHA256)
	if err != nil {
		return &Previous{Label: "the approval ledger in " + stateDir, Err: err.Error()}
	}
	if v == nil {
		return nil
	}
	label := "approved by " + v.Actor + " at " + v.RecordedAt + " (candidate " + v.CandidateID + "), kept in " + filepath.Join(stateDir, ledger.ArchiveDir)
	if v.Err != nil {
		return &Previous{Label: label, SHA256: v.SHA256, Err: v.Err.Error()}
	}
	cur, err := readInside(p.Dir, p.Manifest.Workflow.Path)
	if err != nil {
		return nil
	}
	from := filepath.Join(stateDir, ledger.ArchiveDir, v.SHA256+".star")
	return &Previous{Label: label, SHA256: v.SHA256,
		Diff:    diffLines(textdiff.Unified(from, p.Dir+"/"+p.Manifest.Workflow.Path, v.Source, cur)),
		Effects: effectsDiff(v.SideEffects, p.Manifest.SideEffects)}
}

// effectsDiff is the diff of two lists of side effects, each one line of
// JSON, sorted so that an order that changed alone is no change; nil
// when they are the same.
func effectsDiff(old, cur []trace.SideEffect) []DiffLine {
	a, b := effectLines(old), effectLines(cur)
	if a == b {
		return nil
	}
	return diffLines(textdiff.Unified("approved side effects", "side effects now", []byte(a), []byte(b)))
}

func effectLines(ses []trace.SideEffect) string {
	lines := make([]string, 0, len(ses))
	for _, se := range ses {
		lines = append(lines, compact(se))
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// diffLines classes the lines of a unified diff for the page.
func diffLines(d string) []DiffLine {
	var out []DiffLine
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		out = append(out, DiffLine{Class: c, Text: l})
	}
	return out
}
