package mine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestBranchArgument checks which argument names the branch a step
// creates, so that its run first checks the branch does not exist: -b or
// --branch of git checkout, -c or --create of git switch, and none for
// any other step or a switch to an existing branch.
func TestBranchArgument(t *testing.T) {
	step := func(name string, keys ...string) *candidate.Step {
		s := &candidate.Step{Name: name}
		for _, k := range keys {
			s.Arguments = append(s.Arguments, candidate.Argument{Key: k})
		}
		return s
	}
	for _, tt := range []struct {
		step *candidate.Step
		want string
	}{
		{step("git checkout", "b"), "b"},
		{step("git checkout", "branch"), "branch"},
		{step("git checkout", "arg1"), ""},
		{step("git switch", "c"), "c"},
		{step("git switch", "create"), "create"},
		{step("git switch", "arg1"), ""},
		{step("git branch", "c"), ""},
	} {
		if got := branchArgument(tt.step); got != tt.want {
			t.Errorf("%s %v: %q, want %q", tt.step.Name, tt.step.Arguments, got, tt.want)
		}
	}
}

// TestShapeChecksReadMembers checks what a step that binds to an earlier
// step's output checks of it before it runs: the first member of each
// path it reads, with the type every example recorded; nothing for a
// binding to the whole output or to an observed output, and no type for
// a member some example lacks or recorded with another type.
func TestShapeChecksReadMembers(t *testing.T) {
	earlier := stepView{index: 1, actions: []*trace.Action{
		{Output: decodeAny(`{"branch":"b1","meta":{"sha":"x"},"items":[1],"size":1,"maybe":"m"}`)},
		{Output: decodeAny(`{"branch":"b2","meta":{"sha":"y"},"items":[2],"size":"big"}`)},
	}}
	bind := func(field, path string) candidate.Argument {
		return candidate.Argument{Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromField: field, FromPath: path}}
	}
	for _, tt := range []struct {
		name string
		args []candidate.Argument
		want []candidate.Check
	}{
		{"members read", []candidate.Argument{bind("output", "$.branch"), bind("output", "$.meta.sha"), bind("output", "$.items[0]"), bind("output", "$.meta.other")},
			[]candidate.Check{{Kind: candidate.CheckOutputShape, Step: 1, Shape: map[string]string{"branch": "string", "meta": "object", "items": "array"}}}},
		{"the whole output", []candidate.Argument{bind("output", "$"), bind("output", "$[0]")}, nil},
		{"an observed output", []candidate.Argument{bind("observed_output", "$.branch")}, nil},
		{"a parameter", []candidate.Argument{{Kind: candidate.ArgParameter, Key: "branch"}}, nil},
		{"types differ or a member is missing", []candidate.Argument{bind("output", "$.size"), bind("output", "$.maybe")}, nil},
	} {
		got := shapeChecks(&candidate.Step{Arguments: tt.args}, []stepView{earlier})
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: checks (-want +got):\n%s", tt.name, diff)
		}
	}
}
