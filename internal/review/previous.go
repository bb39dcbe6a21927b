package review

import (
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/textdiff"
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
	return &Previous{Label: "approved in " + bestDir, SHA256: best.Workflow.SHA256, Diff: diffLines(textdiff.Unified(bestDir+"/"+best.Workflow.Path, p.Dir+"/"+p.Manifest.Workflow.Path, old, cur))}
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
