package mine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestSingle(t *testing.T) {
	yes := true
	approve := act("a3", trace.KindToolCall, "git.push", `{"branch":"release/v1"}`)
	approve.Approval = &trace.Approval{Required: true, Boundary: "recovery_review"}
	model := act("a4", trace.KindModelCall, "review", `{"version":"1.0.1"}`)
	model.Fuzzy = &yes
	tr := mk("run",
		act("a1", trace.KindToolCall, "git.checkout", `{"branch":"release/v1"}`),
		act("a2", trace.KindToolCall, "git.checkout", `{"branch":"release/v1"}`),
		approve, model)
	trace.Normalize(tr)
	r, err := Single(context.Background(), tr, Options{WorkflowName: "Cut release", GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing; rejected %+v, warnings %+v", r.RejectedCandidates, r.Warnings)
	}
	// Every action is a step, repeats included: no mining.
	var names []string
	for _, s := range c.Steps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"git.checkout", "git.checkout", "git.push", "review"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if c.Name != "cut_release" || c.Support != 1 || len(c.Parameters) != 0 || len(c.Examples) != 1 || c.Examples[0].StartIndex != 0 {
		t.Errorf("Single candidate name %q support %d parameters %v examples %+v", c.Name, c.Support, c.Parameters, c.Examples)
	}
	if got := c.Examples[0].ActionIDs; !cmp.Equal(got, []string{"a1", "a2", "a3", "a4"}) {
		t.Errorf("example action ids = %v", got)
	}
	if want := candidateID(c.SequenceSignature, c.Examples); c.ID != want {
		t.Errorf("id = %s, want %s", c.ID, want)
	}
	if c.Steps[3].Segment != candidate.Fuzzy || c.Steps[2].Approval == nil || len(c.ApprovalPoints) != 1 {
		t.Errorf("fuzzy segment %v, approval %+v, points %+v", c.Steps[3].Segment, c.Steps[2].Approval, c.ApprovalPoints)
	}
	codes := map[string]bool{}
	for _, w := range c.Warnings {
		codes[w.Code] = true
	}
	if !codes[CodeSingleTrace] || !codes[candidate.CodeFuzzySegment] {
		t.Errorf("warnings %+v; want %s and %s", c.Warnings, CodeSingleTrace, candidate.CodeFuzzySegment)
	}
	if r.SourceTraceCount != 1 || r.Mining.Actions != 4 || r.Mining.DistinctSignatures != 3 || r.Mining.RepeatsFound != 0 || r.GeneratedAt != "2026-01-01T00:00:00Z" {
		t.Errorf("report counts %+v, %+v", r.SourceTraceCount, r.Mining)
	}
}

func TestSingleNoCandidate(t *testing.T) {
	no := false
	mut := act("a1", trace.KindFileMutation, "write", `{"path":"x"}`)
	mut.Deterministic = &no
	mut.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x"}}
	r, err := Single(context.Background(), mk("bad", mut), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Selected() != nil || r.ExcludedTraceCount != 1 || r.ExcludedTraces[0].Code != candidate.CodeNondeterministicEffect {
		t.Errorf("Single(nondeterministic side effect) = selected %v, excluded %+v; want none and %s", r.SelectedCandidateID, r.ExcludedTraces, candidate.CodeNondeterministicEffect)
	}

	_, err = Single(context.Background(), mk("empty"), Options{})
	if !errors.Is(err, ErrEmptyTrace) {
		t.Errorf("Single(empty) error = %v, want %v", err, ErrEmptyTrace)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Single(ctx, mk("run", noise("a")), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Single(cancelled) error = %v, want %v", err, context.Canceled)
	}
}

// TestSingleRunParameters: the values a run declares are its parameters
// where a step passes them whole; every argument that holds them is an
// expression over them, a side effect whose target was that argument
// follows it, an output that names them is no expectation of the next run,
// and the candidate compares arguments in shadow replay.
func TestSingleRunParameters(t *testing.T) {
	yes := true
	analyze := act("a1", trace.KindToolCall, "analyze_release", `{"current_version":"1.4.2","next_version":"1.5.0","repo":"/srv/w"}`)
	analyze.ObservedOutput = map[string]any{"next_version": "1.5.0"}
	tag := act("a2", trace.KindToolCall, "tag", `{"command":"git tag v1.5.0"}`)
	tag.ObservedOutput = map[string]any{"status": float64(0)}
	tag.SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: "refs/tags/v1.5.0", Capability: "git.write"}}
	log := act("a3", trace.KindToolCall, "shell", `{"command":"git log v1.4.2..HEAD"}`)
	log.SideEffects = []trace.SideEffect{{Kind: "unknown_side_effects", Target: "git log v1.4.2..HEAD", Capability: "shell.exec"}}
	pr := act("a4", trace.KindToolCall, "pr", `{"base":"main","title":"Release 1.5.0 (minor)"}`)
	model := act("a5", trace.KindModelCall, "review", `{"text":"looks fine"}`)
	model.Fuzzy = &yes
	model.ObservedOutput = "looks fine"
	tr := mk("run", analyze, tag, log, pr, model)
	trace.Normalize(tr)
	declared := map[string]string{"current_version": "1.4.2", "next_version": "1.5.0", "bump": "minor", "base_branch": "main"}
	r, err := Single(context.Background(), tr, Options{RunParameters: declared})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing: %+v", r.RejectedCandidates)
	}
	var params []string
	for _, p := range c.Parameters {
		params = append(params, p.Name+"@"+p.SourcePaths[0])
	}
	// bump is never passed whole, so it could not be read from a
	// held-out run: it is no parameter, and "minor" stays literal. The
	// order is that of first use.
	if diff := cmp.Diff([]string{"current_version@steps[1].parameters.current_version", "next_version@steps[1].parameters.next_version", "base_branch@steps[4].parameters.base"}, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	derived := map[string]string{}
	for _, d := range c.DerivedParameters {
		derived[d.Name] = d.Expression
		if len(d.Evidence) != 1 || !d.Evidence[0].Match || d.SourceChecks != 1 {
			t.Errorf("derived %s evidence %+v, source checks %d", d.Name, d.Evidence, d.SourceChecks)
		}
	}
	want := map[string]string{
		"tag_command":   `"git tag v" + next_version`,
		"shell_command": `"git log v" + current_version + "..HEAD"`,
		"pr_title":      `"Release " + next_version + " (minor)"`,
	}
	if diff := cmp.Diff(want, derived); diff != "" {
		t.Errorf("derived parameters (-want +got):\n%s", diff)
	}
	for _, k := range c.Constants {
		if k.Path == "parameters.command" || k.Path == "parameters.title" || k.Path == "parameters.next_version" {
			t.Errorf("constant %+v is a parameter now", k)
		}
	}
	if arg := c.Steps[1].Arguments[0]; arg.Kind != candidate.ArgParameter || arg.Parameter != "tag_command" {
		t.Errorf("step 2 argument %+v, want parameter tag_command", arg)
	}
	if arg := c.Steps[3].Arguments[0]; arg.Key != "base" || arg.Kind != candidate.ArgParameter || arg.Parameter != "base_branch" {
		t.Errorf("step 4 argument %+v, want parameter base_branch", arg)
	}
	if se := c.Steps[2].SideEffects[0]; se.Target != "{command}" || se.Metadata["target_parameter"] != "command" {
		t.Errorf("step 3 side effect %+v, want target {command}", se)
	}
	if se := c.Steps[1].SideEffects[0]; se.Target != `{"refs/tags/v" + next_version}` || se.Metadata[candidate.TargetExpression] != `"refs/tags/v" + next_version` {
		t.Errorf("step 2 side effect %+v, want target {\"refs/tags/v\" + next_version}", se)
	}
	if c.Steps[0].ExpectedOutput != nil || c.Steps[1].ExpectedOutput == nil || c.Steps[4].ExpectedOutput != nil {
		t.Errorf("expected outputs %v, %v, %v; want none where the output names a version and for the model's answer, one for the tag", c.Steps[0].ExpectedOutput, c.Steps[1].ExpectedOutput, c.Steps[4].ExpectedOutput)
	}
	for _, o := range c.ExpectedOutputs {
		if o.Step == 1 || o.Step == 5 {
			t.Errorf("expected outputs list step %d", o.Step)
		}
	}
	if !c.ArgumentsCompared {
		t.Error("ArgumentsCompared = false, want true for a one-run candidate")
	}
	// The reviewer is told which values are parameters: the declared
	// ones, by name, and nothing else.
	if w := singleTraceWarning(c); !strings.Contains(w, "except the parameters the run declares (current_version, next_version, base_branch)") {
		t.Errorf("single-trace warning %q does not name the declared parameters", w)
	}

	// Without declared values every argument stays a literal.
	r, err = Single(context.Background(), tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c = r.Selected()
	if len(c.Parameters) != 0 || len(c.DerivedParameters) != 0 || !c.ArgumentsCompared {
		t.Errorf("Single without run parameters: parameters %v derived %v compared %v", c.Parameters, c.DerivedParameters, c.ArgumentsCompared)
	}
	if w := singleTraceWarning(c); strings.Contains(w, "except") {
		t.Errorf("single-trace warning %q names parameters, and the run declared none", w)
	}
	// A model answered once: its answer is expected of no later run,
	// neither on its step nor in the candidate's list of expected
	// outputs, declared values or not.
	if c.Steps[4].ExpectedOutput != nil {
		t.Errorf("model step expected output %v, want none", c.Steps[4].ExpectedOutput)
	}
	for _, o := range c.ExpectedOutputs {
		if o.Step == 5 {
			t.Errorf("expected outputs list the model's step: %+v", o)
		}
	}
}

// TestSingleReadsAreObservedState: what a read-only step recorded (an
// observation, or a step whose every capability reads) is the state it
// found, which the next run finds changed; it is no expected output. A
// step that changes something keeps its recorded output as expected.
func TestSingleReadsAreObservedState(t *testing.T) {
	log := act("a1", trace.KindObservation, "shell", `{"command":"git log --oneline v1.0.0..HEAD"}`)
	log.ObservedOutput = map[string]any{"stdout": "c0ffee1 fix a race", "status": "0"}
	analysis := act("a2", "release_analysis", "analyze_release", `{"repo":"/work/r"}`)
	analysis.Capabilities = []string{"fs.read", "git.read"}
	analysis.ObservedOutput = map[string]any{"latest_tag": "v1.0.0"}
	tag := act("a3", "release_step", "tag", `{"command":"git tag v1"}`)
	tag.Capabilities = []string{"shell.exec"}
	tag.ObservedOutput = map[string]any{"status": "0", "success": true}
	// A step that reads but also changes something is no read.
	stamp := act("a4", trace.KindToolCall, "stamp", `{"path":"VERSION"}`)
	stamp.Capabilities = []string{"fs.read"}
	stamp.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "VERSION"}}
	stamp.ObservedOutput = "ok"
	tr := mk("run", log, analysis, tag, stamp)
	trace.Normalize(tr)
	r, err := Single(context.Background(), tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing; rejected %+v", r.RejectedCandidates)
	}
	var steps []int
	for _, o := range c.ExpectedOutputs {
		steps = append(steps, o.Step)
	}
	if diff := cmp.Diff([]int{3, 4}, steps); diff != "" {
		t.Errorf("steps with an expected output (-want +got):\n%s", diff)
	}
	for _, i := range []int{0, 1} {
		if st := c.Steps[i]; st.ExpectedOutput != nil || len(st.ReviewNotes) == 0 || !strings.Contains(st.ReviewNotes[len(st.ReviewNotes)-1], "observed output, not an expected output") {
			t.Errorf("step %d %s: expected output %v, notes %q; want none, and a note that it is observed output", st.Index, st.Name, st.ExpectedOutput, st.ReviewNotes)
		}
	}
}

// TestSingleParameterRefsOnce: a step that passes one declared value
// under two keys reads that parameter at both, and lists it once among
// the parameters it reads, beside the others it reads: the workflow's
// signature and the review page name each input of a step once.
func TestSingleParameterRefsOnce(t *testing.T) {
	push := act("a1", trace.KindToolCall, "push", `{"branch":"release-1.5","ref":"release-1.5","version":"1.5.0"}`)
	tr := mk("run", push)
	trace.Normalize(tr)
	declared := map[string]string{"target_branch": "release-1.5", "next_version": "1.5.0"}
	r, err := Single(context.Background(), tr, Options{RunParameters: declared})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing: %+v", r.RejectedCandidates)
	}
	step := c.Steps[0]
	if diff := cmp.Diff([]string{"target_branch", "next_version"}, step.ParameterRefs); diff != "" {
		t.Errorf("parameter refs (-want +got):\n%s", diff)
	}
	got := map[string]string{}
	for _, a := range step.Arguments {
		got[a.Key] = a.Parameter
	}
	if diff := cmp.Diff(map[string]string{"branch": "target_branch", "ref": "target_branch", "version": "next_version"}, got); diff != "" {
		t.Errorf("arguments' parameters (-want +got):\n%s", diff)
	}
}

// singleTraceWarning is the message of c's single_trace warning.
func singleTraceWarning(c *candidate.Candidate) string {
	for _, w := range c.Warnings {
		if w.Code == CodeSingleTrace {
			return w.Message
		}
	}
	return ""
}
