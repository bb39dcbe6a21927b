package replay

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// tagged is a two-step run: tag a version, then check out its branch.
func tagged(id, version, branch string) *trace.Trace {
	return &trace.Trace{Version: 1, ID: id, SourceHash: "sha256:" + id, Actions: []trace.Action{
		{ID: id + "-1", Kind: trace.KindToolCall, Name: "release.tag", Parameters: map[string]any{"version": version}},
		{ID: id + "-2", Kind: trace.KindToolCall, Name: "git.checkout", Parameters: map[string]any{"branch": branch}},
	}}
}

func derivedCandidate(sources []*trace.Trace) *candidate.Candidate {
	c := &candidate.Candidate{
		ID: "candidate_tagged", Name: "tagged",
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "release.tag", Arguments: []candidate.Argument{{Key: "version", Kind: candidate.ArgParameter, Parameter: "version"}}},
			{Index: 2, Kind: trace.KindToolCall, Name: "git.checkout", Arguments: []candidate.Argument{{Key: "branch", Kind: candidate.ArgParameter, Parameter: "branch"}}},
		},
		Parameters: []candidate.Parameter{{Name: "version", Key: "version", SourcePaths: []string{"steps[1].parameters.version"}, Type: "string", Required: true}},
		DerivedParameters: []candidate.DerivedParameter{{
			Parameter:  candidate.Parameter{Name: "branch", Key: "branch", SourcePaths: []string{"steps[2].parameters.branch"}, Type: "string", Required: true},
			Expression: `"release-" + version`, Refs: []string{"version"}, SourceChecks: len(sources),
		}},
		Warnings: []candidate.Problem{}, RejectionReasons: []candidate.Problem{},
	}
	for _, a := range sources[0].Actions {
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
	}
	for _, s := range sources {
		c.Examples = append(c.Examples, candidate.Example{TraceID: s.ID, SourceHash: s.SourceHash})
	}
	return c
}

func TestApplyChecksDerivedParameters(t *testing.T) {
	sources := []*trace.Trace{tagged("s1", "1.0", "release-1.0"), tagged("s2", "1.1", "release-1.1"), tagged("s3", "1.2", "release-1.2")}
	unrelated := &trace.Trace{Version: 1, ID: "u", SourceHash: "sha256:u", Actions: []trace.Action{{ID: "u-1", Kind: trace.KindToolCall, Name: "other"}}}
	tests := []struct {
		name        string
		heldout     []*trace.Trace
		derived     bool
		checks      int
		rejectTrace string
	}{
		{"held-out traces agree", []*trace.Trace{tagged("h1", "2.0", "release-2.0"), unrelated}, true, 1, ""},
		{"one held-out trace disagrees", []*trace.Trace{tagged("h1", "2.0", "release-2.0"), tagged("h2", "3.0", "hotfix"), unrelated}, false, 2, "h2"},
		// Each trace of a batch is checked against its own alignment: a
		// trace that lacks the procedure, ahead of one that disagrees,
		// neither hides the disagreement nor lends it its alignment.
		{"a disagreeing trace after an unrelated one", []*trace.Trace{unrelated, tagged("h2", "3.0", "hotfix")}, false, 1, "h2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &candidate.Report{Candidates: []candidate.Candidate{*derivedCandidate(sources)}}
			Apply(r, sources, tt.heldout)
			if len(r.Candidates) != 1 {
				t.Fatalf("%d safe candidates, want 1: %+v", len(r.Candidates), r.RejectedCandidates)
			}
			c := r.Candidates[0]
			var rejected []candidate.Problem
			for _, w := range c.Warnings {
				if w.Code == candidate.CodeDerivationRejected {
					rejected = append(rejected, w)
				}
			}
			if tt.derived {
				if len(c.DerivedParameters) != 1 || len(c.Parameters) != 1 || len(rejected) != 0 {
					t.Fatalf("derived %+v, parameters %+v, warnings %+v; want branch still derived", c.DerivedParameters, c.Parameters, rejected)
				}
				d := c.DerivedParameters[0]
				if d.HeldoutChecks != tt.checks || len(d.Evidence) != tt.checks || !d.Evidence[0].Match || d.Evidence[0].Role != candidate.RoleHeldout || d.Evidence[0].Inputs["version"] != "2.0" {
					t.Errorf("evidence = %d checks, %+v", d.HeldoutChecks, d.Evidence)
				}
				return
			}
			if len(c.DerivedParameters) != 0 || len(c.Parameters) != 2 || c.Parameters[1].Name != "branch" {
				t.Errorf("derived %+v, parameters %+v; want branch a parameter again", c.DerivedParameters, c.Parameters)
			}
			if len(rejected) != 1 || rejected[0].TraceID != tt.rejectTrace {
				t.Errorf("derivation_rejected warnings = %+v, want one naming %s", rejected, tt.rejectTrace)
			}
		})
	}
}

// A report may be edited by hand: a derived parameter whose expression
// does not parse, or that reads a name the held-out trace has no value
// for, goes back to being a parameter with a warning naming it, and
// nothing panics.
func TestApplyDerivedHostile(t *testing.T) {
	sources := []*trace.Trace{tagged("s1", "1.0", "release-1.0"), tagged("s2", "1.1", "release-1.1")}
	tests := []struct {
		name string
		edit func(*candidate.DerivedParameter)
	}{
		{"unparseable expression", func(d *candidate.DerivedParameter) { d.Expression = `"release-" + version.split(` }},
		{"not the expression language", func(d *candidate.DerivedParameter) { d.Expression = `__import__("os")` }},
		{"index far out of range", func(d *candidate.DerivedParameter) { d.Expression = `version.split(".")[99999999999]` }},
		{"name not among the refs", func(d *candidate.DerivedParameter) { d.Expression = `"release-" + nope` }},
		{"reads no parameter", func(d *candidate.DerivedParameter) { d.Expression, d.Refs = `"release-" + nope`, []string{"nope"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := derivedCandidate(sources)
			tt.edit(&c.DerivedParameters[0])
			r := &candidate.Report{Candidates: []candidate.Candidate{*c}}
			Apply(r, sources, []*trace.Trace{tagged("h1", "2.0", "release-2.0")})
			if len(r.Candidates) != 1 {
				t.Fatalf("%d safe candidates, want 1: %+v", len(r.Candidates), r.RejectedCandidates)
			}
			got := r.Candidates[0]
			if len(got.DerivedParameters) != 0 || len(got.Parameters) != 2 || got.Parameters[1].Name != "branch" {
				t.Errorf("derived %+v, parameters %+v; want branch a parameter again", got.DerivedParameters, got.Parameters)
			}
			var rejected []candidate.Problem
			for _, w := range got.Warnings {
				if w.Code == candidate.CodeDerivationRejected {
					rejected = append(rejected, w)
				}
			}
			if len(rejected) != 1 || rejected[0].Path != "derived_parameters.branch" {
				t.Errorf("derivation_rejected warnings = %+v, want one at derived_parameters.branch", rejected)
			}
		})
	}
}
