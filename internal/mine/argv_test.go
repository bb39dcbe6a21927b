package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// shell builds an action the way normalized shell commands look: kind
// tool_call, the command head as name, and the argv template in metadata.
func shell(id, name, params, argv string) trace.Action {
	a := act(id, trace.KindToolCall, name, params)
	a.Capabilities = []string{"exec:" + strings.Fields(name)[0]}
	if argv != "" {
		a.Metadata = map[string]any{"argv": decodeAny(argv)}
	}
	return a
}

// bumpTraces are three runs of the same procedure: branch, go get, commit,
// push the branch the first step reported, and a second commit whose
// message varies apart from the first one's. edit changes the actions of
// trace i before it is built.
func bumpTraces(edit func(i int, actions []trace.Action)) []*trace.Trace {
	var traces []*trace.Trace
	for i, v := range []string{"v0.1.0", "v0.2.0", "v0.3.0"} {
		id := fmt.Sprintf("t%d", i)
		branch := shell(id+"-b", "git checkout", `{"b":"deps/`+v+`"}`, `["git","checkout","-b","{b}"]`)
		branch.Output = map[string]any{"branch": "deps/" + v}
		actions := []trace.Action{
			branch,
			shell(id+"-g", "go get", `{"module":"example.com/lib","version":"`+v+`"}`, `["go","get","{module}@{version}"]`),
			shell(id+"-c", "git commit", `{"m":"bump lib to `+v+`"}`, `["git","commit","-m","{m}"]`),
			shell(id+"-p", "git push", `{"arg1":"origin","arg2":"deps/`+v+`"}`, `["git","push","{arg1}","{arg2}"]`),
			shell(id+"-d", "git commit", `{"m":"docs `+fmt.Sprint(i*7)+`"}`, `["git","commit","-m","{m}"]`),
		}
		if edit != nil {
			edit(i, actions)
		}
		traces = append(traces, mk(id, append([]trace.Action{noise(id + "-n")}, actions...)...))
	}
	return traces
}

// TestMineArgvCarried checks that every step keeps the template its
// examples ran, with placeholders that name its argument keys whatever the
// argument became: a parameter (renamed when its key is taken), a
// constant, or a binding to an earlier step's output.
func TestMineArgvCarried(t *testing.T) {
	sel := mustMine(t, bumpTraces(nil), Options{}).Selected()
	if sel == nil || len(sel.Steps) != 5 {
		t.Fatalf("selected %+v, want a 5-step candidate", sel)
	}
	var got [][]string
	for _, st := range sel.Steps {
		got = append(got, st.Argv)
	}
	want := [][]string{
		{"git", "checkout", "-b", "{b}"},
		{"go", "get", "{module}@{version}"},
		{"git", "commit", "-m", "{m}"},
		{"git", "push", "{arg1}", "{arg2}"},
		{"git", "commit", "-m", "{m}"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	arg := func(step int, key string) candidate.Argument {
		for _, a := range sel.Steps[step-1].Arguments {
			if a.Key == key {
				return a
			}
		}
		t.Fatalf("step %d has no argument %s", step, key)
		return candidate.Argument{}
	}
	if a := arg(2, "module"); a.Kind != candidate.ArgConstant {
		t.Errorf("step 2 module = %+v, want a constant", a)
	}
	if a := arg(4, "arg2"); a.Kind != candidate.ArgBinding || a.Binding.FromStep != 1 {
		t.Errorf("step 4 arg2 = %+v, want a binding to step 1", a)
	}
	if a, b := arg(3, "m"), arg(5, "m"); a.Parameter != "m" || b.Parameter != "m_step5" {
		t.Errorf("m parameters = %q, %q; want m, m_step5", a.Parameter, b.Parameter)
	}
	if diff := cmp.Diff([]string{"exec:git", "exec:go"}, sel.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	for _, w := range sel.Warnings {
		if strings.Contains(w.Code, "argv") {
			t.Errorf("unexpected warning %+v", w)
		}
	}
}

// TestMineArgvCapability checks that a step running a program gets its
// exec capability even when the traces did not record one.
func TestMineArgvCapability(t *testing.T) {
	traces := bumpTraces(func(_ int, actions []trace.Action) {
		for i := range actions {
			actions[i].Capabilities = nil
		}
	})
	sel := mustMine(t, traces, Options{}).Selected()
	if diff := cmp.Diff([]string{"exec:go"}, sel.Steps[1].Capabilities); diff != "" {
		t.Errorf("step 2 capabilities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"exec:git", "exec:go"}, sel.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
}

// TestMineArgvProblems checks that a step whose examples do not agree on
// one well-formed template gets none, and a warning naming the step (and,
// where one example is at fault, its trace and JSON path).
func TestMineArgvProblems(t *testing.T) {
	tests := []struct {
		name string
		edit func(i int, actions []trace.Action)
		want candidate.Problem
	}{{
		name: "disagree",
		edit: func(i int, actions []trace.Action) {
			if i == 2 {
				actions[0].Metadata["argv"] = decodeAny(`["git","checkout","-B","{b}"]`)
			}
		},
		want: candidate.Problem{Code: candidate.CodeDivergentArgv, Step: 1, TraceID: "t2", Path: "$.actions[1].metadata.argv",
			Message: `step 1 git checkout: action t2-b ran ["git" "checkout" "-B" "{b}"], but action t0-b of trace t0 ran ["git" "checkout" "-b" "{b}"]; the step has no argv template and runs only through a binding`},
	}, {
		name: "some recorded none",
		edit: func(i int, actions []trace.Action) {
			if i == 1 {
				actions[0].Metadata = nil
			}
		},
		want: candidate.Problem{Code: candidate.CodeDivergentArgv, Step: 1,
			Message: "step 1 git checkout: 2 of 3 examples recorded an argv template; the step has no argv template and runs only through a binding"},
	}, {
		name: "not strings",
		edit: func(i int, actions []trace.Action) {
			if i == 0 {
				actions[0].Metadata["argv"] = decodeAny(`["git","checkout",3]`)
			}
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: "step 1 git checkout: action t0-b: element 2 is number, not a string; the step has no argv template and runs only through a binding"},
	}, {
		name: "not a list",
		edit: func(i int, actions []trace.Action) {
			actions[0].Metadata["argv"] = "git checkout -b x"
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: "step 1 git checkout: action t0-b: metadata.argv is string, not a list of strings; the step has no argv template and runs only through a binding"},
	}, {
		name: "unknown placeholder",
		edit: func(i int, actions []trace.Action) {
			actions[0].Metadata["argv"] = decodeAny(`["git","checkout","-b","{branch}"]`)
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: `step 1 git checkout: action t0-b: "{branch}" names {branch}, which is not a parameter of the action; the step has no argv template and runs only through a binding`},
	}, {
		name: "program placeholder",
		edit: func(i int, actions []trace.Action) {
			actions[0].Metadata["argv"] = decodeAny(`["{b}","checkout"]`)
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: `step 1 git checkout: action t0-b: the program "{b}" is a placeholder; it must be literal; the step has no argv template and runs only through a binding`},
	}, {
		name: "secret placeholder",
		edit: func(i int, actions []trace.Action) {
			actions[0].Metadata["argv"] = decodeAny(`["git","checkout","-b","{secret:TOKEN}"]`)
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: `step 1 git checkout: action t0-b: "{secret:TOKEN}" names a secret; pass it as a parameter instead; the step has no argv template and runs only through a binding`},
	}, {
		name: "empty",
		edit: func(i int, actions []trace.Action) {
			actions[0].Metadata["argv"] = decodeAny(`[]`)
		},
		want: candidate.Problem{Code: candidate.CodeInvalidArgv, Step: 1, TraceID: "t0", Path: "$.actions[1].metadata.argv",
			Message: "step 1 git checkout: action t0-b: metadata.argv names no program; the step has no argv template and runs only through a binding"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := mustMine(t, bumpTraces(tt.edit), Options{}).Selected()
			if sel == nil {
				t.Fatal("no candidate")
			}
			if sel.Steps[0].Argv != nil {
				t.Errorf("step 1 argv = %q, want none", sel.Steps[0].Argv)
			}
			if sel.Steps[1].Argv == nil {
				t.Error("step 2 lost its argv")
			}
			var got []candidate.Problem
			for _, w := range sel.Warnings {
				if strings.Contains(w.Code, "argv") {
					got = append(got, w)
				}
			}
			if diff := cmp.Diff([]candidate.Problem{tt.want}, got); diff != "" {
				t.Errorf("argv warnings (-want +got):\n%s", diff)
			}
		})
	}
}
