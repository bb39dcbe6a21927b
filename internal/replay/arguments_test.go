package replay

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// pushed is a three-step release run: analyze the versions, tag the next
// one, push with a flag.
func pushed(id, version, tag, flag string) *trace.Trace {
	return &trace.Trace{Version: 1, ID: id, SourceHash: "sha256:" + id, Actions: []trace.Action{
		{ID: id + "-1", Kind: trace.KindToolCall, Name: "analyze", Parameters: map[string]any{"next_version": version}},
		{ID: id + "-2", Kind: trace.KindToolCall, Name: "tag", Parameters: map[string]any{"command": tag}},
		{ID: id + "-3", Kind: trace.KindToolCall, Name: "push", Parameters: map[string]any{"flag": flag, "version": version}},
	}}
}

// oneRun is the candidate of pushed("s", "1.0.1", "git tag v1.0.1",
// "--atomic") as a one-run workflow: next_version a parameter, the tag
// command derived from it, the flag a constant.
func oneRun(compared bool) *candidate.Candidate {
	src := pushed("s", "1.0.1", "git tag v1.0.1", "--atomic")
	c := &candidate.Candidate{
		ID: "candidate_pushed", Name: "pushed", ArgumentsCompared: compared,
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "analyze", Arguments: []candidate.Argument{{Key: "next_version", Kind: candidate.ArgParameter, Parameter: "next_version"}}},
			{Index: 2, Kind: trace.KindToolCall, Name: "tag", Arguments: []candidate.Argument{{Key: "command", Kind: candidate.ArgParameter, Parameter: "tag_command"}}},
			{Index: 3, Kind: trace.KindToolCall, Name: "push", Arguments: []candidate.Argument{
				{Key: "flag", Kind: candidate.ArgConstant, Value: "--atomic"},
				{Key: "version", Kind: candidate.ArgParameter, Parameter: "next_version"},
			}},
		},
		Parameters: []candidate.Parameter{{Name: "next_version", Key: "next_version", SourcePaths: []string{"steps[1].parameters.next_version", "steps[3].parameters.version"}, Type: "string", Required: true}},
		DerivedParameters: []candidate.DerivedParameter{{
			Parameter:  candidate.Parameter{Name: "tag_command", Key: "command", SourcePaths: []string{"steps[2].parameters.command"}, Type: "string", Required: true},
			Expression: `"git tag v" + next_version`, Refs: []string{"next_version"}, SourceChecks: 1,
		}},
		Examples: []candidate.Example{{TraceID: src.ID, SourceHash: src.SourceHash}},
		Warnings: []candidate.Problem{}, RejectionReasons: []candidate.Problem{},
	}
	for _, a := range src.Actions {
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
	}
	return c
}

// TestShadowComparesArguments: a candidate that compares arguments holds
// a held-out run to every value but its parameters; one that does not
// compares signatures only, as before.
func TestShadowComparesArguments(t *testing.T) {
	src := pushed("s", "1.0.1", "git tag v1.0.1", "--atomic")
	tests := []struct {
		name string
		t    *trace.Trace
		// path of the argument that differs, "" when the trace passes.
		path string
	}{
		{"the next release", pushed("next", "1.0.2", "git tag v1.0.2", "--atomic"), ""},
		{"a constant differs", pushed("forced", "1.0.2", "git tag v1.0.2", "--force"), "$.actions[2].parameters.flag"},
		{"a derived value differs", pushed("retag", "1.0.2", "git tag -f v1.0.2", "--atomic"), "$.actions[1].parameters.command"},
		{"a derived value from another version", pushed("stale", "1.0.2", "git tag v1.0.1", "--atomic"), "$.actions[1].parameters.command"},
		{"a parameter disagrees with itself", func() *trace.Trace {
			t := pushed("split", "1.0.2", "git tag v1.0.2", "--atomic")
			t.Actions[2].Parameters["version"] = "1.0.3"
			return t
		}(), "$.actions[2].parameters.version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := Shadow(oneRun(true), []*trace.Trace{src}, []*trace.Trace{tt.t})
			if len(sh.Traces) != 2 || sh.Traces[0].Status != candidate.StatusPass {
				t.Fatalf("source comparison %+v", sh.Traces)
			}
			got := sh.Traces[1]
			if tt.path == "" {
				if got.Status != candidate.StatusPass {
					t.Errorf("held-out %s: status %s, details %+v; want pass", tt.t.ID, got.Status, got.Details)
				}
				return
			}
			if got.Status != candidate.StatusFail || len(got.Details) != 1 || got.Details[0].Code != candidate.CodeArgumentDiffers || got.Details[0].Path != tt.path {
				t.Errorf("held-out %s: status %s, details %+v; want fail with %s at %s", tt.t.ID, got.Status, got.Details, candidate.CodeArgumentDiffers, tt.path)
			}
			// Without the promise, arguments are not compared.
			if sh := Shadow(oneRun(false), []*trace.Trace{src}, []*trace.Trace{tt.t}); sh.Traces[1].Status != candidate.StatusPass {
				t.Errorf("held-out %s against a candidate that does not compare arguments: %+v", tt.t.ID, sh.Traces[1])
			}
		})
	}
}

// TestApplyKeepsComparedDerivations: a held-out run that contradicts a
// derived value of a candidate that compares arguments fails, and the
// value stays derived: it is not one a caller chooses.
func TestApplyKeepsComparedDerivations(t *testing.T) {
	src := pushed("s", "1.0.1", "git tag v1.0.1", "--atomic")
	r := &candidate.Report{Candidates: []candidate.Candidate{*oneRun(true)}}
	Apply(r, []*trace.Trace{src}, []*trace.Trace{pushed("retag", "1.0.2", "git tag -f v1.0.2", "--atomic")})
	all := append(r.Candidates, r.RejectedCandidates...)
	if len(all) != 1 {
		t.Fatalf("candidates %+v", all)
	}
	c := all[0]
	if len(c.DerivedParameters) != 1 || len(c.Parameters) != 1 {
		t.Fatalf("derived %+v, parameters %+v; want tag_command still derived", c.DerivedParameters, c.Parameters)
	}
	ev := c.DerivedParameters[0].Evidence
	if len(ev) != 1 || ev[0].Match || ev[0].Role != candidate.RoleHeldout || ev[0].Want != "git tag -f v1.0.2" {
		t.Errorf("evidence %+v; want the held-out mismatch", ev)
	}
	for _, w := range c.Warnings {
		if w.Code == candidate.CodeDerivationRejected {
			t.Errorf("warning %+v: a compared derivation is not rejected", w)
		}
	}
	if h := c.Shadow.Traces[1]; h.Status != candidate.StatusFail {
		t.Errorf("held-out status %s, want fail", h.Status)
	}
}

// TestEffectTarget: a target expression is evaluated on a run's values;
// a target without one, with one it does not spell, or with a value
// missing stays as it is.
func TestEffectTarget(t *testing.T) {
	values := map[string]string{"next_version": "1.0.2"}
	expr := map[string]any{candidate.TargetExpression: `"refs/tags/v" + next_version`}
	tests := []struct {
		se   trace.SideEffect
		vals map[string]string
		want string
	}{
		{trace.SideEffect{Target: `{"refs/tags/v" + next_version}`, Metadata: expr}, values, "refs/tags/v1.0.2"},
		{trace.SideEffect{Target: `{"refs/tags/v" + next_version}`, Metadata: expr}, map[string]string{}, `{"refs/tags/v" + next_version}`},
		{trace.SideEffect{Target: "refs/tags/v1.0.1", Metadata: expr}, values, "refs/tags/v1.0.1"},
		{trace.SideEffect{Target: "refs/tags/v1.0.1"}, values, "refs/tags/v1.0.1"},
		{trace.SideEffect{Target: `{x(}`, Metadata: map[string]any{candidate.TargetExpression: `x(`}}, values, `{x(}`},
	}
	for _, tt := range tests {
		if got := EffectTarget(tt.se, tt.vals); got != tt.want {
			t.Errorf("EffectTarget(%+v, %v) = %q, want %q", tt.se, tt.vals, got, tt.want)
		}
	}
}

// TestShadowResolvesTargetExpressions: a side effect whose target is an
// expression over the parameters matches each run's own target, and only
// that one.
func TestShadowResolvesTargetExpressions(t *testing.T) {
	withRef := func(tr *trace.Trace, ref string) *trace.Trace {
		tr.Actions[1].SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: ref}}
		return tr
	}
	src := withRef(pushed("s", "1.0.1", "git tag v1.0.1", "--atomic"), "refs/tags/v1.0.1")
	c := oneRun(true)
	c.Steps[1].SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: `{"refs/tags/v" + next_version}`,
		Metadata: map[string]any{candidate.TargetExpression: `"refs/tags/v" + next_version`}}}
	next := withRef(pushed("next", "1.0.2", "git tag v1.0.2", "--atomic"), "refs/tags/v1.0.2")
	stale := withRef(pushed("stale", "1.0.2", "git tag v1.0.2", "--atomic"), "refs/tags/v1.0.1")
	sh := Shadow(c, []*trace.Trace{src}, []*trace.Trace{next, stale})
	if len(sh.Traces) != 3 {
		t.Fatalf("traces %+v", sh.Traces)
	}
	if sh.Traces[0].Status != candidate.StatusPass || sh.Traces[1].Status != candidate.StatusPass {
		t.Errorf("source %s %+v, next release %s %+v; want both to pass", sh.Traces[0].Status, sh.Traces[0].Details, sh.Traces[1].Status, sh.Traces[1].Details)
	}
	if got := sh.Traces[2]; got.Status != candidate.StatusFail || len(got.Details) != 1 || got.Details[0].Code != candidate.CodeSideEffectsDiffer {
		t.Errorf("stale tag: %s %+v; want fail with %s", got.Status, got.Details, candidate.CodeSideEffectsDiffer)
	}
}

// TestShadowParameterWithoutSource: a parameter that no trace gives (no
// source path, as in a candidate edited by hand) is the caller's to
// choose, so whatever a held-out run passes for it is no difference, and
// comparing it reads no path the candidate lacks.
func TestShadowParameterWithoutSource(t *testing.T) {
	src := pushed("s", "1.0.1", "git tag v1.0.1", "--atomic")
	c := oneRun(true)
	c.Steps[2].Arguments[0] = candidate.Argument{Key: "flag", Kind: candidate.ArgParameter, Parameter: "flag"}
	c.Parameters = append(c.Parameters, candidate.Parameter{Name: "flag", Key: "flag", Type: "string"})
	sh := Shadow(c, []*trace.Trace{src}, []*trace.Trace{pushed("forced", "1.0.2", "git tag v1.0.2", "--force")})
	for _, st := range sh.Traces {
		if st.Status != candidate.StatusPass {
			t.Errorf("%s %s: status %s, details %+v; want pass", st.Role, st.TraceID, st.Status, st.Details)
		}
	}
}
