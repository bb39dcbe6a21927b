package bundle

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteMinConfidenceErrorNamesOption checks that the refusal of a
// confidence threshold out of range names the option and the value, so
// the caller knows what to change.
func TestWriteMinConfidenceErrorNamesOption(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	o.MinConfidence = -0.25
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.input(t)
	_, err := Write(context.Background(), filepath.Join(t.TempDir(), "bundle"), in, o)
	if want := "bundle options: MinConfidence must be between 0 and 1, got -0.25"; err == nil || !strings.HasSuffix(err.Error(), ": "+want) {
		t.Errorf("Write with MinConfidence -0.25 = %v, want %q", err, want)
	}
}

// TestWriteDefaults checks what a bundle records for options the caller
// left unset: the examples promotion requires are the mining run's
// min_examples, else DefaultMinExamples; the date is the report's; the
// generator version is "devel"; team and repo are given when given.
func TestWriteDefaults(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, tt := range []struct {
		name        string
		mined       int
		o           Options
		minExamples int
		generator   string
	}{
		{"mined min_examples", 3, Options{}, 3, "devel"},
		{"none mined", 0, Options{}, DefaultMinExamples, "devel"},
		{"given", 3, Options{MinExamples: 5, GeneratorVersion: "1.2.3", Team: "release", Repo: "example/repo"}, 5, "1.2.3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: tt.o}
			in := sc.input(t)
			in.Report.Mining.MinExamples = tt.mined
			m, err := Write(context.Background(), filepath.Join(t.TempDir(), "bundle"), in, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if m.Promotion.Criteria.MinExamples != tt.minExamples || m.Generator.Version != tt.generator || m.GeneratedAt != in.Report.GeneratedAt || m.Promotion.CreatedAt != in.Report.GeneratedAt {
				t.Errorf("min_examples %d, generator %q, generated_at %q, created_at %q; want %d, %q and the report's %q",
					m.Promotion.Criteria.MinExamples, m.Generator.Version, m.GeneratedAt, m.Promotion.CreatedAt, tt.minExamples, tt.generator, in.Report.GeneratedAt)
			}
			if tt.o.Team != "" && (m.Team == nil || *m.Team != tt.o.Team || m.Repo == nil || *m.Repo != tt.o.Repo) {
				t.Errorf("team %v, repo %v; want %q and %q", m.Team, m.Repo, tt.o.Team, tt.o.Repo)
			}
		})
	}
}
