package codegen

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func derivedCandidate(expr string) *candidate.Candidate {
	return &candidate.Candidate{
		ID: "c", Name: "bump",
		Parameters: []candidate.Parameter{
			{Name: "module", Required: true}, {Name: "version", Required: true},
		},
		DerivedParameters: []candidate.DerivedParameter{{
			Parameter:  candidate.Parameter{Name: "branch", Required: true},
			Expression: expr,
		}},
		Steps: []candidate.Step{{
			Index: 1, Kind: trace.KindToolCall, Name: "git checkout",
			Arguments: []candidate.Argument{{Key: "b", Kind: candidate.ArgParameter, Parameter: "branch"}},
		}},
	}
}

// A derived parameter is assigned before the first step, leaves the
// signature, and the step call still names it.
func TestDerivedPrologue(t *testing.T) {
	src, err := Workflow(derivedCandidate(`"deps/" + module.split("/")[-1] + "-" + version`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"def bump(ctx, module, version):\n",
		`    branch = "deps/" + module.split("/")[-1] + "-" + version` + "\n",
		`ctx.tool("git checkout", b = branch)`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("workflow lacks %q:\n%s", want, src)
		}
	}
	if strings.Index(string(src), "branch = ") > strings.Index(string(src), "ctx.tool(") {
		t.Errorf("derived parameter assigned after the first step:\n%s", src)
	}
	if err := Check("workflow.star", src, "bump"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// An expression outside the language, or reading a name that is not a
// parameter, is refused with its JSON path; nothing is written.
func TestDerivedErrors(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`module + __import__("os")`, "$.derived_parameters[0].expression"},
		{`module; fail()`, "$.derived_parameters[0].expression"},
		{`branch + "x"`, `reads "branch"`},
		{`ctx.name`, "$.derived_parameters[0].expression"},
	} {
		_, err := Workflow(derivedCandidate(tt.expr), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Workflow(%q) = %v, want an error containing %q", tt.expr, err, tt.want)
		}
	}
}

// Replacing a ctx.model call by code makes the header count one model
// call fewer and one deterministic step more.
func TestRefreshHeader(t *testing.T) {
	c := &candidate.Candidate{ID: "c", Name: "triage", Confidence: 0.75, Steps: []candidate.Step{
		{Index: 1, Kind: trace.KindToolCall, Name: "get", Segment: candidate.Deterministic},
		{Index: 2, Kind: trace.KindModelCall, Name: "classify", Segment: candidate.Fuzzy},
	}}
	src, err := Workflow(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "deterministic steps: 1 of 2 · remaining model calls per run: 1") {
		t.Fatalf("generated header:\n%s", src)
	}
	replaced := strings.Replace(string(src), `ctx.model("classify"`, `classify_fn("classify"`, 1)
	replaced = strings.Replace(replaced, "def triage(", "def classify_fn(*args, **kwargs):\n    return None\n\ndef triage(", 1)
	got, ok, err := RefreshHeader([]byte(replaced))
	if err != nil || !ok {
		t.Fatalf("RefreshHeader = %v, %v", ok, err)
	}
	if !strings.Contains(string(got), "# confidence: 0.75 · deterministic steps: 2 of 2 · remaining model calls per run: 0\n") {
		t.Errorf("refreshed header:\n%s", got)
	}
	if again, _, _ := RefreshHeader(got); string(again) != string(got) {
		t.Errorf("RefreshHeader is not idempotent:\n%s", again)
	}
	if _, ok, err := RefreshHeader([]byte("def f(ctx):\n    pass\n")); ok || err != nil {
		t.Errorf("RefreshHeader of a workflow without a header = %v, %v; want false, nil", ok, err)
	}
}
