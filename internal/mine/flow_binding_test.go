package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// flowStep is step index of a two-example candidate whose examples
// recorded output and observed (JSON, "" for none).
func flowStep(index int, outputs, observed [2]string) stepView {
	v := stepView{index: index}
	for e := range 2 {
		a := &trace.Action{ID: fmt.Sprintf("s%d-e%d", index, e)}
		if outputs[e] != "" {
			a.Output = decodeAny(outputs[e])
		}
		if observed[e] != "" {
			a.ObservedOutput = decodeAny(observed[e])
		}
		v.actions = append(v.actions, a)
	}
	return v
}

// TestFlowBindingChoosesSource checks which earlier value a field is
// bound to when several hold it in every example: the nearest earlier
// step, then the step's output over its observed output, then the
// shortest JSON path, then the first path in order; and that a value
// equal in the first example only binds nothing.
func TestFlowBindingChoosesSource(t *testing.T) {
	field := []string{canonical("v-one"), canonical("v-two")}
	cases := []struct {
		name  string
		steps []stepView
		want  *candidate.Binding
	}{
		{
			name: "nearest earlier step",
			steps: []stepView{
				flowStep(1, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}, [2]string{}),
				flowStep(2, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}, [2]string{}),
				flowStep(3, [2]string{`{"id":"other"}`, `{"id":"v-two"}`}, [2]string{}),
			},
			want: &candidate.Binding{FromStep: 2, FromField: "output", FromPath: "$.id"},
		},
		{
			name: "output over observed output",
			steps: []stepView{
				flowStep(1, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$.id"},
		},
		{
			name: "output over a shorter path in observed output",
			steps: []stepView{
				flowStep(1, [2]string{`{"deep":{"id":"v-one"}}`, `{"deep":{"id":"v-two"}}`}, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$.deep.id"},
		},
		{
			name: "observed output when the output differs",
			steps: []stepView{
				flowStep(1, [2]string{`{"id":"v-one"}`, `{"id":"x"}`}, [2]string{`{"id":"v-one"}`, `{"id":"v-two"}`}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "observed_output", FromPath: "$.id"},
		},
		{
			name: "shortest path",
			steps: []stepView{
				flowStep(1, [2]string{`{"deep":{"id":"v-one"},"zz":"v-one"}`, `{"deep":{"id":"v-two"},"zz":"v-two"}`}, [2]string{}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$.zz"},
		},
		{
			name: "first path of the same length",
			steps: []stepView{
				flowStep(1, [2]string{`{"b":"v-one","a":"v-one","c":"v-one"}`, `{"b":"v-two","a":"v-two","c":"v-two"}`}, [2]string{}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$.a"},
		},
		{
			name: "inside an array",
			steps: []stepView{
				flowStep(1, [2]string{`{"items":["x","v-one"]}`, `{"items":["y","v-two"]}`}, [2]string{}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$.items[1]"},
		},
		{
			name: "the whole output",
			steps: []stepView{
				flowStep(1, [2]string{`"v-one"`, `"v-two"`}, [2]string{}),
			},
			want: &candidate.Binding{FromStep: 1, FromField: "output", FromPath: "$"},
		},
		{
			name: "equal in the first example only",
			steps: []stepView{
				flowStep(1, [2]string{`{"id":"v-one"}`, `{"id":"v-three"}`}, [2]string{`{"id":"v-one"}`, ``}),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlowIndex(2)
			for _, v := range tc.steps {
				f.add(v)
			}
			got, ok := f.find(field)
			switch {
			case tc.want == nil && ok:
				t.Errorf("bound to %+v, want no binding", got)
			case tc.want != nil && (!ok || got != *tc.want):
				t.Errorf("bound to %+v (%v), want %+v", got, ok, *tc.want)
			}
		})
	}
}

// TestFlowBindingBounds checks that only a bounded part of an output is
// indexed (outputs can be whole files): a value nested deeper than
// flowMaxDepth, or met after flowMaxNodes values, binds nothing, while
// the same value within the bounds does.
func TestFlowBindingBounds(t *testing.T) {
	nested := func(depth int, v string) string {
		return strings.Repeat(`{"k":`, depth) + `"` + v + `"` + strings.Repeat("}", depth)
	}
	long := func(at int, v string) string {
		items := make([]string, flowMaxNodes+10)
		for i := range items {
			items[i] = fmt.Sprintf(`"filler-%d"`, i)
		}
		items[at] = `"` + v + `"`
		return "[" + strings.Join(items, ",") + "]"
	}
	field := []string{canonical("v-one"), canonical("v-two")}
	cases := []struct {
		name      string
		out       func(v string) string
		wantBound bool
	}{
		{"at the depth bound", func(v string) string { return nested(flowMaxDepth, v) }, true},
		{"past the depth bound", func(v string) string { return nested(flowMaxDepth+1, v) }, false},
		// The array itself is the first value counted.
		{"the last value counted", func(v string) string { return long(flowMaxNodes-2, v) }, true},
		{"past the value bound", func(v string) string { return long(flowMaxNodes-1, v) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlowIndex(2)
			f.add(flowStep(1, [2]string{tc.out("v-one"), tc.out("v-two")}, [2]string{}))
			got, ok := f.find(field)
			if ok != tc.wantBound {
				t.Errorf("bound %v (%+v), want bound %v", ok, got, tc.wantBound)
			}
		})
	}
}
