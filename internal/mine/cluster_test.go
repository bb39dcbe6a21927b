package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestArtifactTypeFromKind checks the artifact type a side effect
// without an explicit one is counted under in a cluster: the family of
// its kind, a file's extension unless it is a placeholder, the kind
// itself otherwise, and "unknown" for none.
func TestArtifactTypeFromKind(t *testing.T) {
	for _, tt := range []struct {
		se   trace.SideEffect
		want string
	}{
		{trace.SideEffect{Kind: "file_write", Target: "notes/v1.md"}, "file:md"},
		{trace.SideEffect{Kind: "File", Target: "Makefile"}, "file"},
		{trace.SideEffect{Kind: "file_write", Target: "out.{ext}"}, "file"},
		{trace.SideEffect{Kind: "effect_receipt"}, "receipt"},
		{trace.SideEffect{Kind: "npm_publish"}, "package_publish"},
		{trace.SideEffect{Kind: "HTTP_Request"}, "http_request"},
		{trace.SideEffect{}, "unknown"},
	} {
		if got := artifactType(tt.se); got != tt.want {
			t.Errorf("artifactType(%+v) = %q, want %q", tt.se, got, tt.want)
		}
	}
}

// TestClusterGoal checks the goal a cluster is named by: the examples'
// stated goal, or their workflow id when they state none, and only when
// at least half of the examples share it (a per-run goal describes one
// run, not the procedure).
func TestClusterGoal(t *testing.T) {
	run := func(goal, workflow string) *trace.Trace {
		t := &trace.Trace{WorkflowID: workflow, Metadata: map[string]any{}}
		if goal != "" {
			t.Metadata["goal"] = goal
		}
		return t
	}
	for _, tt := range []struct {
		name   string
		traces []*trace.Trace
		want   string
	}{
		{"stated by all", []*trace.Trace{run("release", ""), run("release", "wf")}, "release"},
		{"workflow id", []*trace.Trace{run("", "nightly"), run("", "nightly"), run("other", "")}, "nightly"},
		{"half share it, first of a tie", []*trace.Trace{run("release", ""), run("bump x", "")}, "bump x"},
		{"fewer than half", []*trace.Trace{run("a", ""), run("b", ""), run("c", "")}, ""},
		{"none stated", []*trace.Trace{run("", ""), run("", "")}, ""},
	} {
		if got := clusterKey(tt.traces, nil).Goal; got != tt.want {
			t.Errorf("%s: goal %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestConsensusOutputShape checks when a step's recorded outputs are of
// one shape: lists whose elements differ only in values or number are,
// lists holding elements of another shape are not.
func TestConsensusOutputShape(t *testing.T) {
	step := func(outputs ...string) stepView {
		v := stepView{index: 1}
		for _, o := range outputs {
			v.actions = append(v.actions, &trace.Action{Output: decodeAny(o)})
		}
		return v
	}
	for _, tt := range []struct {
		name       string
		v          stepView
		consistent bool
	}{
		{"values differ", step(`{"files":[{"path":"a"}]}`, `{"files":[{"path":"b"},{"path":"c"}]}`), true},
		{"element shapes differ", step(`{"files":[{"path":"a"}]}`, `{"files":[{"path":"a","size":1}]}`), false},
		{"element types differ", step(`["a"]`, `[1]`), false},
	} {
		_, recorded, consistent := consensusOutput(tt.v)
		if !recorded || consistent != tt.consistent {
			t.Errorf("%s: recorded %v, consistent %v; want recorded, consistent %v", tt.name, recorded, consistent, tt.consistent)
		}
	}
}
