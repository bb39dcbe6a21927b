package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/google/go-cmp/cmp"
)

func TestCheckMinConfidence(t *testing.T) {
	for _, c := range []float64{0, 0.5, 1} {
		if err := CheckMinConfidence(c); err != nil {
			t.Errorf("CheckMinConfidence(%g) = %v, want nil", c, err)
		}
	}
	for c, want := range map[float64]string{-0.1: "must be between 0 and 1, got -0.1", 1.5: "must be between 0 and 1, got 1.5"} {
		var ce *ConfidenceError
		if err := CheckMinConfidence(c); !errors.As(err, &ce) || ce.Problem() != want {
			t.Errorf("CheckMinConfidence(%g) = %v, want %s", c, err, want)
		}
	}
}

// A threshold no confidence can be compared with is refused before
// anything is written.
func TestWriteRefusesMinConfidence(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	o.MinConfidence = 1.5
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.input(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	_, err := Write(context.Background(), dir, in, o)
	var ce *ConfidenceError
	if !errors.As(err, &ce) {
		t.Fatalf("Write with MinConfidence 1.5 = %v, want a *ConfidenceError", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write refused the options but left %s behind (%v)", dir, err)
	}
}

// TestMinConfidenceExplicitZero: a MinConfidence of 0 the caller set
// requires no confidence, in the manifest's criteria, its reasons and
// the report's promotions, and validates; the zero nobody set is still
// DefaultMinConfidence.
func TestMinConfidenceExplicitZero(t *testing.T) {
	unsure := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Confidence = 0.3
		return c
	}
	for _, c := range []struct {
		name    string
		set     bool
		want    float64
		reasons []string
	}{
		{"unset", false, DefaultMinConfidence, []string{ReasonLowConfidence}},
		{"set", true, 0, []string{ReasonApprovalRequired}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, h := releaseTraces(t, nil)
			o := opts()
			o.MinConfidence, o.MinConfidenceSet = 0, c.set
			dir, m := scenario{sources: s, heldout: h, build: unsure, opts: o}.write(t)
			cr := m.Promotion.Criteria
			if cr.MinConfidence != c.want {
				t.Errorf("criteria min_confidence = %g, want %g", cr.MinConfidence, c.want)
			}
			if diff := cmp.Diff(c.reasons, reasonCodes(cr.Reasons)); diff != "" {
				t.Errorf("criteria reasons (-want +got):\n%s", diff)
			}
			if v := Validate(dir); !v.OK {
				t.Errorf("Validate: %s", describe(v))
			}
			var rep candidate.Report
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ReportFile)), &rep); err != nil {
				t.Fatal(err)
			}
			if p := rep.Candidates[0].Promotion; p == nil || p.Criteria.MinConfidence != c.want {
				t.Errorf("report.json promotion = %+v, want min_confidence %g", p, c.want)
			}
			// Promote reads the options as Write does.
			r := &candidate.Report{Candidates: []candidate.Candidate{unsure(s)}}
			Promote(r, o)
			if got := r.Candidates[0].Promotion.Criteria.MinConfidence; got != c.want {
				t.Errorf("Promote: min_confidence = %g, want %g", got, c.want)
			}
		})
	}
}

// TestPromoteMetadataDefaults checks that a report's candidates carry the
// promotion metadata their bundle's manifest would: the workflow version
// and creation date default as Write defaults them (DefaultPackageVersion,
// the report's generated_at), and what the caller gives wins.
func TestPromoteMetadataDefaults(t *testing.T) {
	s, _ := releaseTraces(t, nil)
	for _, c := range []struct {
		name             string
		o                Options
		version, created string
	}{
		{"defaults", Options{}, DefaultPackageVersion, "2026-04-27T08:00:00Z"},
		{"given", Options{PackageVersion: "2.3.4", GeneratedAt: "2026-05-01T00:00:00Z"}, "2.3.4", "2026-05-01T00:00:00Z"},
	} {
		r := &candidate.Report{GeneratedAt: "2026-04-27T08:00:00Z", Candidates: []candidate.Candidate{releaseCandidate(s)}}
		Promote(r, c.o)
		p := r.Candidates[0].Promotion
		if p == nil || p.WorkflowVersion != c.version || p.CreatedAt != c.created {
			t.Errorf("%s: promotion %+v, want workflow_version %s and created_at %s", c.name, p, c.version, c.created)
		}
	}
}
